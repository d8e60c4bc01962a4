package engine

import (
	"context"
	"fmt"
	"io"
)

// The session's lifecycle verbs (new_session, switch_session, branch,
// fork, clone, export_html, set_session_name), for every front: each is
// called on the executor and reports on the executor, through done, once
// it is over. What touches a disk (loading a file, writing a branch,
// rendering an export, rewriting a header) runs off the executor, on a
// goroutine of the session, so a run keeps streaming meanwhile; a front
// that must keep its input in order holds it until done (rpc does).
//
// A switch (new, switch, branch, fork, clone) replaces the record, the
// store and the identity together on an idle session: a running prompt is
// aborted first, and the session stays busy (PhaseSwitching) from the
// moment it is idle until the new record is in place, so no run ever
// writes into a session it did not start in.

// background runs work on a goroutine of the session (Close waits for it),
// then then on the executor. (actor)
func (s *Session) background(work func(), then func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		work()
		s.Post(then)
	}()
}

// switching marks the session busy with a switch whose I/O is under way.
// (actor)
func (s *Session) switching() { s.phase = PhaseSwitching }

// switched ends a switch: the session is idle and its waiters run (after
// the verb has reported, so an abort sent after the switch answers after
// it). (actor)
func (s *Session) switched() { s.goIdle() }

// createRecord makes the record of a new session: a file through Files, or
// a memory store holding entries. Off the executor.
func (s *Session) createRecord(id, parent string, entries []*Entry) (Store, string, error) {
	if s.cfg.Files == nil {
		m := &MemoryStore{}
		for _, e := range entries {
			_ = m.Append(context.Background(), e)
		}
		return m, "", nil
	}
	return s.cfg.Files.Create(id, parent, entries)
}

// replaceWith installs a new record, store and identity (see install),
// and closes the previous store off the executor. The hooks see the old
// session end and the new one start, for reason. (actor)
func (s *Session) replaceWith(r record, reason string) error {
	prev := s.set.file
	s.observe(SessionEvent{Kind: SessionShutdown})
	old, err := s.install(r)
	if err != nil {
		return err
	}
	s.closeStore(old)
	s.observe(SessionEvent{Kind: SessionStart, Reason: reason, PreviousFile: prev})
	return nil
}

// beforeSwitch asks the hooks whether a session change may go ahead (off
// the executor: they may wait for an extension), then calls then on the
// executor; without a hook for h, at once. (actor)
func (s *Session) beforeSwitch(h Hook, sw SwitchHook, then func(cancelled bool)) {
	if !s.has(h) {
		then(false)
		return
	}
	var cancel bool
	s.background(func() { cancel = s.cfg.Hooks.BeforeSwitch(context.Background(), sw) }, func() { then(cancel) })
}

// closeStore makes a store that is no longer the session's durable and
// releases it, off the executor (a sync waits on the disk). (actor)
func (s *Session) closeStore(st Store) {
	c, ok := st.(io.Closer)
	if !ok || st == s.rec.store {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := c.Close(); err != nil {
			fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
		}
	}()
}

// NewSession starts an empty session, recording parent as its parent
// session, once a running prompt has been aborted. (actor)
func (s *Session) NewSession(parent string, done func(error)) {
	s.beforeSwitch(HookBeforeSwitch, SwitchHook{Reason: "new"}, func(cancelled bool) {
		if cancelled {
			done(ErrSwitchCancelled)
			return
		}
		s.newSession(parent, done)
	})
}

func (s *Session) newSession(parent string, done func(error)) {
	s.Abort(func() {
		s.switching()
		id := s.cfg.IDs.NewID("session")
		var store Store
		var file string
		var err error
		s.background(func() { store, file, err = s.createRecord(id, parent, nil) }, func() {
			if err == nil {
				err = s.replaceWith(record{id: id, file: file, store: store}, "new")
			}
			done(err)
			s.switched()
		})
	})
}

// SwitchSession continues the session file at path: its record, name,
// model (when the catalog has it with a key) and thinking level (the
// restore rule of Resume). The file is loaded first, while a run may still
// stream; a missing or unreadable file fails with a *SwitchError and
// changes nothing (the original silently replaces it). Then the run is
// aborted and the session replaced. (actor)
func (s *Session) SwitchSession(path string, done func(error)) {
	if s.cfg.Files == nil {
		done(ErrNoSessionFiles)
		return
	}
	s.beforeSwitch(HookBeforeSwitch, SwitchHook{Reason: "resume", Target: path}, func(cancelled bool) {
		if cancelled {
			done(ErrSwitchCancelled)
			return
		}
		s.switchSession(path, done)
	})
}

func (s *Session) switchSession(path string, done func(error)) {
	var l *LoadedSession
	var err error
	s.background(func() { l, err = s.cfg.Files.Open(path) }, func() {
		if err != nil {
			done(&SwitchError{Err: err})
			return
		}
		s.Abort(func() {
			err := s.replaceWith(record{id: l.ID, file: l.File, name: l.Name, store: l.Store, entries: l.Entries, leaf: l.Leaf}, "resume")
			if err == nil {
				s.restoreRecorded(false, false)
			}
			done(err)
		})
	})
}

