package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/mcp"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/rpc/acp"
)

// builder implements sessions.Builder: every session of every mode is
// assembled here, from the flags and what the process shares (sharedSetup),
// in the cwd its front asks for: its record, tools, confirmation policy,
// system prompt, resources, MCP servers and extensions.
type builder struct {
	o      *options
	sh     *sharedSetup
	stderr io.Writer
}

// newHost is the session host of the process, building with b.
func newHost(o *options, sh *sharedSetup, stderr io.Writer) *sessions.Manager {
	return sessions.New(sessions.Options{Builder: &builder{o: o, sh: sh, stderr: stderr}, Log: stderr})
}

// Build implements sessions.Builder.
func (b *builder) Build(req sessions.Request) (*sessions.Parts, error) {
	rec, err := b.record(req)
	if err != nil {
		return nil, err
	}
	o := b.o
	var m *mcp.Manager
	if !o.noMCP || len(req.MCPServers) > 0 {
		servers := make([]mcp.Server, 0, len(req.MCPServers))
		for _, s := range req.MCPServers {
			servers = append(servers, mcp.Server{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers})
		}
		m = mcp.New(mcp.Options{
			Cwd: req.Cwd, AgentDir: sessionfile.AgentDir(os.Getenv), ConfigPaths: o.mcpConfigs, Servers: servers, NoConfigFiles: o.noMCP,
			Getenv: os.Getenv, Clock: b.sh.clock, Log: b.stderr, Version: version,
			// Under a sandbox, the project's own servers are confined or
			// asked about (trust.go); a front with a user may ask.
			Admit: b.sh.procs.project.mcpAdmit(b.canAsk(req), o.confirmTimeout),
		})
	}
	p := sessionParts{cwd: req.Cwd, rec: rec, hostUI: req.HostUI, mcp: m}
	// Delegation stays off under the sandbox, which confines the local
	// tools (docs/acp.md).
	if d, ok := req.Delegate.(acp.Delegate); ok && !b.sh.procs.sandbox.On() {
		if d.Editor != nil {
			p.editor = d.Editor
		}
		if d.Terminal != nil {
			p.exec = terminalExec(d.Terminal)
		}
	}
	cfg, ext, err := b.sh.sessionConfig(o, p, b.stderr)
	if err != nil {
		if m != nil {
			m.Close()
		}
		if rec.store != nil {
			rec.store.Close()
		}
		return nil, err
	}
	parts := &sessions.Parts{Config: cfg, Resume: rec.loaded, KeepModel: b.sh.keepModel, KeepThinking: b.sh.keepThinking,
		Sandbox: b.sh.procs.state}
	if ext != nil {
		parts.Tap = ext.Tap
		parts.Begin = ext.Begin
	}
	parts.Start = func(sess *engine.Session) {
		if ext != nil {
			ext.Attach(sess)
		}
		if m != nil {
			// In the background, once the session is ready (its resources
			// read): a front's first frame never waits for a server.
			m.Start(sess, sess.Ready())
		}
	}
	parts.Close = func() {
		stopExtensions(ext, b.stderr)
		if m != nil {
			m.Close()
		}
	}
	return parts, nil
}

// record is the record req asks for: the file it names (Path), the
// stored session of its exact id (ID: sessions.ErrUnknown when there is
// none), or a new one.
func (b *builder) record(req sessions.Request) (*record, error) {
	o := b.o
	if o.noSession {
		if req.ID != "" {
			return nil, sessions.ErrUnknown
		}
		return newRecord("", req.Cwd, b.sh.clock, b.sh.ids)
	}
	dir := sessionfile.ResolveDir(o.sessionDir, os.Getenv, req.Cwd)
	path := req.Path
	if req.ID != "" {
		info, err := sessionfile.FindByID(req.ID, dir, filepath.Join(sessionfile.AgentDir(os.Getenv), "sessions"))
		if err != nil || info.ID != req.ID {
			return nil, sessions.ErrUnknown
		}
		path = info.Path
	}
	if path == "" {
		r, err := newRecord(dir, req.Cwd, b.sh.clock, b.sh.ids)
		if err == nil && req.Save {
			if ferr := r.store.Flush(); ferr != nil {
				// The session works; its file is written at the next entry.
				fmt.Fprintf(b.stderr, "xcsh: %v\n", ferr)
			}
		}
		return r, err
	}
	r, err := openRecord(path, b.stderr)
	if err != nil {
		return nil, err
	}
	r.dir = dir
	return r, nil
}

// canAsk reports whether the front of req can put a question to its user
// (a confirm dialog in RPC with --ui, a permission request in ACP).
func (b *builder) canAsk(req sessions.Request) bool {
	return req.HostUI && (b.o.mode == "rpc" || b.o.mode == "acp" || b.o.mode == "serve") && !b.o.print
}

// Stored implements sessions.Builder.
func (b *builder) Stored(cwd string) ([]sessions.Info, error) {
	o := b.o
	if o.noSession {
		return nil, nil
	}
	var dirs []string
	switch {
	case cwd != "":
		dirs = []string{sessionfile.ResolveDir(o.sessionDir, os.Getenv, cwd)}
	case o.sessionDir != "" || os.Getenv("XCSH_SESSION_DIR") != "":
		dirs = []string{sessionfile.ResolveDir(o.sessionDir, os.Getenv, "")}
	default:
		root := filepath.Join(sessionfile.AgentDir(os.Getenv), "sessions")
		des, _ := os.ReadDir(root)
		for _, de := range des {
			if de.IsDir() {
				dirs = append(dirs, filepath.Join(root, de.Name()))
			}
		}
	}
	var out []sessions.Info
	for _, d := range dirs {
		infos, err := sessionfile.List(d)
		if err != nil {
			return nil, err
		}
		for _, in := range infos {
			if cwd != "" && in.Cwd != cwd {
				continue
			}
			title := in.Title
			if title == "" {
				title = firstLine(in.FirstMessage, 80)
			}
			updated := in.Modified
			if b.sh.deterministic {
				// The file's time is the wall clock's: a transcript shows
				// the record's own time instead.
				updated = time.UnixMilli(in.Created)
			}
			out = append(out, sessions.Info{ID: in.ID, Cwd: in.Cwd, Title: title, Updated: updated})
		}
	}
	slices.SortStableFunc(out, func(x, y sessions.Info) int { return y.Updated.Compare(x.Updated) })
	return out, nil
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// startupError is a session the command line asked for that cannot be
// opened: exit 2, before the front says anything.
func startupError(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	return &exitError{2, fmt.Sprintf("Error: %v", err)}
}
