package rpc

import (
	"encoding/json"
	"fmt"

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

// Models is the model registry as the model commands see it; cmd/xcsh
// wires engine/models into it. Both methods must be safe for concurrent
// use (discovery adds models in the background).
type Models interface {
	// Available lists the models a host may select: keyless providers or
	// providers with a key, in registry order.
	Available() []engine.Model
	// HasKey reports whether m's provider can be called (a key, or none
	// needed).
	HasKey(m engine.Model) bool
}

// ScopedModel is one entry of --models: a model and, optionally, the
// thinking level cycling to it applies.
type ScopedModel struct {
	Model    engine.Model
	Thinking engine.ThinkingLevel // "": keep the session's level, clamped
}

func (s *Server) available() []engine.Model {
	if s.opts.Models == nil {
		return nil
	}
	return s.opts.Models.Available()
}

// cmdGetAvailableModels answers {"models":[…]} (an empty list, never null).
func (s *Server) cmdGetAvailableModels(c *command) {
	models := s.available()
	if models == nil {
		models = []engine.Model{}
	}
	s.okJSON(c, struct {
		Models []engine.Model `json:"models"`
	}{models})
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
	for _, m := range s.available() {
		if m.Provider != provider || m.ID != id {
			continue
		}
		if !s.opts.Models.HasKey(m) {
			s.fail(c, fmt.Errorf("%w for %s/%s", errNoAPIKey, provider, id))
			return
		}
		s.sess.SetModel(m)
		s.okJSON(c, m)
		return
	}
	s.fail(c, fmt.Errorf("%w: %s/%s", errModelNotFound, provider, id))
}

// cmdCycleModel moves to the next of the scoped models (those with a key)
// or else of the available ones; null with fewer than two candidates.
func (s *Server) cmdCycleModel(c *command) {
	var cands []ScopedModel
	scoped := false
	for _, sm := range s.opts.Scoped {
		if s.opts.Models != nil && s.opts.Models.HasKey(sm.Model) {
			cands = append(cands, sm)
		}
	}
	if len(cands) > 0 {
		scoped = true
	} else {
		for _, m := range s.available() {
			cands = append(cands, ScopedModel{Model: m})
		}
	}
	if len(cands) < 2 {
		s.ok(c, []byte("null"))
		return
	}
	// The one after the current model; the first when the current model is
	// not among the candidates.
	next := cands[0]
	if cur := s.sess.Model(); cur != nil {
		for j, sm := range cands {
			if sm.Model.Provider == cur.Provider && sm.Model.ID == cur.ID {
				next = cands[(j+1)%len(cands)]
				break
			}
		}
	}
	s.sess.SetModel(next.Model)
	if scoped && next.Thinking != "" {
		s.sess.SetThinkingLevel(next.Thinking)
	}
	s.okJSON(c, struct {
		Model         engine.Model         `json:"model"`
		ThinkingLevel engine.ThinkingLevel `json:"thinkingLevel,omitempty"`
		IsScoped      bool                 `json:"isScoped"`
	}{next.Model, s.sess.ThinkingLevel(), scoped})
}
