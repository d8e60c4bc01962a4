package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/xcsh-go/xcsh/engine"
)

// Server states, as get_mcp_servers reports them.
const (
	stateStarting  = "starting"
	stateConnected = "connected"
	stateFailed    = "failed"  // could not start
	stateCrashed   = "crashed" // exited, or stopped after not answering
	stateDisabled  = "disabled"
)

// server is one configured MCP server and its connection.
type server struct {
	m     *Manager
	cfg   serverConfig
	group string // the engine tool group: "mcp:<name>"
	red   redactor
	tail  *stderrTail // stdio: the last lines the process wrote to stderr
	// wrap changes a stdio server's command before each start (Admission.Wrap);
	// set before the first start, read only by starts.
	wrap func(*exec.Cmd) error

	// mu guards the fields below. It is never held while calling the
	// host or the network.
	mu          sync.Mutex
	state       string
	errText     string // redacted
	cs          *mcp.ClientSession
	proc        *exec.Cmd
	gen         int           // counts connections; stale watchers compare it
	done        chan struct{} // closed when the current connection has ended
	startedAt   int64         // clock ms of the last start attempt
	starting    chan struct{} // non-nil while a start is under way; closed at its end
	toolNames   []string
	listChanged bool // the server announces tool list changes
	closing     bool
	// Tool-list refreshes are coalesced: each sign that the list may have
	// changed (a list_changed notification, a call's answer) bumps marks;
	// one refresher goroutine at a time (refresher) re-reads the list
	// while read < marks, taking every mark made before it began at once.
	// A flood of notifications thus costs one tools/list under way and at
	// most one more, and a model call (Settle) waits for the marks made
	// before it (a refresh under way included), never for later ones.
	// read is the marks value the last finished refresh began at;
	// refreshed is closed (and replaced) each time read moves.
	marks, read uint64
	refresher   bool
	refreshed   chan struct{}

	progress progressCalls // calls that may get progress (progress.go)
}

func newServer(m *Manager, cfg serverConfig) *server {
	s := &server{m: m, cfg: cfg, group: "mcp:" + cfg.Name, red: newRedactor(cfg.secrets), state: stateFailed,
		refreshed: make(chan struct{})}
	switch {
	case cfg.Disabled:
		s.state = stateDisabled
	case cfg.Problem != "":
		s.errText = s.red.text(cfg.Problem)
		m.warnf("MCP server %q (%s): %s", cfg.Name, cfg.File, s.errText)
	}
	return s
}

func (s *server) status() engine.ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return engine.ServerStatus{Name: s.cfg.Name, Transport: s.cfg.Transport, Status: s.state,
		Tools: append([]string(nil), s.toolNames...), Error: s.errText}
}

// beginStart marks a start under way and returns its channel, or nil when
// the server cannot start (disabled, misconfigured, shutting down) or a
// start is already under way.
func (s *server) beginStart() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Disabled || s.cfg.Problem != "" || s.closing || s.starting != nil {
		return nil
	}
	s.starting = make(chan struct{})
	s.state = stateStarting
	s.errText = ""
	s.startedAt = s.m.o.Clock.NowMillis()
	return s.starting
}

// runStart connects, lists the tools and installs them, then ends the
// start (closes ch): whoever waits for the start finds the tools in place.
func (s *server) runStart(ch chan struct{}) {
	bound := s.startTimeout()
	ctx, cancel := context.WithTimeout(s.m.ctx, bound)
	defer cancel()
	cs, proc, err := s.connect(ctx)
	var tools []engine.Tool
	if err == nil {
		tools, err = s.listTools(ctx, cs)
	}
	if err != nil {
		if cs != nil {
			s.m.goBackground(func() { closeSession(cs, proc) })
		}
		s.mu.Lock()
		s.state, s.errText = stateFailed, s.red.text(startError(err, ctx, bound, s.tail))
		s.starting = nil
		s.mu.Unlock()
		s.m.warnf("MCP server %q failed to start: %s", s.cfg.Name, s.errText)
		close(ch)
		return
	}
	lc := false
	if r := cs.InitializeResult(); r != nil && r.Capabilities != nil && r.Capabilities.Tools != nil {
		lc = r.Capabilities.Tools.ListChanged
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.cs, s.proc, s.done, s.listChanged = cs, proc, done, lc
	closing := s.closing
	s.mu.Unlock()
	if closing {
		closeSession(cs, proc)
		close(done)
	} else {
		s.install(tools)
		s.m.goBackground(func() { s.watch(cs, gen, done) })
	}
	s.mu.Lock()
	if s.gen == gen && s.state == stateStarting {
		s.state = stateConnected
	}
	s.starting = nil
	s.mu.Unlock()
	close(ch)
}

// startTimeout is the entry's startupTimeout, else the manager's.
func (s *server) startTimeout() time.Duration {
	if s.cfg.StartTimeout > 0 {
		return s.cfg.StartTimeout
	}
	return s.m.o.StartTimeout
}

// startError describes a failed start.
func startError(err error, ctx context.Context, bound time.Duration, tail *stderrTail) string {
	msg := err.Error()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("no answer within %v", bound)
	}
	if last := tail.last(); last != "" {
		msg += " (stderr: " + last + ")"
	}
	return msg
}

