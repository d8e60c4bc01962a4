package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// Script is a parsed and validated script: the turns a Provider replays, one
// per model call. Obtain one with Parse or Load; it is immutable afterwards,
// so one Script may back several providers.
type Script struct {
	name  string // as given to Parse: used in parse errors
	base  string // base name of name: used in runtime errors, stable across directories
	model engine.Model
	loop  bool
	turns []turn
}

// turn is what one model call replays.
type turn struct {
	expect     *expect // nil when the turn checks nothing
	responseID string
	steps      []step
	stopReason engine.StopReason
}

// Load reads and parses the script file at path. The default model id is
// the file's base name without its extension, so transcripts do not depend
// on the directory the script lives in.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("fake script %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse parses script JSON. name is used in error messages, and its base
// name without extension is the default model id.
func Parse(name string, data []byte) (*Script, error) {
	s := &Script{name: name, base: filepath.Base(name)}
	if name == "" {
		s.base = "script"
	}
	id := strings.TrimSuffix(s.base, filepath.Ext(s.base))
	if id == "" {
		id = "script"
	}
	s.model = defaultModel(id)

	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, s.errorf(0, 0, "%w", syntaxError(data, err))
	}
	fields, err := objectFields(raw, "the script")
	if err != nil {
		return nil, s.errorf(0, 0, "%w", err)
	}
	var rawTurns []json.RawMessage
	haveTurns := false
	for _, f := range fields {
		switch f.key {
		case "model":
			if err := s.parseModel(f); err != nil {
				return nil, s.errorf(0, 0, "model: %w", err)
			}
		case "loop":
			if s.loop, err = f.boolean(); err != nil {
				return nil, s.errorf(0, 0, "%w", err)
			}
		case "turns":
			if jsonKind(f.val) != "an array" {
				return nil, s.errorf(0, 0, "\"turns\" must be an array, got %s", jsonKind(f.val))
			}
			if err := json.Unmarshal(f.val, &rawTurns); err != nil {
				return nil, s.errorf(0, 0, "%w", err)
			}
			haveTurns = true
		default:
			return nil, s.errorf(0, 0, "unknown key %q (want model, loop or turns)", f.key)
		}
	}
	if !haveTurns {
		return nil, s.errorf(0, 0, "missing \"turns\"")
	}
	if s.loop && len(rawTurns) == 0 {
		return nil, s.errorf(0, 0, "\"loop\" needs at least one turn")
	}
	s.turns = make([]turn, len(rawTurns))
	for i, rt := range rawTurns {
		if err := s.parseTurn(i+1, rt, &s.turns[i]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// errorf returns a *ScriptError located at turn t, step st (1-based, 0 for none).
func (s *Script) errorf(t, st int, format string, args ...any) error {
	return &ScriptError{Name: s.name, Turn: t, Step: st, Err: fmt.Errorf(format, args...)}
}

func defaultModel(id string) engine.Model {
	return engine.Model{
		ID:            id,
		Name:          "Fake " + id,
		API:           "fake",
		Provider:      "fake",
		Reasoning:     true,
		Input:         []string{"text", "image"},
		ContextWindow: 128000,
		MaxTokens:     16384,
		Thinking:      &engine.ModelThinking{MinLevel: engine.ThinkingMinimal, MaxLevel: engine.ThinkingXHigh, Mode: "effort"},
	}
}

func (s *Script) parseModel(mf field) error {
	fields, err := objectFields(mf.val, `"model"`)
	if err != nil {
		return err
	}
	m := &s.model
	named := false
	for _, f := range fields {
		switch f.key {
		case "id":
			if m.ID, err = f.str(); err != nil {
				return err
			}
			if m.ID == "" {
				return errors.New(`"id" must not be empty`)
			}
		case "name":
			if m.Name, err = f.str(); err != nil {
				return err
			}
			named = true
		case "reasoning":
			if m.Reasoning, err = f.boolean(); err != nil {
				return err
			}
		case "contextWindow":
			if m.ContextWindow, err = f.count(); err != nil {
				return err
			}
		case "maxTokens":
			if m.MaxTokens, err = f.count(); err != nil {
				return err
			}
		case "minThinking", "maxThinking":
			var l string
			if l, err = f.str(); err != nil {
				return err
			}
			lv, ok := engine.ParseEffort(l)
			if !ok {
				return fmt.Errorf("%q must be one of minimal, low, medium, high or xhigh, got %q", f.key, l)
			}
			if m.Thinking == nil {
				m.Thinking = &engine.ModelThinking{MinLevel: engine.ThinkingMinimal, MaxLevel: engine.ThinkingXHigh, Mode: "effort"}
			}
			if f.key == "minThinking" {
				m.Thinking.MinLevel = lv
			} else {
				m.Thinking.MaxLevel = lv
			}
		case "cost":
			if m.Cost, err = parseCost(f); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown key %q (want id, name, reasoning, contextWindow, maxTokens, minThinking, maxThinking or cost)", f.key)
		}
	}
	if !named {
		m.Name = "Fake " + m.ID
	}
	if !m.Reasoning {
		// A model without reasoning has no effort range.
		m.Thinking = nil
	}
	return nil
}

// parseCost reads a model's prices in dollars per million tokens
// ({"input","output","cacheRead","cacheWrite"}, each optional, default 0):
// what usage costs, and what a --max-cost budget counts.
func parseCost(cf field) (engine.ModelCost, error) {
	var c engine.ModelCost
	fields, err := objectFields(cf.val, `"cost"`)
	if err != nil {
		return c, err
	}
	for _, f := range fields {
		var dst *float64
		switch f.key {
		case "input":
			dst = &c.Input
		case "output":
			dst = &c.Output
		case "cacheRead":
			dst = &c.CacheRead
		case "cacheWrite":
			dst = &c.CacheWrite
		default:
			return c, fmt.Errorf("cost: unknown key %q (want input, output, cacheRead or cacheWrite)", f.key)
		}
		if *dst, err = f.price(); err != nil {
			return c, fmt.Errorf("cost: %w", err)
		}
	}
	return c, nil
}

func (s *Script) parseTurn(n int, raw json.RawMessage, t *turn) error {
	fields, err := objectFields(raw, "a turn")
	if err != nil {
		return s.errorf(n, 0, "%w", err)
	}
	var rawSteps []json.RawMessage
	for _, f := range fields {
		switch f.key {
		case "expect":
			if t.expect, err = parseExpect(f); err != nil {
				return s.errorf(n, 0, "expect: %w", err)
			}
		case "responseId":
			if t.responseID, err = f.str(); err != nil {
				return s.errorf(n, 0, "%w", err)
			}
		case "steps":
			if jsonKind(f.val) != "an array" {
				return s.errorf(n, 0, "\"steps\" must be an array, got %s", jsonKind(f.val))
			}
			if err := json.Unmarshal(f.val, &rawSteps); err != nil {
				return s.errorf(n, 0, "%w", err)
			}
		case "stopReason":
			v, err := f.str()
			if err != nil {
				return s.errorf(n, 0, "%w", err)
			}
			switch r := engine.StopReason(v); r {
			case engine.StopStop, engine.StopLength, engine.StopToolUse:
				t.stopReason = r
			default:
				return s.errorf(n, 0, "bad stopReason %q (want stop, length or toolUse)", v)
			}
		default:
			return s.errorf(n, 0, "unknown key %q (want expect, responseId, steps or stopReason)", f.key)
		}
	}
	t.steps = make([]step, len(rawSteps))
	hasTool := false
	for i, rs := range rawSteps {
		st := &t.steps[i]
		if err := parseStep(rs, st); err != nil {
			return s.errorf(n, i+1, "%w", err)
		}
		hasTool = hasTool || st.kind == kindToolCall
	}
	if t.stopReason == "" {
		t.stopReason = engine.StopStop
		if hasTool {
			t.stopReason = engine.StopToolUse
		}
	}
	return nil
}
