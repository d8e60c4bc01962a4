package models

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// The reasoning efforts in increasing order (engine.ThinkingLevel minus off).
var efforts = []engine.ThinkingLevel{
	engine.ThinkingMinimal, engine.ThinkingLow, engine.ThinkingMedium, engine.ThinkingHigh, engine.ThinkingXHigh,
}

func effortRank(l engine.ThinkingLevel) int {
	for i, e := range efforts {
		if e == l {
			return i
		}
	}
	return -1
}

func effortRange(lo, hi engine.ThinkingLevel) []engine.ThinkingLevel {
	return efforts[effortRank(lo) : effortRank(hi)+1]
}

// The thinking modes of agent-core §10.1.
const (
	modeEffort          = "effort"
	modeBudget          = "budget"
	modeGoogleLevel     = "google-level"
	modeAnthropicAdapt  = "anthropic-adaptive"
	modeAnthropicBudget = "anthropic-budget-effort"
)

var thinkingModes = []string{modeEffort, modeBudget, modeGoogleLevel, modeAnthropicAdapt, modeAnthropicBudget}

var (
	gptRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gpt-(\d+)(?:\.(\d+))?(?:-|$)`) })
	geminiRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gemini-(\d+)(?:\.(\d+))?(?:-|$)`) })
	// Claude ids appear bare (claude-opus-4-6), dated
	// (claude-sonnet-4-5-20250929) and prefixed (Bedrock's
	// anthropic.claude-opus-4-6-v1:0). The minor version has one or two
	// digits, so a date is never read as one.
	claudeRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[./])claude-(opus|sonnet)-(\d+)(?:-(\d{1,2}))?(?:$|[-@:])`)
	})
)

// bareID drops an aggregator's vendor prefix (openrouter's openai/gpt-5).
func bareID(id string) string {
	id = strings.ToLower(id)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return id
}

// claudeAdaptive reports whether m is an opus or sonnet Claude of version
// 4.6 or later on the Anthropic or Bedrock API, and which of the two.
func claudeAdaptive(m engine.Model) (family string, ok bool) {
	c := claudeRE().FindStringSubmatch(strings.ToLower(m.ID))
	if c == nil {
		return "", false
	}
	major, _ := strconv.Atoi(c[2])
	minor, _ := strconv.Atoi(c[3])
	if major < 4 || major == 4 && minor < 6 {
		return c[1], false
	}
	return c[1], m.API == "anthropic-messages" || m.API == "bedrock-converse-stream"
}

// familyEfforts applies the per-family rules of agent-core §9.2. ok is
// false for ids that match no family (haiku, local models...): their
// configured range stands alone.
func familyEfforts(m engine.Model) (set []engine.ThinkingLevel, ok bool) {
	id := bareID(m.ID)
	if g := gptRE().FindStringSubmatch(id); g != nil {
		major, _ := strconv.Atoi(g[1])
		minor, _ := strconv.Atoi(g[2])
		switch {
		case id == "gpt-5.1-codex-mini":
			return effortRange(engine.ThinkingMedium, engine.ThinkingHigh), true
		case major > 5 || major == 5 && minor >= 2:
			return effortRange(engine.ThinkingLow, engine.ThinkingXHigh), true
		}
		return effortRange(engine.ThinkingMinimal, engine.ThinkingHigh), true
	}
	if g := geminiRE().FindStringSubmatch(id); g != nil {
		major, _ := strconv.Atoi(g[1])
		if major >= 3 && strings.Contains(id, "pro") {
			return []engine.ThinkingLevel{engine.ThinkingLow, engine.ThinkingHigh}, true
		}
		return effortRange(engine.ThinkingMinimal, engine.ThinkingHigh), true
	}
	if fam, adaptive := claudeAdaptive(m); fam != "" {
		switch {
		case !adaptive:
			return apiEfforts(m), true
		case fam == "opus":
			return effortRange(engine.ThinkingMinimal, engine.ThinkingXHigh), true
		default:
			return effortRange(engine.ThinkingMinimal, engine.ThinkingHigh), true
		}
	}
	return nil, false
}

// apiEfforts is §9.2's fallback by API.
func apiEfforts(m engine.Model) []engine.ThinkingLevel {
	upToXHigh := effortRange(engine.ThinkingMinimal, engine.ThinkingXHigh)
	switch m.API {
	case "anthropic-messages", "openai-responses", "openai-codex-responses":
		return upToXHigh
	case "openai-completions":
		var c struct {
			ThinkingFormat          string `json:"thinkingFormat"`
			SupportsReasoningEffort bool   `json:"supportsReasoningEffort"`
		}
		if len(m.Compat) > 0 && json.Unmarshal(m.Compat, &c) == nil &&
			c.ThinkingFormat == "openai" && c.SupportsReasoningEffort {
			return upToXHigh
		}
	}
	return effortRange(engine.ThinkingMinimal, engine.ThinkingHigh)
}

// SupportedEfforts lists the reasoning efforts m accepts, in increasing
// order, as agent-core §9.2 defines them: the configured
// thinking.minLevel..maxLevel intersected with the rules of the model's
// family (GPT, Gemini, Claude opus/sonnet). It is nil for a non-reasoning
// model. engine.ClampThinking knows only the contiguous min..max range;
// families with holes (Gemini 3 Pro: low and high) need this list.
//
// A reasoning model without thinking metadata (one that never went through
// a Registry) gets the family's set, else the API fallback. When the
// configured range and the family share no level, the configured range
// wins: the user's file is the later word.
func SupportedEfforts(m engine.Model) []engine.ThinkingLevel {
	if !m.Reasoning {
		return nil
	}
	fam, ok := familyEfforts(m)
	if m.Thinking == nil {
		if !ok {
			fam = apiEfforts(m)
		}
		return append([]engine.ThinkingLevel(nil), fam...)
	}
	lo, hi := 0, len(efforts)-1
	if r := effortRank(m.Thinking.MinLevel); r >= 0 {
		lo = r
	}
	if r := effortRank(m.Thinking.MaxLevel); r >= 0 {
		hi = r
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	configured := efforts[lo : hi+1]
	if !ok {
		return append([]engine.ThinkingLevel(nil), configured...)
	}
	var out []engine.ThinkingLevel
	for _, l := range fam {
		if r := effortRank(l); r >= lo && r <= hi {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return append([]engine.ThinkingLevel(nil), configured...)
	}
	return out
}

// ClampThinking maps a requested level onto SupportedEfforts(m) as the
// original does: off stays off; a non-reasoning model and an unknown string
// give "" (no reasoning parameter); a supported effort is kept; otherwise
// the highest supported effort below the request, else the lowest
// supported one. It agrees with engine.ClampThinking except where a
// family's set has holes or a narrower range than the configured one.
func ClampThinking(m engine.Model, l engine.ThinkingLevel) engine.ThinkingLevel {
	if l == engine.ThinkingOff {
		return engine.ThinkingOff
	}
	r := effortRank(l)
	if r < 0 || !m.Reasoning {
		return ""
	}
	set := SupportedEfforts(m)
	if len(set) == 0 {
		return ""
	}
	best := engine.ThinkingLevel("")
	for _, s := range set {
		if effortRank(s) <= r {
			best = s
		}
	}
	if best == "" {
		best = set[0]
	}
	return best
}

// inferThinking builds the thinking metadata of a reasoning model that
// came without any (custom and discovered models), as the original's
// catalog enrichment does: the family's efforts, else the API fallback,
// and the mode from the API and the family.
func inferThinking(m engine.Model) *engine.ModelThinking {
	set, ok := familyEfforts(m)
	if !ok {
		set = apiEfforts(m)
	}
	return &engine.ModelThinking{MinLevel: set[0], MaxLevel: set[len(set)-1], Mode: inferMode(m)}
}

func inferMode(m engine.Model) string {
	switch m.API {
	case "anthropic-messages", "bedrock-converse-stream":
		if _, adaptive := claudeAdaptive(m); adaptive {
			return modeAnthropicAdapt
		}
		if m.API == "anthropic-messages" {
			return modeAnthropicBudget
		}
		return modeBudget
	case "google-generative-ai", "google-gemini-cli", "google-vertex":
		if g := geminiRE().FindStringSubmatch(bareID(m.ID)); g != nil {
			if major, _ := strconv.Atoi(g[1]); major >= 3 {
				return modeGoogleLevel
			}
		}
		return modeBudget
	}
	return modeEffort
}
