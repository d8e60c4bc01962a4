package rpc

import (
	"encoding/json"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// cmdSetThinkingLevel never fails (rpc-protocol §4.14): a missing or
// non-string level means "inherit"; the engine clamps it to the model.
func (s *Server) cmdSetThinkingLevel(c *command) {
	var level string
	if raw := member(c.line, "level"); raw != nil {
		_ = json.Unmarshal(raw, &level)
	}
	if level == "" {
		level = "inherit"
	}
	s.sess.SetThinkingLevel(engine.ThinkingLevel(level))
	s.ok(c, nil)
}

// cmdCycleThinkingLevel answers {"level":…}, or null for a model without
// reasoning.
func (s *Server) cmdCycleThinkingLevel(c *command) {
	level, ok := s.sess.CycleThinkingLevel()
	if !ok {
		s.ok(c, []byte("null"))
		return
	}
	s.okJSON(c, levelData{level})
}

// cmdGetAvailableModels answers {"models":[…]}.
func (s *Server) cmdGetAvailableModels(c *command) {
	s.okJSON(c, modelsData{s.sess.AvailableModels()})
}

// cmdSetModel selects an available model by exact provider and id; it
// applies from the next model call (also during a run). Missing or
// non-string fields are read as the family's hosts see them in its text
// (JavaScript's String(value): "undefined" when absent), so a host that
// forgot one gets the peers' "Model not found: undefined/undefined".
func (s *Server) cmdSetModel(c *command) {
	provider, id := jsString(member(c.line, "provider")), jsString(member(c.line, "modelId"))
	m, err := s.sess.SelectModel(provider, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.okJSON(c, m)
}

// jsString is JavaScript's String() of a raw JSON value; nil (absent) is
// "undefined".
func jsString(raw []byte) string {
	switch {
	case raw == nil:
		return "undefined"
	case raw[0] == '"':
		var v string
		_ = json.Unmarshal(raw, &v)
		return v
	case raw[0] == '{':
		return "[object Object]"
	case raw[0] == '[':
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items)
		parts := make([]string, len(items))
		for i, it := range items {
			if s := string(it); s != "null" {
				parts[i] = jsString(it)
			}
		}
		return strings.Join(parts, ",")
	}
	return string(raw) // numbers, true, false, null as written
}

// cmdCycleModel answers the model cycled to, or null when there is no
// other.
func (s *Server) cmdCycleModel(c *command) {
	next, ok := s.sess.CycleModel()
	if !ok {
		s.ok(c, []byte("null"))
		return
	}
	s.okJSON(c, next)
}
