package engine

import (
	"fmt"
	"io"
)

// Switching sessions (new_session, switch_session, branch, fork, clone):
// the record, the store and the identity are replaced together, on an idle
// session, so no run ever writes into the session it did not start in.

// Replacement is what a session becomes.
type Replacement struct {
	ID, File string
	Name     string // from the file's header; "" for none
	Store    Store  // nil: a MemoryStore
	// Entries are the record (file order) and Leaf its current leaf; nil
	// and "" for an empty session.
	Entries []*Entry
	Leaf    string
}

// Replace makes the session r: a new record, store and identity. Queues,
// deferred bash records, todos and retry state are cleared, as the
// original does on a switch; the previous store is closed (made durable)
// when it can be. The session must be idle. (actor)
func (s *Session) Replace(r Replacement) error {
	if s.phase != PhaseIdle {
		return ErrBusySwitch
	}
	var t transcript
	t.index = make(map[string]int, len(r.Entries))
	for _, e := range r.Entries {
		if _, dup := t.index[e.ID]; dup {
			continue
		}
		t.index[e.ID] = len(t.entries)
		t.entries = append(t.entries, e)
	}
	if err := t.setLeaf(r.Leaf); err != nil {
		return err
	}
	if c, ok := s.cfg.Store.(io.Closer); ok {
		if err := c.Close(); err != nil {
			fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
		}
	}
	if r.Store == nil {
		r.Store = &MemoryStore{}
	}
	s.cfg.Store = r.Store
	s.rec = t
	s.set.id, s.set.file, s.set.name = r.ID, r.File, r.Name
	s.set.version++
	s.steering, s.followUps, s.deferredBash, s.todos = nil, nil, nil, nil
	s.retry.attempt = 0
	s.truncWarned = false
	return nil
}

// MintID returns a fresh id of kind ("session" for a new session). (any
// goroutine)
func (s *Session) MintID(kind string) string { return s.cfg.IDs.NewID(kind) }

// UserEntry returns the text and parent of a user message entry; ok is
// false when id names no such entry (branch and fork start from one).
// (actor)
func (s *Session) UserEntry(id string) (text, parent string, ok bool) {
	i, found := s.rec.index[id]
	if !found {
		return "", "", false
	}
	e := s.rec.entries[i]
	t, isUser := userText(e)
	if !isUser {
		return "", "", false
	}
	return t, e.ParentID, true
}

// BranchEntries returns the entries from the root to id, for a new file
// that continues from there: label entries are dropped from the path and
// re-appended at its end for the labels that target an entry on it, as the
// original's branched sessions are written. (actor)
func (s *Session) BranchEntries(id string) []*Entry {
	path := s.rec.branch(id)
	on := make(map[string]bool, len(path))
	out := make([]*Entry, 0, len(path))
	var labels []*Entry
	for _, e := range path {
		if e.Type == EntryLabel {
			labels = append(labels, e)
			continue
		}
		on[e.ID] = true
		out = append(out, e)
	}
	for _, l := range labels {
		if l.Label != nil && on[l.Label.TargetID] {
			c := *l
			if len(out) > 0 {
				c.ParentID = out[len(out)-1].ID
			}
			out = append(out, &c)
		}
	}
	// Parents are relinked along the path: dropping labels must not leave
	// an entry pointing at one.
	for i := range out {
		want := ""
		if i > 0 {
			want = out[i-1].ID
		}
		if out[i].ParentID != want {
			c := *out[i]
			c.ParentID = want
			out[i] = &c
		}
	}
	return out
}

// SystemPrompt returns the current system prompt. (actor)
func (s *Session) SystemPrompt() string { return s.set.systemPrompt }

// Identity returns the session's id, file ("" in memory) and name. (actor)
func (s *Session) Identity() (id, file, name string) { return s.set.id, s.set.file, s.set.name }

// CloseStore makes the current store durable and releases it (on exit),
// when it can be closed. (actor)
func (s *Session) CloseStore() {
	if c, ok := s.cfg.Store.(io.Closer); ok {
		if err := c.Close(); err != nil {
			fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
		}
	}
}
