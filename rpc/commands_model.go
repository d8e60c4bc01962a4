package rpc

import (
	"encoding/json"

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
	s.okJSON(c, struct {
		Level engine.ThinkingLevel `json:"level"`
	}{level})
}

// cmdGetAvailableModels answers {"models":[…]}.
func (s *Server) cmdGetAvailableModels(c *command) {
	s.okJSON(c, struct {
		Models []engine.Model `json:"models"`
	}{s.sess.AvailableModels()})
}

// cmdSetModel selects an available model by exact provider and id; it
// applies from the next model call (also during a run).
func (s *Server) cmdSetModel(c *command) {
	provider, ok := s.stringArg(c, "provider")
	if !ok {
		return
	}
	id, ok := s.stringArg(c, "modelId")
	if !ok {
		return
	}
	m, err := s.sess.SelectModel(provider, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.okJSON(c, m)
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
