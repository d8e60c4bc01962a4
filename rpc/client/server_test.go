package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// server is a running `xcsh serve` with the fake provider, in a directory
// of its own (HOME, agent directory, sessions), listening on a Unix
// socket in a short temporary directory (a socket path is capped at 108
// bytes, which t.TempDir's can pass).
type server struct {
	t    *testing.T
	dir  string // the project directory: the server's cwd
	sock string
	args []string
	addr string // the address it printed (ws:// for a WebSocket listener)

	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	stderr strings.Builder
}

// startServer starts a server; files are written into its directory first.
// args follow the listener and --provider fake.
func startServer(t *testing.T, files map[string]string, args ...string) *server {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sockDir, err := os.MkdirTemp("", "xs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	s := &server{t: t, dir: dir, sock: filepath.Join(sockDir, "s.sock"), args: args}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) listen() []string {
	for _, a := range s.args {
		if strings.HasPrefix(a, "--listen") {
			return nil
		}
	}
	return []string{"--listen", "unix:" + s.sock}
}

// start runs the server and waits for its "serving on" line.
func (s *server) start() {
	t := s.t
	t.Helper()
	args := append(append([]string{"serve"}, s.listen()...), "--provider", "fake")
	cmd := exec.Command(xcshBin, append(args, s.args...)...)
	cmd.Dir = s.dir
	// Not XCSH_DETERMINISTIC: it fixes the server's epoch, and these tests
	// restart servers.
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(s.dir, ".home"),
		"PI_CODING_AGENT_DIR="+filepath.Join(s.dir, ".agent"),
		"XCSH_SERVE_TOKEN=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	serving := make(chan string, 1)
	exited := s.exited
	go func() {
		br := bufio.NewReader(stderr)
		for {
			line, err := br.ReadString('\n')
			s.mu.Lock()
			s.stderr.WriteString(line)
			s.mu.Unlock()
			if addr, ok := strings.CutPrefix(strings.TrimSpace(line), "xcsh: serving on "); ok {
				select {
				case serving <- addr:
				default:
				}
			}
			if err != nil {
				break
			}
		}
		cmd.Wait()
		close(exited)
	}()
	select {
	case s.addr = <-serving:
	case <-exited:
		t.Fatalf("xcsh serve exited before serving: %s", s.log())
	case <-time.After(testTimeout):
		t.Fatalf("xcsh serve did not serve within %v: %s", testTimeout, s.log())
	}
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// signal sends sig and waits for the exit.
func (s *server) signal(sig syscall.Signal) {
	s.t.Helper()
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(testTimeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("xcsh serve did not exit on %v: %s", sig, s.log())
	}
}

func (s *server) stop() { s.signal(syscall.SIGTERM) }

// dial connects a client to the server, closed at the end of the test. It
// reconnects quickly and for long enough to outlast a server restart.
func (s *server) dial(t *testing.T, opts Options) *Client {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = testTimeout
	}
	if opts.CloseGrace == 0 {
		opts.CloseGrace = 2 * time.Second
	}
	if opts.Reconnect == (Reconnect{}) {
		opts.Reconnect = Reconnect{Attempts: 400, MinDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond}
	}
	addr := "unix:" + s.sock
	if strings.HasPrefix(s.addr, "ws://") {
		addr = s.addr
	}
	c, err := Dial(testCtx(t), addr, opts)
	if err != nil {
		t.Fatalf("%v; server: %s", err, s.log())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// seqs checks that evs are the session's events numbered from first on,
// each once and in order, and returns the number of the last.
func seqs(t *testing.T, evs []Event, id string, first uint64) uint64 {
	t.Helper()
	want := first
	for _, ev := range evs {
		if ev.Type == EventCursorTooOld {
			continue
		}
		if ev.SessionID != id {
			t.Fatalf("event %s of session %q, want %q", ev.Raw, ev.SessionID, id)
		}
		if ev.Seq != want {
			t.Fatalf("event %s has seq %d, want %d (events %s)", ev.Raw, ev.Seq, want, types(evs))
		}
		want++
	}
	return want - 1
}

// dropConnection closes the client's connection as a network failure
// would; the client connects again.
func dropConnection(t *testing.T, c *Client) *link {
	t.Helper()
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	if l == nil {
		t.Fatal("no connection to drop")
	}
	l.hard()
	return l
}

// A session opened by id: its typed commands carry its id, its events
// their numbers from 1; the connection's own session is --mode rpc's,
// unchanged, beside it.
func TestServeOpenPromptEventsWithSeq(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	c := srv.dial(t, Options{})
	ctx := testCtx(t)

	own, cancelOwn := c.Subscribe(0)
	defer cancelOwn()
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, "mine", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	ownEvs := collect(t, own, IsType("agent_end"))
	for _, ev := range ownEvs {
		if ev.SessionID != "" || ev.Seq != 0 || strings.Contains(string(ev.Raw), `"seq"`) {
			t.Fatalf("own session frame %s carries a session id or number", ev.Raw)
		}
	}

	s, err := c.OpenSession(ctx, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() == "" || s.ID() == st.SessionID || s.Cursor().Epoch == "" || s.Role() != Controller {
		t.Fatalf("opened %q (own %q), cursor %+v, role %q", s.ID(), st.SessionID, s.Cursor(), s.Role())
	}
	events, cancel := s.Subscribe(0)
	defer cancel()
	h, err := s.Prompt(ctx, "hello", PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events, IsType("agent_end"))
	if evs[0].Type != "clients_changed" {
		t.Errorf("first event %s, want the attach's clients_changed (held for the first subscriber)", evs[0].Raw)
	}
	last := seqs(t, evs, s.ID(), 1)
	if got, want := assistantDeltas(evs), "Hello! I am the xcsh demo model. You said: hello"; got != want {
		t.Errorf("streamed %q, want %q", got, want)
	}
	if err := h.Err(ctx); err != nil {
		t.Fatal(err)
	}
	if cur := s.Cursor(); cur.Seq != last {
		t.Errorf("cursor %+v, want seq %d", cur, last)
	}
	sst, err := s.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sst.SessionID != s.ID() || sst.MessageCount != 2 {
		t.Errorf("session state %+v", sst)
	}
	if text, _, err := c.GetLastAssistantText(ctx); err != nil || !strings.HasSuffix(text, "You said: mine") {
		t.Errorf("own session's last text %q, %v", text, err)
	}
	list, err := c.Sessions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var found *SessionInfo
	for i := range list {
		if list[i].SessionID == s.ID() {
			found = &list[i]
		}
	}
	if found == nil || !found.Live || found.Seq != last || len(found.Clients) != 1 || !found.Clients[0].Self || found.Clients[0].Role != Controller {
		t.Fatalf("get_sessions: %+v", list)
	}
	// Replaced by open_session's own id: new_session is refused on a
	// session by id.
	if _, err := s.NewSession(ctx, ""); err == nil || !strings.Contains(err.Error(), "not available on a served session") {
		t.Errorf("new_session on a session by id: %v", err)
	}
}

// Two clients on one session see the same numbered events; a dialog is
// answered by the first client, and the other's handler is cancelled by
// the resolved notice; a client attaching later with an old cursor
// replays the history without running its requests again.
func TestServeTwoClientsOneSession(t *testing.T) {
	t.Parallel()
	script := `{"turns":[
  {"steps":[{"toolCall":{"id":"c1","name":"ask","arguments":{"question":"Which?","options":["A","B"]}}}]},
  {"expect":{"contextContains":"\"B\""},"steps":[{"text":"B it is."}]}
]}`
	srv := startServer(t, map[string]string{"ask.json": script}, "--model", "ask.json", "--ui", "--tools", "ask")
	a := srv.dial(t, Options{})
	b := srv.dial(t, Options{})
	ctx := testCtx(t)

	sa, err := a.OpenSession(ctx, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evA, cancelA := sa.Subscribe(0)
	defer cancelA()
	sb, err := b.Attach(ctx, sa.ID(), AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evB, cancelB := sb.Subscribe(0)
	defer cancelB()

	// A waits (and learns it lost); B answers.
	aCause := make(chan error, 1)
	sa.OnUI(UIFuncs{DialogFunc: func(ctx context.Context, req UIRequest) (UIResponse, error) {
		<-ctx.Done()
		aCause <- context.Cause(ctx)
		return UIResponse{Value: "A"}, nil
	}})
	sb.OnUI(UIFuncs{DialogFunc: func(ctx context.Context, req UIRequest) (UIResponse, error) {
		return UIResponse{Value: "B"}, nil
	}})
	if _, err := sa.Prompt(ctx, "pick one", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	gotA := collect(t, evA, IsType("agent_end"))
	gotB := collect(t, evB, IsType("agent_end"))
	seqs(t, gotA, sa.ID(), 1)
	// B's first event is its own attach's.
	if gotB[0].Type != "clients_changed" || gotB[0].Seq != 2 {
		t.Errorf("B's first event %s", gotB[0].Raw)
	}
	seqs(t, gotB, sa.ID(), 2)
	bySeq := map[uint64]string{}
	for _, ev := range gotA {
		bySeq[ev.Seq] = string(ev.Raw)
	}
	for _, ev := range gotB {
		if bySeq[ev.Seq] != string(ev.Raw) {
			t.Fatalf("event %d: B got %s, A got %s", ev.Seq, ev.Raw, bySeq[ev.Seq])
		}
	}
	if err := <-aCause; !errors.Is(err, errResolved) {
		t.Errorf("A's dialog ended with %v, want the resolved notice's", err)
	}
	if !strings.Contains(types(gotB), "resolved") {
		t.Errorf("no resolved notice: %s", types(gotB))
	}
	if text, _, err := sa.GetLastAssistantText(ctx); err != nil || text != "B it is." {
		t.Errorf("last text %q, %v", text, err)
	}

	// A third client replays everything from the start: the dialog was
	// answered in the replay, so its handler never runs.
	c := srv.dial(t, Options{})
	sc, err := c.Attach(ctx, sa.ID(), AttachOptions{After: &Cursor{Epoch: sa.Cursor().Epoch}, Role: Controller,
		UI: UIFuncs{DialogFunc: func(ctx context.Context, req UIRequest) (UIResponse, error) {
			t.Errorf("a replayed, answered dialog reached the handler: %s", req.Raw)
			return UIResponse{Cancelled: true}, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	evC, cancelC := sc.Subscribe(0)
	defer cancelC()
	last := gotA[len(gotA)-1].Seq
	replay := collect(t, evC, func(ev Event) bool { return ev.Seq == last })
	seqs(t, replay, sa.ID(), 1)
	for i, ev := range replay {
		if ev.Seq != gotA[i].Seq || string(ev.Raw) != string(gotA[i].Raw) {
			t.Fatalf("replayed %s, want %s", ev.Raw, gotA[i].Raw)
		}
	}
}

// An observer receives, reads, and is refused the rest; it answers no
// dialog.
func TestServeObserverRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	a := srv.dial(t, Options{})
	b := srv.dial(t, Options{})
	ctx := testCtx(t)
	sa, err := a.OpenSession(ctx, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Attach(ctx, sa.ID(), AttachOptions{Role: Observer})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Role() != Observer {
		t.Errorf("role %q", sb.Role())
	}
	_, err = sb.Prompt(ctx, "hi", PromptOptions{})
	wantCommandError(t, err, "prompt", "this client is an observer")
	if err := sb.CloseSession(ctx); err == nil || !strings.Contains(err.Error(), "observer") {
		t.Errorf("close_session by an observer: %v", err)
	}
	if _, err := sb.GetState(ctx); err != nil {
		t.Errorf("get_state by an observer: %v", err)
	}
	events, cancel := sb.Subscribe(0)
	defer cancel()
	if _, err := sa.Prompt(ctx, "from a", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if evs := collect(t, events, IsType("agent_end")); !strings.HasSuffix(assistantDeltas(evs), "You said: from a") {
		t.Errorf("observer saw %q", assistantDeltas(evs))
	}
}

// The connection drops mid-stream: the client connects again, attaches
// from its cursor, and the subscriber sees every event once, in order;
// the run, which went on in the server, is then driven as before.
func TestServeReconnectReplaysNoGapNoDup(t *testing.T) {
	t.Parallel()
	script := `{"turns":[{"steps":[{"text":["ab "],"repeat":2000},{"block":true}]}]}`
	srv := startServer(t, map[string]string{"long.json": script}, "--model", "long.json")
	c := srv.dial(t, Options{})
	ctx := testCtx(t)
	s, err := c.OpenSession(ctx, OpenOptions{Updates: "delta"})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := s.Subscribe(0)
	defer cancel()
	if _, err := s.Prompt(ctx, "go", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	evs := collect(t, events, func(ev Event) bool {
		if ev.Type == "message_update" {
			n++
		}
		return n == 20
	})
	old := dropConnection(t, c)
	evs = append(evs, collect(t, events, isUpdate("text_end"))...)
	// The run blocks after its text: the abort goes on the new connection.
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	evs = append(evs, collect(t, events, IsType("agent_end"))...)
	seqs(t, evs, s.ID(), 1)
	if got, want := assistantDeltas(evs), strings.Repeat("ab ", 2000); got != want {
		t.Errorf("streamed %d bytes, want %d", len(got), len(want))
	}
	c.mu.Lock()
	reconnected := c.link != nil && c.link != old
	c.mu.Unlock()
	if !reconnected {
		t.Error("the client did not connect again")
	}
	// Two clients_changed beside the first: the drop (no controller) and
	// the attach again.
	if k := strings.Count(types(evs), "clients_changed"); k != 3 {
		t.Errorf("%d clients_changed events: %s", k, types(evs))
	}
}

// After a server restart the client connects to the new server and
// attaches again with the old run's cursor: the subscribers are told the
// cursor is too old, with the session's messages, and go on from there.
// kill: the server crashed; term: it shut down.
func TestServeRestartAttachesAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{{"kill", syscall.SIGKILL}, {"term", syscall.SIGTERM}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, nil)
			c := srv.dial(t, Options{})
			ctx := testCtx(t)
			s, err := c.OpenSession(ctx, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			events, cancel := s.Subscribe(0)
			defer cancel()
			if _, err := s.Prompt(ctx, "before", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			evs := collect(t, events, IsType("agent_end"))
			seqs(t, evs, s.ID(), 1)
			before := s.Cursor()

			srv.signal(tc.sig)
			srv.start()
			// Whatever the old server said while closing, in order, then
			// the notice.
			ev := collect(t, events, IsType(EventCursorTooOld))
			seqs(t, ev[:len(ev)-1], s.ID(), before.Seq+1)
			notice := ev[len(ev)-1].CursorTooOld
			if notice == nil {
				t.Fatalf("events after the restart: %s", types(ev))
			}
			if notice.Epoch == before.Epoch || len(notice.Messages) != 2 || notice.Messages[0].Text() != "before" ||
				!strings.HasSuffix(notice.Messages[1].Text(), "You said: before") {
				t.Fatalf("notice %+v (cursor before %+v)", notice, before)
			}
			if cur := s.Cursor(); cur.Epoch != notice.Epoch || cur.Seq < notice.Seq {
				t.Errorf("cursor %+v after the notice %+v", cur, notice)
			}
			if _, err := s.Prompt(ctx, "after", PromptOptions{}); err != nil {
				t.Fatal(err)
			}
			evs = collect(t, events, IsType("agent_end"))
			seqs(t, evs, s.ID(), notice.Seq+1)
			if !strings.HasSuffix(assistantDeltas(evs), "You said: after") {
				t.Errorf("after the restart: %q", assistantDeltas(evs))
			}
		})
	}
}

// Detach, attach again from the cursor (the events in between replayed),
// and another client's close_session ends the Session.
func TestServeDetachAttachClose(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	a := srv.dial(t, Options{})
	b := srv.dial(t, Options{})
	ctx := testCtx(t)
	sa, err := a.OpenSession(ctx, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Attach(ctx, sa.ID(), AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Attach(ctx, sa.ID(), AttachOptions{}); err == nil || !strings.Contains(err.Error(), "already attached") {
		t.Errorf("a second attach: %v", err)
	}
	cur := sb.Cursor()
	if err := sb.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	<-sb.Done()
	if !errors.Is(sb.Err(), ErrDetached) {
		t.Errorf("detached session's error %v", sb.Err())
	}
	if _, err := sb.GetState(ctx); !errors.Is(err, ErrDetached) {
		t.Errorf("a command after detach: %v", err)
	}
	w := sa.Watch(IsType("agent_end"))
	if _, err := sa.Prompt(ctx, "meanwhile", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	sb, err = b.Attach(ctx, sa.ID(), AttachOptions{After: &cur})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := sb.Subscribe(0)
	defer cancel()
	evs := collect(t, events, IsType("agent_end"))
	seqs(t, evs, sa.ID(), cur.Seq+1)
	if !strings.HasSuffix(assistantDeltas(evs), "You said: meanwhile") {
		t.Errorf("replayed %q", assistantDeltas(evs))
	}

	if err := sb.CloseSession(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sa.Done():
	case <-time.After(testTimeout):
		t.Fatal("the other client's Session did not end")
	}
	if !errors.Is(sa.Err(), ErrSessionClosed) || !errors.Is(sb.Err(), ErrSessionClosed) {
		t.Errorf("errors after close_session: %v, %v", sa.Err(), sb.Err())
	}
}

// Over WebSocket with a token; a wrong one is refused at once, without
// dialing again.
func TestServeWebSocket(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil, "--listen", "ws://127.0.0.1:0", "--token", "s3cret")
	ctx := testCtx(t)
	if _, err := Dial(ctx, srv.addr, Options{Token: "wrong"}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("a wrong token: %v", err)
	}
	c := srv.dial(t, Options{Token: "s3cret"})
	s, err := c.OpenSession(ctx, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := s.Subscribe(0)
	defer cancel()
	if _, err := s.Prompt(ctx, "over ws", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events, IsType("agent_end"))
	seqs(t, evs, s.ID(), 1)
	old := dropConnection(t, c)
	if _, err := s.Prompt(ctx, "again", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	more := collect(t, events, IsType("agent_end"))
	seqs(t, append(evs, more...), s.ID(), 1)
	c.mu.Lock()
	if c.link == old {
		t.Error("not reconnected")
	}
	c.mu.Unlock()
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// A host tool registered on a session by id is served by the client that
// registered it; another controller without a handler leaves the call to
// it rather than answer "not registered".
func TestServeHostToolOnSession(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	a := srv.dial(t, Options{})
	b := srv.dial(t, Options{})
	ctx := testCtx(t)
	sa, err := a.OpenSession(ctx, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Attach(ctx, sa.ID(), AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names, err := sa.RegisterHostTools(ctx, []HostTool{{
		Name:        "clock",
		Description: "The host's time",
		Parameters:  []byte(`{"type":"object"}`),
		Handler: func(ctx context.Context, args json.RawMessage, update func(json.RawMessage)) (Result, error) {
			update(TextPartial("looking"))
			return TextResult("noon"), nil
		},
	}})
	if err != nil || len(names) != 1 {
		t.Fatalf("registered %v, %v", names, err)
	}
	events, cancel := sb.Subscribe(0)
	defer cancel()
	if _, err := sa.Prompt(ctx, "demo:tool clock {}", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events, IsType("agent_end"))
	if !strings.Contains(types(evs), "tool_execution_update") || !strings.HasSuffix(assistantDeltas(evs), "Tool clock returned: noon") {
		t.Errorf("B saw %s: %q", types(evs), assistantDeltas(evs))
	}
}
