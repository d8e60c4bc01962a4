package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/mcp"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/engine/tools"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
	"github.com/xcsh-go/xcsh/rpc/acp"
)

// runACP serves the Agent Client Protocol on stdin and stdout (--mode
// acp): one engine session per ACP session, each built from the same
// flags as every mode's, in the cwd the client names.
func runACP(ctx context.Context, o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	clock, ids, deterministic := clockAndIDs()
	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	// No model yet is no error: a client's session may load one from its
	// record, and the editor shows a prompt's failure.
	sh, err := setupShared(o, clock, ids, deterministic, true, cwd, stderr)
	if err != nil {
		return err
	}
	defer sh.ms.discovery.Wait()
	if o.tools != "" && !o.noTools {
		if _, err := tools.Select(tools.Options{Cwd: cwd}, strings.Split(o.tools, ",")); err != nil {
			return &exitError{2, "Error: --tools: " + err.Error()}
		}
	}
	out := stdout
	if f, ok := stdout.(*os.File); ok && f == os.Stdout {
		g, restore, err := guardStdout(f)
		if err != nil {
			return &exitError{1, "Error: " + err.Error()}
		}
		defer restore()
		defer g.Close()
		out = g
	}
	image := sh.ms.model != nil && slices.Contains(sh.ms.model.Input, "image")
	var full func(int) bool
	if f, ok := out.(*os.File); ok {
		full = pipeFull(f)
	}
	srv := acp.NewServer(out, acp.Options{
		Version: version, MaxLineBytes: o.maxLineBytes, Log: stderr, IDs: ids,
		Sessions: &acpSessions{o: o, sh: sh, stderr: stderr}, ImageInput: image,
		OutputFull: full,
	})

	ctx, stop := serveSignals(ctx)
	defer stop()
	err = srv.Run(ctx, stdin)
	killChildren()
	var se signalError
	switch {
	case errors.As(err, &se):
		return &exitError{128 + int(se.sig), ""}
	case errors.Is(err, acp.ErrOutputClosed):
		if errors.Is(err, syscall.EPIPE) {
			return &exitError{exitEPIPE, ""}
		}
		return &exitError{1, ""}
	}
	return err
}

// acpSessions implements acp.Sessions: sessions in their own cwd, their
// records in that cwd's sessions directory, their MCP servers those of
// the configuration files there plus the client's.
type acpSessions struct {
	o      *options
	sh     *sharedSetup
	stderr io.Writer
}

// New implements acp.Sessions.
func (a *acpSessions) New(st acp.Setup) (*acp.Built, error) {
	now := a.sh.clock.NowMillis()
	id := a.sh.ids.NewID("session")
	ss := &sessionSetup{id: id}
	if !a.o.noSession {
		dir := sessionfile.ResolveDir(a.o.sessionDir, os.Getenv, st.Cwd)
		file := filepath.Join(dir, sessionfile.FileName(now, id))
		ss = &sessionSetup{id: id, file: file, dir: dir, store: sessionfile.New(file, sessionfile.Header{ID: id, Timestamp: now, Cwd: st.Cwd})}
	}
	return a.build(st, ss)
}

// Open implements acp.Sessions: the session whose id is exactly id, in
// the cwd's sessions directory or any other.
func (a *acpSessions) Open(id string, st acp.Setup) (*acp.Built, error) {
	if a.o.noSession || id == "" {
		return nil, acp.ErrUnknownSession
	}
	dir := sessionfile.ResolveDir(a.o.sessionDir, os.Getenv, st.Cwd)
	info, err := sessionfile.FindByID(id, dir, filepath.Join(sessionfile.AgentDir(os.Getenv), "sessions"))
	if err != nil || info.ID != id {
		return nil, acp.ErrUnknownSession
	}
	loaded, err := loadSession(info.Path)
	if err != nil {
		return nil, err
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(a.stderr, "xcsh: %s: %s\n", info.Path, w)
	}
	store, err := sessionfile.OpenAppend(info.Path, loaded)
	if err != nil {
		return nil, err
	}
	ss := &sessionSetup{id: id, file: info.Path, dir: dir, store: store, loaded: loaded}
	b, err := a.build(st, ss)
	if err != nil {
		return nil, err
	}
	b.Resume = ss.resumed()
	return b, nil
}

