package mcp

import (
	"os/exec"
	"strings"
)

// ProjectServer is a server a project's own file defines (.xcsh/mcp.json
// or .mcp.json in Cwd), as Options.Admit sees it. Under a sandbox the
// model may have written that file, so the program decides whether and
// how it runs (cmd/xcsh's trust policy).
type ProjectServer struct {
	Name, File string
	Transport  string // "stdio", "http" or "sse"
	// Command is the command line of a stdio server, or the URL of the
	// others, with secrets redacted: what a question to the user shows.
	Command string
}

// Admission is Admit's answer for one project server.
type Admission struct {
	// Run starts the server; otherwise it is listed as disabled, with
	// Reason as its error.
	Run    bool
	Reason string
	// Wrap, for a stdio server that runs, changes its command before it
	// starts (to run it confined); nil runs it as it is.
	Wrap func(*exec.Cmd) error
}

// admit asks Options.Admit about the project's servers that could start
// and applies the answers: the refused ones are disabled with the reason,
// the others keep their Wrap. It runs on the loader's goroutine before
// any of them starts (and before loaded is closed: a model call waits for
// the answers as for a starting server). Without Admit every server runs
// as it is.
func (m *Manager) admit(servers []*server) {
	if m.o.Admit == nil {
		return
	}
	var asked []*server
	var list []ProjectServer
	for _, s := range servers {
		if !s.cfg.Project || s.cfg.Disabled || s.cfg.Problem != "" {
			continue
		}
		what := s.cfg.URL
		if s.cfg.Transport == "stdio" {
			what = strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
		}
		asked = append(asked, s)
		list = append(list, ProjectServer{Name: s.cfg.Name, File: s.cfg.File, Transport: s.cfg.Transport, Command: s.red.text(what)})
	}
	if len(list) == 0 {
		return
	}
	answers := m.o.Admit(m.ctx, m.host, list)
	for i, s := range asked {
		var a Admission
		if i < len(answers) {
			a = answers[i]
		}
		s.mu.Lock()
		if a.Run {
			s.wrap = a.Wrap
		} else {
			s.cfg.Disabled = true
			s.state, s.errText = stateDisabled, s.red.text(a.Reason)
		}
		s.mu.Unlock()
	}
}
