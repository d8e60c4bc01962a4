package engine

import (
	"strings"
)

// This file holds the setters of the session's mutable settings. Each
// setter bumps the settings version; runs already under way keep the
// snapshot they took.

// Model returns the current model (nil when none). (actor)
func (s *Session) Model() *Model { return s.set.model }

// ThinkingLevel returns the current thinking level. (actor)
func (s *Session) ThinkingLevel() ThinkingLevel { return s.set.thinking }

// Tools returns the current tool set; the slice must not be modified.
// (actor)
func (s *Session) Tools() []Tool { return s.set.tools }

// setModel selects a model, records a model_change entry, and clamps the
// thinking level to what the model supports (recording the change, if
// any). The next model call uses it; the hooks are told the source of the
// change ("set" for SelectModel). (actor)
func (s *Session) setModel(m Model, source string) {
	prev := s.set.model
	s.set.model = &m
	s.set.version++
	s.appendEntry(&Entry{Type: EntryModelChange, Model: m.Provider + "/" + m.ID})
	if l := s.cfg.Thinking.Clamp(m, s.set.thinking); l != s.set.thinking {
		prevLevel := s.set.thinking
		s.set.thinking = l
		s.appendEntry(&Entry{Type: EntryThinkingLevelChange, ThinkingLevel: l})
		s.observe(SessionEvent{Kind: ThinkingSelect, Level: l, PreviousLevel: prevLevel})
	}
	s.observe(SessionEvent{Kind: ModelSelect, Model: &m, Previous: prev, Source: source})
}

// SetThinkingLevel sets the thinking level as set_thinking_level does
// (rpc-protocol §4.14): "inherit" or "" unsets it, "off" stays off, an
// effort is clamped to the model (a model without reasoning has no level;
// an unknown string on a model unsets it); with no model the string is kept
// as given. A thinking_level_change entry records an actual change only.
// It returns the level in effect. (actor)
func (s *Session) SetThinkingLevel(l ThinkingLevel) ThinkingLevel {
	switch {
	case l == "inherit":
		l = ""
	case s.set.model != nil:
		l = s.cfg.Thinking.Clamp(*s.set.model, l)
	}
	if l == s.set.thinking {
		return l
	}
	prev := s.set.thinking
	s.set.thinking = l
	s.set.version++
	s.appendEntry(&Entry{Type: EntryThinkingLevelChange, ThinkingLevel: l})
	s.observe(SessionEvent{Kind: ThinkingSelect, Level: l, PreviousLevel: prev})
	return l
}

// CycleThinkingLevel moves to the next level of the model's cycle and
// returns it; ok is false (nothing changes) without a reasoning model.
// (actor)
func (s *Session) CycleThinkingLevel() (ThinkingLevel, bool) {
	if s.set.model == nil {
		return "", false
	}
	next, ok := NextThinkingLevel(s.cfg.Thinking, *s.set.model, s.set.thinking)
	if !ok {
		return "", false
	}
	return s.SetThinkingLevel(next), true
}

// setTools replaces the tool set offered to the model from its next call
// (set_host_tools); a call already streaming keeps the set it was offered.
// (actor)
func (s *Session) setTools(tools []Tool) {
	s.set.tools = append([]Tool(nil), tools...)
	s.set.version++
}

// SetActiveTools replaces the tool set offered to the model, as setTools
// does, and rebuilds the system prompt for it (Config.RebuildPrompt), as
// set_host_tools does. (actor)
func (s *Session) SetActiveTools(tools []Tool) {
	s.setTools(tools)
	s.rebuildPrompt()
}

// setSystemPrompt replaces the system prompt from the next model call.
// (actor)
func (s *Session) setSystemPrompt(p string) {
	s.set.systemPrompt = p
	s.set.version++
}

// recordedModel returns the provider and id of the model the current
// branch last used (its last model_change, or an assistant message after
// it), as switch_session and --resume restore it. ok is false when the
// branch names none. (actor)
func (s *Session) recordedModel() (provider, id string, ok bool) {
	branch := s.rec.branch(s.rec.leaf)
	for i := len(branch) - 1; i >= 0; i-- {
		e := branch[i]
		switch {
		case e.Type == EntryModelChange:
			p, m, found := strings.Cut(e.Model, "/")
			return p, m, found
		case e.Type == EntryMessage:
			if a, isA := e.Message.(*AssistantMessage); isA && a.Provider != "" {
				return a.Provider, a.Model, true
			}
		}
	}
	return "", "", false
}

// recordedThinkingLevel returns the level of the branch's last
// thinking_level_change; ok is false when there is none. (actor)
func (s *Session) recordedThinkingLevel() (ThinkingLevel, bool) {
	branch := s.rec.branch(s.rec.leaf)
	for i := len(branch) - 1; i >= 0; i-- {
		if branch[i].Type == EntryThinkingLevelChange {
			return branch[i].ThinkingLevel, true
		}
	}
	return "", false
}

// restoreRecorded applies the model and thinking level the current
// branch last used, as a resumed or switched-to session restores them (one
// rule for start-up and switch_session): the recorded model when the
// catalog has it with a key, else the current one (kept too when
// keepModel); the recorded level when there is one, else the current one
// (kept too when keepThinking); the level clamped to the model. Nothing is
// recorded again. (actor)
func (s *Session) restoreRecorded(keepModel, keepThinking bool) {
	level, has := s.recordedThinkingLevel()
	if keepThinking || !has {
		level = s.set.thinking
	}
	model := s.set.model
	if !keepModel && s.cfg.Models != nil {
		if p, id, ok := s.recordedModel(); ok {
			if m, found := s.cfg.Models.Find(p, id); found && s.cfg.Models.HasKey(m) {
				model = &m
			}
		}
	}
	if model != nil {
		level = s.cfg.Thinking.Clamp(*model, level)
	}
	prevModel, prevLevel := s.set.model, s.set.thinking
	s.set.model, s.set.thinking = model, level
	s.set.version++
	if model != nil && (prevModel == nil || prevModel.Provider != model.Provider || prevModel.ID != model.ID) {
		s.observe(SessionEvent{Kind: ModelSelect, Model: model, Previous: prevModel, Source: "restore"})
	}
	if level != prevLevel {
		s.observe(SessionEvent{Kind: ThinkingSelect, Level: level, PreviousLevel: prevLevel})
	}
}