// Resume makes the session continue l at start-up (--continue, --resume,
// --session) by the rule switch_session follows: the record and its name,
// then the model and thinking level the branch last used, unless
// keepModel or keepThinking say the command line chose them. The session
// must be idle. (actor)
func (s *Session) Resume(l *LoadedSession, keepModel, keepThinking bool) error {
	if s.phase != PhaseIdle {
		return ErrBusySwitch
	}
	if err := s.replaceWith(record{id: l.ID, file: l.File, name: l.Name, store: l.Store, entries: l.Entries, leaf: l.Leaf}, "resume"); err != nil {
		return err
	}
	s.restoreRecorded(keepModel, keepThinking)
	return nil
}

// Branch continues from the user message entryID in a new session holding
// the path up to its parent (an empty one when it is the first), and
// reports the message's text for the host to edit and send again (branch,
// fork). An entry that is not a user message fails with ErrNotUserEntry.
// (actor)
func (s *Session) Branch(entryID string, done func(text string, err error)) {
	text, parent, ok := s.userEntry(entryID)
	if !ok {
		done("", ErrNotUserEntry)
		return
	}
	s.beforeSwitch(HookBeforeFork, SwitchHook{Reason: "fork", EntryID: entryID}, func(cancelled bool) {
		if cancelled {
			done(text, ErrSwitchCancelled)
			return
		}
		s.Abort(func() {
			var entries []*Entry
			if parent != "" {
				entries = s.branchEntries(parent)
			}
			s.copyInto(entries, parent, "", "fork", func(err error) { done(text, err) })
		})
	})
}

// Clone copies the current branch into a new session, which becomes
// current, keeping its name. (actor)
func (s *Session) Clone(done func(error)) {
	s.beforeSwitch(HookBeforeFork, SwitchHook{Reason: "clone", EntryID: s.rec.leaf}, func(cancelled bool) {
		if cancelled {
			done(ErrSwitchCancelled)
			return
		}
		s.Abort(func() {
			leaf := s.rec.leaf
			s.copyInto(s.branchEntries(leaf), leaf, s.set.name, "clone", done)
		})
	})
}

// copyInto writes entries into a new session whose parent is the current
// one, and makes it current with leaf and name. The session is idle.
// (actor)
func (s *Session) copyInto(entries []*Entry, leaf, name, reason string, done func(error)) {
	s.switching()
	id := s.cfg.IDs.NewID("session")
	parent := s.set.file
	var store Store
	var file string
	var err error
	s.background(func() { store, file, err = s.createRecord(id, parent, entries) }, func() {
		if err == nil {
			err = s.replaceWith(record{id: id, file: file, name: name, store: store, entries: entries, leaf: leaf}, reason)
		}
		done(err)
		s.switched()
	})
}

// Export renders the session (every branch, the current leaf, the system
// prompt and the tools) through the Exporter, at path or its default, and
// reports the path as written. The snapshot is taken now; a run goes on
// meanwhile. An in-memory session fails with ErrExportInMemory. (actor)
func (s *Session) Export(path string, done func(written string, err error)) {
	if s.set.file == "" || s.cfg.Exporter == nil {
		done("", ErrExportInMemory)
		return
	}
	snap := ExportSnapshot{SessionID: s.set.id, SessionFile: s.set.file, Name: s.set.name,
		Entries: s.Entries(), Leaf: s.rec.leaf, SystemPrompt: s.set.systemPrompt}
	for _, t := range s.set.tools {
		snap.Tools = append(snap.Tools, ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	var out string
	var err error
	s.background(func() { out, err = s.cfg.Exporter.Export(context.Background(), path, snap) },
		func() {
			if err != nil {
				err = &ExportError{Err: err}
			}
			done(out, err)
		})
}

// SetSessionName names the session: control characters become spaces,
// runs of spaces collapse, and the result is trimmed; nothing left fails
// with ErrEmptySessionName. A store that keeps the name (a session file's
// header) records it off the executor; when that fails the name does not
// change and the failure is a *RenameError. With Config.AnnounceName the host is then
// asked to show it as its title. (actor)
func (s *Session) SetSessionName(name string, done func(error)) {
	clean := CleanSessionName(name)
	if clean == "" {
		done(ErrEmptySessionName)
		return
	}
	store := s.rec.store
	var err error
	s.background(func() {
		if t, ok := store.(titleStore); ok {
			err = t.SetTitle(clean, "user")
		}
	}, func() {
		if err != nil {
			// The file keeps its old name: so does the session, and the
			// host is told (a name that only lived in memory would be lost
			// with the process).
			fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
			done(&RenameError{Err: err})
			return
		}
		if store == s.rec.store { // not replaced meanwhile
			s.set.name = clean
			s.set.version++
		}
		done(nil)
		if s.cfg.AnnounceName {
			s.emit(SetTitle{ID: s.cfg.IDs.NewID("ui"), Title: clean})
		}
	})
}

// titleStore is a Store that also keeps the session's name. SetTitle is
// called off the executor, concurrently with Append.
type titleStore interface {
	SetTitle(title, source string) error
}