// waitStarted waits for a start under way, or ctx.
func (s *server) waitStarted(ctx context.Context) {
	s.mu.Lock()
	ch := s.starting
	s.mu.Unlock()
	waitOn(ctx, ch)
}

// waitOn waits for ch to close, or ctx; a nil ch is nothing to wait for.
func waitOn(ctx context.Context, ch <-chan struct{}) {
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// connect starts the transport and the MCP session.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, *exec.Cmd, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "xcsh", Version: s.m.o.Version}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return s.m.elicit(ctx, s, req)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.progress.notify(req.Params, s.red)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Between runs nobody settles: read the new list now (or
			// after the refresh under way).
			s.mu.Lock()
			s.marks++
			s.kickRefresher()
			s.mu.Unlock()
		},
	})
	var t mcp.Transport
	var proc *exec.Cmd
	switch s.cfg.Transport {
	case "stdio":
		proc = exec.Command(s.cfg.Command, s.cfg.Args...)
		proc.Env = childEnv(s.cfg.Env)
		base := s.cfg.Dir
		if base == "" {
			base = s.m.o.Cwd
		}
		proc.Dir = base
		if s.cfg.Cwd != "" {
			proc.Dir = s.cfg.Cwd
			if !filepath.IsAbs(proc.Dir) {
				proc.Dir = filepath.Join(base, proc.Dir)
			}
		}
		s.tail = newStderrTail(func(line string) { s.m.logf("mcp[%s]: %s", s.cfg.Name, s.red.text(line)) })
		proc.Stderr = s.tail
		setProcAttr(proc)
		if s.wrap != nil {
			if err := s.wrap(proc); err != nil {
				return nil, nil, err
			}
		}
		t = &mcp.CommandTransport{Command: proc, TerminateDuration: time.Second}
	case "http":
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: -1}
	case "sse":
		t = &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient()}
	default:
		return nil, nil, fmt.Errorf("unknown transport %q", s.cfg.Transport)
	}
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		if proc != nil && proc.Process != nil {
			killGroup(proc)
		}
		return nil, nil, err
	}
	return cs, proc, nil
}

// httpClient sends the configured headers with every request.
func (s *server) httpClient() *http.Client {
	return &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: http.DefaultTransport}}
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// listTools reads the server's whole tool list as engine tools.
func (s *server) listTools(ctx context.Context, cs *mcp.ClientSession) ([]engine.Tool, error) {
	var list []*mcp.Tool
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		list = append(list, t)
		names = append(names, t.Name)
	}
	full := toolNames(s.cfg.Name, names)
	tools := make([]engine.Tool, len(list))
	for i, t := range list {
		tools[i] = s.newTool(t, full[i])
	}
	return tools, nil
}

// install makes tools the server's group in the session. A tool the
// session refuses (its name is taken, or its input schema is unusable: one
// that refers outside itself is never loaded) is left out with a warning;
// the server's other tools are offered.
func (s *server) install(tools []engine.Tool) {
	var skipped []engine.SkippedTool
	s.m.host.Call(func() { skipped = s.m.host.SetToolGroup(s.group, tools) })
	for _, sk := range skipped {
		if errors.Is(sk.Err, engine.ErrToolNameTaken) {
			s.m.warnf("MCP server %q: tool %q not offered: another tool has the name", s.cfg.Name, sk.Name)
		} else {
			s.m.warnf("MCP server %q: tool %q not offered: its input schema is unusable: %v", s.cfg.Name, sk.Name, sk.Err)
		}
	}
	names := make([]string, len(skipped))
	for i, sk := range skipped {
		names[i] = sk.Name
	}
	s.mu.Lock()
	s.toolNames = installed(tools, names)
	s.mu.Unlock()
}

