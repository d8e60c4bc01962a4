package engine

import "encoding/json"

// Model is the registry description of a model, with the JSON shape of the
// original's Model object (get_state.model, get_available_models).
type Model struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	BaseURL       string    `json:"baseUrl"`
	Reasoning     bool      `json:"reasoning"`
	Input         []string  `json:"input"`
	Cost          ModelCost `json:"cost"`
	ContextWindow int       `json:"contextWindow"`
	// MaxContextWindow, when above ContextWindow, is the largest window
	// the model may grow to (its trained context): a model a local server
	// runs starts with a window that fits the machine, ContextWindow, and
	// the session doubles it when the conversation needs more (window.go).
	// 0 for a model whose window is what it is.
	MaxContextWindow int               `json:"maxContextWindow,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	Headers          map[string]string `json:"headers,omitempty"`
	Thinking         *ModelThinking    `json:"thinking,omitempty"`
	// Compat holds an API's quirks as configured (models.yml "compat":
	// thinkingFormat, maxTokensField, supportsUsageInStreaming, ...). The
	// engine passes it through untouched; the adapter of Model.API reads it.
	Compat json.RawMessage `json:"compat,omitempty"`
}

// ModelCost is dollars per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// ModelThinking is the supported reasoning range of a model.
type ModelThinking struct {
	MinLevel ThinkingLevel `json:"minLevel"`
	MaxLevel ThinkingLevel `json:"maxLevel"`
	Mode     string        `json:"mode"`
}

// ThinkingLevel is a session's reasoning selector. The empty value means
// "unset" (no reasoning parameter; get_state omits the field).
type ThinkingLevel string

// The thinking levels, in increasing order of effort after ThinkingOff.
const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh"
)

var efforts = []ThinkingLevel{ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh}

func effortRank(l ThinkingLevel) int {
	for i, e := range efforts {
		if e == l {
			return i
		}
	}
	return -1
}

// ParseEffort reports whether s names a reasoning effort (minimal..xhigh).
func ParseEffort(s string) (ThinkingLevel, bool) {
	l := ThinkingLevel(s)
	return l, effortRank(l) >= 0
}

// ClampThinking maps a requested level onto what m supports, as the
// original does: off stays off; a non-reasoning model has no level; an
// effort is kept when supported, else lowered to the highest supported level
// below it, else raised to the lowest supported one. Unknown strings give "".
func ClampThinking(m Model, l ThinkingLevel) ThinkingLevel {
	if l == ThinkingOff {
		return ThinkingOff
	}
	r := effortRank(l)
	if r < 0 || !m.Reasoning {
		return ""
	}
	lo, hi := 0, len(efforts)-1
	if m.Thinking != nil {
		if x := effortRank(m.Thinking.MinLevel); x >= 0 {
			lo = x
		}
		if x := effortRank(m.Thinking.MaxLevel); x >= 0 {
			hi = x
		}
	}
	switch {
	case r < lo:
		return efforts[lo]
	case r > hi:
		return efforts[hi]
	}
	return l
}

// SupportedEfforts lists the efforts a model accepts, in increasing order:
// none for a non-reasoning model, else its thinking range (all efforts
// when it declares none).
func SupportedEfforts(m Model) []ThinkingLevel {
	if !m.Reasoning {
		return nil
	}
	lo, hi := 0, len(efforts)-1
	if m.Thinking != nil {
		if x := effortRank(m.Thinking.MinLevel); x >= 0 {
			lo = x
		}
		if x := effortRank(m.Thinking.MaxLevel); x >= 0 {
			hi = x
		}
	}
	if lo > hi {
		return nil
	}
	return append([]ThinkingLevel(nil), efforts[lo:hi+1]...)
}

// ThinkingPolicy says which efforts a model supports and how a requested
// level maps onto them. The default (RangePolicy) uses the model's declared
// range; cmd/xcsh wires the registry's per-family rules (agent-core §9.2),
// which know models whose efforts are not a range.
type ThinkingPolicy interface {
	SupportedEfforts(m Model) []ThinkingLevel
	Clamp(m Model, l ThinkingLevel) ThinkingLevel
}

// RangePolicy is the ThinkingPolicy of ClampThinking and SupportedEfforts.
type RangePolicy struct{}

// SupportedEfforts implements ThinkingPolicy.
func (RangePolicy) SupportedEfforts(m Model) []ThinkingLevel { return SupportedEfforts(m) }

// Clamp implements ThinkingPolicy.
func (RangePolicy) Clamp(m Model, l ThinkingLevel) ThinkingLevel { return ClampThinking(m, l) }

// NextThinkingLevel is cycle_thinking_level's step (agent-core §9.3): over
// ["off", supported efforts...], from the current level ("inherit" counts
// as off; an unset level starts at off). ok is false for a model without
// reasoning.
func NextThinkingLevel(p ThinkingPolicy, m Model, cur ThinkingLevel) (next ThinkingLevel, ok bool) {
	order := append([]ThinkingLevel{ThinkingOff}, p.SupportedEfforts(m)...)
	if len(order) == 1 {
		return "", false
	}
	if cur == "" {
		return ThinkingOff, true
	}
	if cur == "inherit" {
		cur = ThinkingOff
	}
	i := 0
	for j, l := range order {
		if l == cur {
			i = j
			break
		}
	}
	return order[(i+1)%len(order)], true
}
