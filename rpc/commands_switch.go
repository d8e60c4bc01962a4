package rpc

import (
	"errors"

	"github.com/xcsh-go/xcsh/engine"
)

// The session lifecycle commands. Each holds the input behind it until it
// has answered (holds: holdAll), takes the hold's release with c.later(),
// and calls the session's verb, which answers on the executor when the
// work (an abort winding down, a file loaded or written) is over.

// cmdNewSession starts an empty session (parentSession recorded as given).
func (s *Server) cmdNewSession(c *command) {
	var a newSessionArgs
	if err := decode(c, &a); err != nil {
		s.fail(c, err)
		return
	}
	parent := ""
	if a.ParentSession != nil {
		parent = *a.ParentSession
	}
	release := c.later()
	s.sess.NewSession(parent, func(err error) {
		s.answerSwitch(c, err)
		release()
	})
}

// notCancelled is the data of a session switch that went ahead.
var notCancelled = []byte(`{"cancelled":false}`)

// answerSwitch answers a session switch: {"cancelled":true} when a hook
// (an extension) cancelled it, else as answer does.
func (s *Server) answerSwitch(c *command, err error) {
	if errors.Is(err, engine.ErrSwitchCancelled) {
		s.ok(c, []byte(`{"cancelled":true}`))
		return
	}
	s.answer(c, notCancelled, err)
}

// cmdSwitchSession continues the session file at sessionPath.
func (s *Server) cmdSwitchSession(c *command) {
	path, ok := s.stringArg(c, "sessionPath")
	if !ok {
		return
	}
	release := c.later()
	s.sess.SwitchSession(path, func(err error) {
		s.answerSwitch(c, err)
		release()
	})
}

// cmdBranch (xcsh) and cmdFork (pi) continue from a user message in a new
// session file holding the path up to it; its text comes back for the host
// to edit and send again.
func (s *Server) cmdBranch(c *command) { s.branchFrom(c) }
func (s *Server) cmdFork(c *command)   { s.branchFrom(c) }

func (s *Server) branchFrom(c *command) {
	entryID, ok := s.stringArg(c, "entryId")
	if !ok {
		return
	}
	release := c.later()
	s.sess.Branch(entryID, func(text string, err error) {
		defer release()
		cancelled := errors.Is(err, engine.ErrSwitchCancelled)
		if err != nil && !cancelled {
			s.fail(c, err)
			return
		}
		s.okJSON(c, branchData{text, cancelled})
	})
}

// cmdClone (pi) copies the current branch into a new session file, which
// becomes current.
func (s *Server) cmdClone(c *command) {
	release := c.later()
	s.sess.Clone(func(err error) {
		s.answerSwitch(c, err)
		release()
	})
}

// cmdExportHTML writes the session as one self-contained HTML page, at
// outputPath or xcsh-session-<file name>.html in the process's directory,
// and answers the path as written.
func (s *Server) cmdExportHTML(c *command) {
	var a exportArgs
	if err := decode(c, &a); err != nil {
		s.fail(c, err)
		return
	}
	path := ""
	if a.OutputPath != nil {
		path = *a.OutputPath
	}
	release := c.later()
	s.sess.Export(path, func(written string, err error) {
		defer release()
		if err != nil {
			s.fail(c, err)
			return
		}
		s.okJSON(c, exportData{written})
	})
}