// installed are the names of tools that SetToolGroup installed, given the
// names it skipped: a name skipped as often as the list has it is not
// installed; one skipped fewer times is (the first of its kind was).
func installed(tools []engine.Tool, skipped []string) []string {
	left := map[string]int{}
	for _, t := range tools {
		left[t.Name()]++
	}
	for _, n := range skipped {
		left[n]--
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if n := t.Name(); left[n] > 0 {
			names = append(names, n)
			left[n] = 0 // listed once
		}
	}
	return names
}

// kickRefresher starts the refresher unless it runs: it then takes the
// new marks on its next round. (s.mu held)
func (s *server) kickRefresher() {
	if s.refresher || s.read >= s.marks {
		return
	}
	s.refresher = true
	s.m.goBackground(s.refreshLoop)
}

// settleList waits, bounded by ctx, until a refresh that began after every
// mark made so far has finished (one under way may do): the next model
// call then offers the tools as the server has them.
func (s *server) settleList(ctx context.Context) {
	s.mu.Lock()
	target := s.marks
	s.kickRefresher()
	for s.read < target {
		ch := s.refreshed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
}

// refreshLoop is the refresher: while marks are unread it reads the list
// once for all of them. A server that is starting is waited for (its start
// lists the tools, but a mark made meanwhile may postdate that); one that
// is down has nothing to read (its next start lists anew).
func (s *server) refreshLoop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.read < s.marks && s.m.ctx.Err() == nil {
		if ch := s.starting; ch != nil {
			s.mu.Unlock()
			waitOn(s.m.ctx, ch)
			s.mu.Lock()
			continue
		}
		begin, cs, gen := s.marks, s.cs, s.gen
		if s.state == stateConnected && cs != nil {
			s.mu.Unlock()
			s.refresh(cs, gen)
			s.mu.Lock()
		}
		s.read = max(s.read, begin)
		close(s.refreshed)
		s.refreshed = make(chan struct{})
	}
	s.refresher = false
}

// refresh re-reads the tool list of connection gen and installs it. A
// failure installs nothing: the call that fails next reports the state.
func (s *server) refresh(cs *mcp.ClientSession, gen int) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.m.o.StartTimeout)
	defer cancel()
	tools, err := s.listTools(ctx, cs)
	if err != nil {
		return
	}
	s.mu.Lock()
	current := s.gen == gen && s.state == stateConnected
	s.mu.Unlock()
	if current {
		s.install(tools)
	}
}

// watch records the end of a connection: a server that exits on its own
// has crashed.
func (s *server) watch(cs *mcp.ClientSession, gen int, done chan struct{}) {
	err := cs.Wait()
	defer close(done)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.closing {
		return
	}
	if s.state == stateConnected || s.state == stateCrashed && s.errText == crashedInCall {
		reason := "exited"
		if err != nil && !strings.Contains(err.Error(), "closed") {
			reason = "exited: " + err.Error()
		}
		if last := s.tail.last(); last != "" {
			reason += " (stderr: " + last + ")"
		}
		s.state, s.errText, s.cs = stateCrashed, s.red.text(reason), nil
	}
}

// crashedInCall is the state text of a server found gone by a call,
// until its watcher knows more.
const crashedInCall = "exited during a call"

// session returns the live connection, starting the server again when it
// is down and the last start was at least RestartEvery ago; otherwise a
// result that says why it cannot be called.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, int, *engine.ToolResult) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		switch s.state {
		case stateConnected:
			cs, gen := s.cs, s.gen
			s.mu.Unlock()
			return cs, gen, nil
		case stateStarting:
			ch := s.starting
			s.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, 0, nil
			}
			continue
		case stateDisabled:
			s.mu.Unlock()
			return nil, 0, errResult("MCP server %q is disabled in %s", s.cfg.Name, s.cfg.File)
		}
		if s.cfg.Problem != "" {
			s.mu.Unlock()
			return nil, 0, errResult("MCP server %q cannot start: %s", s.cfg.Name, s.red.text(s.cfg.Problem))
		}
		wait := time.Duration(s.startedAt+s.m.o.RestartEvery.Milliseconds()-s.m.o.Clock.NowMillis()) * time.Millisecond
		if attempt > 0 || wait > 0 {
			why := s.errText
			s.mu.Unlock()
			if attempt > 0 {
				return nil, 0, errResult("MCP server %q failed to start: %s", s.cfg.Name, why)
			}
			return nil, 0, errResult("MCP server %q is not running (%s); it is started again at most once every %v, next in %v",
				s.cfg.Name, why, s.m.o.RestartEvery, wait.Round(time.Second))
		}
		s.mu.Unlock()
		ch := s.beginStart()
		if ch != nil {
			s.runStart(ch)
		}
	}
}

