package engine

// The model verbs (set_model, cycle_model, get_available_models) for every
// front. The thinking verbs are SetThinkingLevel and CycleThinkingLevel
// (settings.go); the restore rule of a resumed session is restoreRecorded.

// AvailableModels lists the models a host may select (never nil).
func (s *Session) AvailableModels() []Model {
	if s.cfg.Models == nil {
		return []Model{}
	}
	if ms := s.cfg.Models.Available(); ms != nil {
		return ms
	}
	return []Model{}
}

// SelectModel selects the available model with exactly this provider and
// id; it applies from the next model call (also during a run). A model
// that is not available, or whose provider has no key, fails with a
// *ModelError. (actor)
func (s *Session) SelectModel(provider, id string) (Model, error) {
	for _, m := range s.AvailableModels() {
		if m.Provider != provider || m.ID != id {
			continue
		}
		if !s.cfg.Models.HasKey(m) {
			return Model{}, &ModelError{Provider: provider, ID: id, NoKey: true}
		}
		s.setModel(m, "set")
		return m, nil
	}
	return Model{}, &ModelError{Provider: provider, ID: id}
}

// ModelCycle is where CycleModel moved: the model, the thinking level in
// force, and whether the --models scope was walked (the cycle_model
// payload).
type ModelCycle struct {
	Model         Model         `json:"model"`
	ThinkingLevel ThinkingLevel `json:"thinkingLevel,omitempty"`
	IsScoped      bool          `json:"isScoped"`
}

// CycleModel moves to the model after the current one among the scoped
// models that have a key, or else among the available ones (the first
// when the current model is not among them); a scoped entry's thinking
// level applies with it. ok is false, and nothing changes, with fewer than
// two candidates. (actor)
func (s *Session) CycleModel() (c ModelCycle, ok bool) {
	var cands []ScopedModel
	if s.cfg.Models != nil {
		for _, sm := range s.cfg.Scoped {
			if s.cfg.Models.HasKey(sm.Model) {
				cands = append(cands, sm)
			}
		}
	}
	scoped := len(cands) > 0
	if !scoped {
		for _, m := range s.AvailableModels() {
			cands = append(cands, ScopedModel{Model: m})
		}
	}
	if len(cands) < 2 {
		return ModelCycle{}, false
	}
	next := cands[0]
	if cur := s.set.model; cur != nil {
		for j, sm := range cands {
			if sm.Model.Provider == cur.Provider && sm.Model.ID == cur.ID {
				next = cands[(j+1)%len(cands)]
				break
			}
		}
	}
	s.setModel(next.Model, "cycle")
	if scoped && next.Thinking != "" {
		s.SetThinkingLevel(next.Thinking)
	}
	return ModelCycle{Model: next.Model, ThinkingLevel: s.set.thinking, IsScoped: scoped}, true
}
