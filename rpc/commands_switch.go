package rpc

import (
	"context"
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/export"
)

// Sessions creates and opens session records for the session commands;
// cmd/xcsh wires engine/sessionfile. nil (--no-session): every session
// lives in memory.
type Sessions interface {
	// Create starts a new session id, written when its first assistant
	// message exists; parent is recorded as its parentSession.
	Create(id, parent string) (store engine.Store, file string, err error)
	// CreateWith writes a new session id holding entries at once (branch,
	// fork, clone).
	CreateWith(id, parent string, entries []*engine.Entry) (store engine.Store, file string, err error)
	// Open loads the session file at path to continue it. A missing or
	// unreadable file is an error and creates nothing.
	Open(path string) (engine.Store, Loaded, error)
}

// Loaded is a session read from a file.
type Loaded struct {
	ID, File, Title string
	Created         int64
	Cwd             string
	Entries         []*engine.Entry
	Leaf            string
}

// switchTo runs fn once the session is idle (an aborted run has wound
// down), behind the abort barrier like abort itself, so commands sent
// meanwhile are answered after the switch. (actor)
func (s *Server) switchTo(fn func()) {
	s.raiseBarrier()
	s.sess.Abort(func() {
		fn()
		s.lowerBarrier()
	})
}

func (s *Server) create(id, parent string, entries []*engine.Entry) (engine.Store, string, error) {
	if s.opts.Sessions == nil {
		m := &engine.MemoryStore{}
		for _, e := range entries {
			_ = m.Append(context.Background(), e)
		}
		return m, "", nil
	}
	if entries == nil {
		return s.opts.Sessions.Create(id, parent)
	}
	return s.opts.Sessions.CreateWith(id, parent, entries)
}

// cmdNewSession starts an empty session (parentSession recorded as given).
func (s *Server) cmdNewSession(c *command) {
	var a struct {
		ParentSession *string `json:"parentSession"`
	}
	if err := decode(c, &a); err != nil {
		s.fail(c, err)
		return
	}
	parent := ""
	if a.ParentSession != nil {
		parent = *a.ParentSession
	}
	s.switchTo(func() {
		id := s.sess.MintID("session")
		store, file, err := s.create(id, parent, nil)
		if err == nil {
			err = s.sess.Replace(engine.Replacement{ID: id, File: file, Store: store})
		}
		if err != nil {
			s.fail(c, err)
			return
		}
		s.ok(c, []byte(`{"cancelled":false}`))
	})
}

// cmdSwitchSession continues the session file at sessionPath: its record,
// name, model (when available) and thinking level. A missing or unreadable
// file fails and creates nothing (the original silently replaces it).
func (s *Server) cmdSwitchSession(c *command) {
	path, ok := s.stringArg(c, "sessionPath")
	if !ok {
		return
	}
	if s.opts.Sessions == nil {
		s.fail(c, fmt.Errorf("Cannot switch session: sessions are in memory only (--no-session)"))
		return
	}
	store, l, err := s.opts.Sessions.Open(path)
	if err != nil {
		s.fail(c, fmt.Errorf("Cannot switch session: %w", err))
		return
	}
	s.switchTo(func() {
		if err := s.sess.Replace(engine.Replacement{ID: l.ID, File: l.File, Name: l.Title, Store: store, Entries: l.Entries, Leaf: l.Leaf}); err != nil {
			s.fail(c, err)
			return
		}
		s.restoreModel()
		s.ok(c, []byte(`{"cancelled":false}`))
	})
}

// restoreModel applies the model and thinking level the record last used,
// when that model is available. (actor)
func (s *Server) restoreModel() {
	level, hasLevel := s.sess.RecordedThinkingLevel()
	if p, id, ok := s.sess.RecordedModel(); ok {
		for _, m := range s.available() {
			if m.Provider == p && m.ID == id && s.opts.Models.HasKey(m) {
				s.sess.RestoreModel(&m, level)
				return
			}
		}
	}
	if cur := s.sess.Model(); cur != nil && hasLevel {
		s.sess.RestoreModel(cur, level)
	}
}

// cmdBranch (xcsh) and cmdFork (pi) continue from a user message in a new
// session file holding the path up to it; its text comes back for the host
// to edit and send again.
func (s *Server) cmdBranch(c *command) { s.branchFrom(c, errInvalidBranch) }
func (s *Server) cmdFork(c *command)   { s.branchFrom(c, errInvalidFork) }

func (s *Server) branchFrom(c *command, invalid error) {
	entryID, ok := s.stringArg(c, "entryId")
	if !ok {
		return
	}
	text, parent, ok := s.sess.UserEntry(entryID)
	if !ok {
		s.fail(c, invalid)
		return
	}
	s.switchTo(func() {
		_, oldFile, _ := s.sess.Identity()
		var entries []*engine.Entry
		if parent != "" {
			entries = s.sess.BranchEntries(parent)
		}
		id := s.sess.MintID("session")
		store, file, err := s.create(id, oldFile, entries)
		if err == nil {
			err = s.sess.Replace(engine.Replacement{ID: id, File: file, Store: store, Entries: entries, Leaf: parent})
		}
		if err != nil {
			s.fail(c, err)
			return
		}
		s.okJSON(c, struct {
			Text      string `json:"text"`
			Cancelled bool   `json:"cancelled"`
		}{text, false})
	})
}

// cmdClone (pi) copies the current branch into a new session file, which
// becomes current.
func (s *Server) cmdClone(c *command) {
	s.switchTo(func() {
		leaf := s.sess.Leaf()
		entries := s.sess.BranchEntries(leaf)
		_, oldFile, name := s.sess.Identity()
		id := s.sess.MintID("session")
		store, file, err := s.create(id, oldFile, entries)
		if err == nil {
			err = s.sess.Replace(engine.Replacement{ID: id, File: file, Name: name, Store: store, Entries: entries, Leaf: leaf})
		}
		if err != nil {
			s.fail(c, err)
			return
		}
		s.ok(c, []byte(`{"cancelled":false}`))
	})
}

// cmdExportHTML writes the session as one self-contained HTML page, at
// outputPath or xcsh-session-<file name>.html in the process's directory,
// and answers the path as written.
func (s *Server) cmdExportHTML(c *command) {
	var a struct {
		OutputPath *string `json:"outputPath"`
	}
	if err := decode(c, &a); err != nil {
		s.fail(c, err)
		return
	}
	id, file, name := s.sess.Identity()
	if file == "" {
		s.fail(c, errExportMemory)
		return
	}
	out := export.DefaultPath(file)
	if a.OutputPath != nil && *a.OutputPath != "" {
		out = *a.OutputPath
	}
	d := export.Data{SessionID: id, SessionFile: file, Title: name, Entries: s.sess.Entries(),
		Leaf: s.sess.Leaf(), SystemPrompt: s.sess.SystemPrompt()}
	for _, t := range s.sess.Tools() {
		d.Tools = append(d.Tools, export.Tool{Name: t.Name(), Description: t.Description()})
	}
	if err := writeExport(out, d); err != nil {
		s.fail(c, err)
		return
	}
	s.okJSON(c, struct {
		Path string `json:"path"`
	}{out})
}

func writeExport(path string, d export.Data) error {
	if err := export.WriteFile(path, d); err != nil {
		return fmt.Errorf("Cannot export session: %w", err)
	}
	return nil
}
