package engine

import (
	"fmt"
	"strings"
)

// This file holds the setters of the session's mutable settings and the
// one way the session record changes (appendEntry). Each setter bumps the
// settings version; runs already under way keep the snapshot they took.

// Model returns the current model (nil when none). (actor)
func (s *Session) Model() *Model { return s.set.model }

// ThinkingLevel returns the current thinking level. (actor)
func (s *Session) ThinkingLevel() ThinkingLevel { return s.set.thinking }

// Tools returns the current tool set; the slice must not be modified.
// (actor)
func (s *Session) Tools() []Tool { return s.set.tools }

// SetModel selects a model, records a model_change entry, and clamps the
// thinking level to what the model supports (recording the change, if
// any). The next model call uses it. (actor)
func (s *Session) SetModel(m Model) {
	s.set.model = &m
	s.set.version++
	s.appendEntry(&Entry{Type: EntryModelChange, Model: m.Provider + "/" + m.ID})
	if l := s.cfg.Thinking.Clamp(m, s.set.thinking); l != s.set.thinking {
		s.set.thinking = l
		s.appendEntry(&Entry{Type: EntryThinkingLevelChange, ThinkingLevel: l})
	}
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
	s.set.thinking = l
	s.set.version++
	s.appendEntry(&Entry{Type: EntryThinkingLevelChange, ThinkingLevel: l})
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

// SetTools replaces the tool set offered to the model from its next call
// (set_host_tools); a call already streaming keeps the set it was offered.
// (actor)
func (s *Session) SetTools(tools []Tool) {
	s.set.tools = append([]Tool(nil), tools...)
	s.set.version++
}

// SetSystemPrompt replaces the system prompt from the next model call.
// (actor)
func (s *Session) SetSystemPrompt(p string) {
	s.set.systemPrompt = p
	s.set.version++
}

// SetIdentity changes the session's id and file (new_session,
// switch_session; file "" for an in-memory session). (actor)
func (s *Session) SetIdentity(id, file string) {
	s.set.id, s.set.file = id, file
	s.set.version++
}

// appendEntry is the only mutation of the session record: it mints the
// entry's id and timestamp, makes it the child of the leaf, derives the
// context and hands it to the store, before any event announces it.
// (actor)
func (s *Session) appendEntry(e *Entry) {
	e.ID = s.cfg.IDs.NewID("entry")
	for s.rec.has(e.ID) { // 8 hex digits: collisions are rare, not impossible
		e.ID = s.cfg.IDs.NewID("entry")
	}
	if e.Timestamp == 0 {
		e.Timestamp = s.now()
	}
	s.rec.append(e)
	// The store runs on the executor, so entries reach it in record order;
	// persisting must happen even when the run that produced it was aborted.
	if err := s.cfg.Store.Append(s.storeCtx(), e); err != nil {
		fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
	}
}

// appendMessage records a finished message. (actor)
func (s *Session) appendMessage(m Message) { s.appendEntry(&Entry{Type: EntryMessage, Message: m}) }

// Entries returns the session record in append order; the entries must
// not be modified. (actor)
func (s *Session) Entries() []*Entry { return append([]*Entry(nil), s.rec.entries...) }

// Leaf returns the id of the current leaf entry ("" when empty). (actor)
func (s *Session) Leaf() string { return s.rec.leaf }

// Restore replaces the session record with entries loaded from a session
// file (in file order, ids and parent links as written) and moves the leaf
// to leaf; the context is derived from that branch. It does not append:
// the entries are already in the store. The session must be idle. (actor)
func (s *Session) Restore(entries []*Entry, leaf string) error {
	var t transcript
	t.index = make(map[string]int, len(entries))
	t.entries = make([]*Entry, 0, len(entries))
	for _, e := range entries {
		if _, dup := t.index[e.ID]; dup {
			continue // a damaged file: the first entry of an id wins
		}
		t.index[e.ID] = len(t.entries)
		t.entries = append(t.entries, e)
	}
	if err := t.setLeaf(leaf); err != nil {
		return err
	}
	s.rec = t
	s.set.version++
	return nil
}

// RecordedModel returns the provider and id of the model the current
// branch last used (its last model_change, or an assistant message after
// it), as switch_session and --resume restore it. ok is false when the
// branch names none. (actor)
func (s *Session) RecordedModel() (provider, id string, ok bool) {
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

// RecordedThinkingLevel returns the level of the branch's last
// thinking_level_change; ok is false when there is none. (actor)
func (s *Session) RecordedThinkingLevel() (ThinkingLevel, bool) {
	branch := s.rec.branch(s.rec.leaf)
	for i := len(branch) - 1; i >= 0; i-- {
		if branch[i].Type == EntryThinkingLevelChange {
			return branch[i].ThinkingLevel, true
		}
	}
	return "", false
}

// SetNameQuietly sets the session's name without persisting it (the name
// read from a session file's header). (actor)
func (s *Session) SetNameQuietly(name string) {
	s.set.name = name
	s.set.version++
}

// RestoreModel sets the model and thinking level a resumed session
// recorded, without recording them again. (actor)
func (s *Session) RestoreModel(m *Model, l ThinkingLevel) {
	s.set.model = m
	if m != nil {
		l = s.cfg.Thinking.Clamp(*m, l)
	}
	s.set.thinking = l
	s.set.version++
}
