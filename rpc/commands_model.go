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