// build configures a session in st.Cwd for the record ss.
func (a *acpSessions) build(st acp.Setup, ss *sessionSetup) (*acp.Built, error) {
	o := a.o
	var m *mcp.Manager
	if !o.noMCP || len(st.MCPServers) > 0 {
		servers := make([]mcp.Server, 0, len(st.MCPServers))
		for _, s := range st.MCPServers {
			servers = append(servers, mcp.Server{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers})
		}
		m = mcp.New(mcp.Options{
			Cwd: st.Cwd, AgentDir: sessionfile.AgentDir(os.Getenv), ConfigPaths: o.mcpConfigs, Servers: servers, NoConfigFiles: o.noMCP,
			Getenv: os.Getenv, Clock: a.sh.clock, Log: a.stderr, Version: version,
			Admit: a.sh.procs.project.mcpAdmit(true, o.confirmTimeout), // the editor is asked (trust.go)
		})
	}
	// The editor is the UI: the ask tool's questions become its
	// permission and elicitation requests. Delegation stays off under the
	// sandbox, which confines the local tools (docs/acp.md).
	p := sessionParts{cwd: st.Cwd, ss: ss, hostUI: true, mcp: m}
	if !a.sh.procs.sandbox.On() {
		if st.Editor != nil {
			p.editor = st.Editor
		}
		if st.Terminal != nil {
			p.exec = terminalExec(st.Terminal)
		}
	}
	cfg, ext, err := a.sh.sessionConfig(o, p, a.stderr)
	if err != nil {
		if m != nil {
			m.Close()
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return nil, errors.New(strings.TrimPrefix(ee.msg, "Error: "))
		}
		return nil, err
	}
	b := &acp.Built{Config: cfg, KeepModel: a.sh.keepModel, KeepThinking: a.sh.keepThinking}
	if m == nil && ext == nil {
		return b, nil
	}
	if ext != nil {
		b.Tap = ext.Tap
	}
	b.Start = func(sess *engine.Session) {
		if ext != nil {
			ext.Attach(sess)
			ext.Begin() // after session/new's answer is queued: its load faults follow it
		}
		if m != nil {
			m.Start(sess, sess.Ready())
		}
	}
	b.Close = func() {
		stopExtensions(ext, a.stderr)
		if m != nil {
			m.Close()
		}
	}
	return b, nil
}

// List implements acp.Sessions.
func (a *acpSessions) List(cwd string) ([]acp.SessionInfo, error) {
	if a.o.noSession {
		return nil, nil
	}
	var dirs []string
	switch {
	case cwd != "":
		dirs = []string{sessionfile.ResolveDir(a.o.sessionDir, os.Getenv, cwd)}
	case a.o.sessionDir != "" || os.Getenv("XCSH_SESSION_DIR") != "":
		dirs = []string{sessionfile.ResolveDir(a.o.sessionDir, os.Getenv, "")}
	default:
		root := filepath.Join(sessionfile.AgentDir(os.Getenv), "sessions")
		des, _ := os.ReadDir(root)
		for _, de := range des {
			if de.IsDir() {
				dirs = append(dirs, filepath.Join(root, de.Name()))
			}
		}
	}
	var out []acp.SessionInfo
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
			if a.sh.deterministic {
				// The file's time is the wall clock's: a transcript shows
				// the record's own time instead.
				updated = time.UnixMilli(in.Created)
			}
			out = append(out, acp.SessionInfo{ID: in.ID, Cwd: in.Cwd, Title: title, Updated: updated})
		}
	}
	slices.SortStableFunc(out, func(x, y acp.SessionInfo) int { return y.Updated.Compare(x.Updated) })
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

// terminalExec runs bash's commands in the client's terminals.
func terminalExec(t *acp.Terminal) tools.Exec {
	return func(ctx context.Context, command string, o shellexec.Options) (shellexec.Result, error) {
		r, err := t.Run(ctx, command, acp.RunOptions{Cwd: o.Cwd, Env: o.Env, Timeout: o.Timeout, MaxBytes: o.MaxBytes})
		if err != nil {
			return shellexec.Result{}, err
		}
		res := shellexec.Result{Output: r.Output, ExitCode: r.ExitCode, Exited: r.Exited, Cancelled: r.Cancelled,
			TimedOut: r.TimedOut, Truncated: r.Truncated, TotalBytes: len(r.Output)}
		if r.Output != "" {
			res.TotalLines = strings.Count(r.Output, "\n") + 1
		}
		return res, nil
	}
}