// stop ends connection gen after it failed to answer: the process is
// killed in the background and the next call starts the server again.
func (s *server) stop(gen int, reason string) {
	s.mu.Lock()
	if s.gen != gen || s.state != stateConnected {
		s.mu.Unlock()
		return
	}
	cs, proc := s.cs, s.proc
	s.state, s.errText, s.cs = stateCrashed, s.red.text(reason), nil
	s.gen++ // the watcher of the stopped connection is stale now
	s.mu.Unlock()
	s.m.goBackground(func() { closeSession(cs, proc) })
}

// markCrashed records that a call found connection gen gone.
func (s *server) markCrashed(gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == gen && s.state == stateConnected {
		s.state, s.errText, s.cs = stateCrashed, crashedInCall, nil
	}
}

// shutdown closes the connection for good.
func (s *server) shutdown() {
	s.mu.Lock()
	s.closing = true
	cs, proc, done := s.cs, s.proc, s.done
	s.cs = nil
	s.mu.Unlock()
	if cs != nil {
		closeSession(cs, proc)
	} else if proc != nil {
		killGroup(proc)
	}
	if done != nil {
		<-done
	}
}

// closeSession closes the session (stdin first, as the protocol asks) and
// kills what is left of the process group.
func closeSession(cs *mcp.ClientSession, proc *exec.Cmd) {
	closed := make(chan struct{})
	go func() {
		_ = cs.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
	}
	if proc != nil {
		killGroup(proc)
	}
	<-closed
}

// sanitize keeps the characters tool names may have everywhere.
var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// maxToolName is the longest tool name the providers take.
const maxToolName = 64

// toolName is the name the model sees: mcp__<server>__<tool>, with the
// characters tool names may have everywhere. A longer one than
// maxToolName is cut and ends with a hash of the server's and the tool's
// names: two long names that share their beginning stay two tools, under
// the same names whatever the order their servers connect or list them in.
func toolName(server, tool string) string {
	n := "mcp__" + unsafeName().ReplaceAllString(server, "_") + "__" + unsafeName().ReplaceAllString(tool, "_")
	if len(n) <= maxToolName {
		return n
	}
	return hashedName(n, server, tool)
}

// hashedName is n, cut to leave room, with "_" and 8 hex digits of a hash
// of server and tool at its end.
func hashedName(n, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return n[:min(len(n), maxToolName-len(suffix))] + suffix
}

// toolNames names a server's tools (in its list's order): toolName, and
// for a tool whose name an earlier one of the list already has (after
// sanitizing: "a.b" and "a_b"), the hashed form.
func toolNames(server string, tools []string) []string {
	out := make([]string, len(tools))
	taken := make(map[string]bool, len(tools))
	for i, t := range tools {
		n := toolName(server, t)
		if taken[n] {
			n = hashedName(n, server, t)
		}
		taken[n] = true
		out[i] = n
	}
	return out
}

func errResult(format string, args ...any) *engine.ToolResult {
	return &engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(fmt.Sprintf(format, args...))}, IsError: true}
}

// stderrTail keeps the last lines a server wrote to stderr and passes each
// complete line on.
type stderrTail struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines []string
	emit  func(string)
}

const tailLines = 5

func newStderrTail(emit func(string)) *stderrTail { return &stderrTail{emit: emit} }

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf.Write(p)
	var complete []string
	for {
		line, err := t.buf.ReadString('\n')
		if err == io.EOF {
			t.buf.Reset()
			t.buf.WriteString(line)
			break
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		complete = append(complete, line)
		t.lines = append(t.lines, line)
		if len(t.lines) > tailLines {
			t.lines = t.lines[1:]
		}
	}
	if t.buf.Len() > 64<<10 { // a line without end: keep the memory bounded
		t.buf.Reset()
	}
	t.mu.Unlock()
	for _, l := range complete {
		t.emit(l)
	}
	return len(p), nil
}

// last is the last complete line, "" for none (a nil tail has none).
func (t *stderrTail) last() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}
