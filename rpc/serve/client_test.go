package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// A server on in-memory sessions (testBuilder) and connections (testConn):
// the routing of each line, end to end, under -race.

// testProvider answers the last user text: "block" waits for the abort,
// anything else is echoed.
type testProvider struct{}

func (testProvider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	text := ""
	if u, ok := req.Messages[len(req.Messages)-1].(*engine.UserMessage); ok {
		text = u.Text()
	}
	if err := fn(engine.StreamEvent{Kind: engine.StreamTextStart}); err != nil {
		return err
	}
	if text == "block" {
		<-ctx.Done()
		return ctx.Err()
	}
	for _, ev := range []engine.StreamEvent{
		{Kind: engine.StreamTextDelta, Delta: "echo: "},
		{Kind: engine.StreamTextDelta, Delta: text},
		{Kind: engine.StreamTextEnd},
		{Kind: engine.StreamDone, StopReason: engine.StopStop},
	} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// testBuilder builds in-memory sessions s1, s2, ... (none stored).
type testBuilder struct{ ids atomic.Int64 }

func (b *testBuilder) Build(req sessions.Request) (*sessions.Parts, error) {
	if req.ID != "" {
		return nil, sessions.ErrUnknown
	}
	m := engine.Model{ID: "m", API: "fake", Provider: "fake", ContextWindow: 100000, MaxTokens: 1000}
	return &sessions.Parts{Config: engine.Config{Provider: testProvider{}, Model: &m, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, SessionID: fmt.Sprintf("s%d", b.ids.Add(1)), Cwd: req.Cwd}}, nil
}

func (b *testBuilder) Stored(string) ([]sessions.Info, error) { return nil, nil }

func newTestServer(t *testing.T) *Server {
	t.Helper()
	srv := New(Options{Host: sessions.New(sessions.Options{Builder: &testBuilder{}}), Version: "0.0.0-test",
		Cwd: t.TempDir(), Epoch: "e1", ShutdownGrace: 10 * time.Second})
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

// testConn is one client: lines in, frames out (one per Write).
type testConn struct {
	t      *testing.T
	in     *io.PipeWriter
	mu     sync.Mutex
	cond   *sync.Cond
	frames []string
	closed bool // the server closed the connection
	cursor int
	done   chan struct{} // ServeConn returned
}

func dial(t *testing.T, srv *Server) *testConn {
	t.Helper()
	pr, pw := io.Pipe()
	c := &testConn{t: t, in: pw, done: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	closeConn := func() {
		pr.CloseWithError(io.EOF)
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cond.Broadcast()
	}
	go func() {
		defer close(c.done)
		if err := srv.ServeConn(context.Background(), pr, c, closeConn, ConnOptions{DrainAtEOF: true}); err != nil {
			t.Error(err)
		}
	}()
	c.wait(`type=="ready"`)
	return c
}

func (c *testConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errors.New("closed")
	}
	if len(p) == 0 || p[len(p)-1] != '\n' || strings.Count(string(p), "\n") != 1 {
		c.t.Errorf("a write that is not one frame: %q", p)
	}
	c.frames = append(c.frames, strings.TrimSuffix(string(p), "\n"))
	c.cond.Broadcast()
	return len(p), nil
}

func (c *testConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// wait returns the first frame after the cursor that matches the gjson
// conditions, joined by && (on the frame in a one-element array, as rpc
// wait reads), and moves the cursor past it. 10 s is a hang guard.
func (c *testConn) wait(cond string) gjson.Result {
	c.t.Helper()
	query := "#(" + strings.ReplaceAll(cond, "&&", ")#|#(") + ")"
	timer := time.AfterFunc(10*time.Second, func() { c.cond.Broadcast() })
	defer timer.Stop()
	deadline := time.Now().Add(10 * time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for ; c.cursor < len(c.frames); c.cursor++ {
			if r := gjson.Get("["+c.frames[c.cursor]+"]", query); r.Exists() {
				c.cursor++
				return r
			}
		}
		if c.closed || time.Now().After(deadline) {
			c.t.Fatalf("no frame matched %s (closed: %v); frames:\n%s", cond, c.closed, strings.Join(c.frames, "\n"))
		}
		c.cond.Wait()
	}
}

// all is every frame so far.
func (c *testConn) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.frames...)
}

// hangUp ends the client's input (a half close); the server drains.
func (c *testConn) hangUp() {
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.t.Fatal("the connection did not end after the input did")
	}
}

func TestOwnSessionIsModeRPC(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	c := dial(t, srv)
	c.send(`{"id":"p1","type":"prompt","message":"hi"}`)
	c.wait(`id=="p1"`)
	c.wait(`type=="agent_end"`)
	c.send(`{"id":"s1","type":"get_state"}`)
	st := c.wait(`id=="s1"`)
	c.send(`not json`)
	c.wait(`command=="parse"`)
	c.send(`{"id":"s2","type":"get_state"}`)
	st2 := c.wait(`id=="s2"`)
	if st.Get("data.sessionId").String() != "s1" || st2.Get("data.sessionId").String() != "s1" {
		t.Fatalf("the own session changed: %s then %s", st.Get("data.sessionId"), st2.Get("data.sessionId"))
	}
	for _, f := range c.all() {
		if gjson.Get(f, "sessionId").Exists() || gjson.Get(f, "seq").Exists() {
			t.Errorf("a --mode rpc frame with sessionId or seq: %s", f)
		}
	}
	// Its own session is not attached by id again.
	c.send(`{"id":"t1","type":"attach","sessionId":"s1"}`)
	if e := c.wait(`id=="t1"`).Get("error").String(); !strings.Contains(e, "own session") {
		t.Errorf("attaching to the own session: %q", e)
	}
	c.hangUp()
}

func TestRoutingBySessionID(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	c := dial(t, srv)
	fails := func(line, id, want string) {
		t.Helper()
		c.send(line)
		r := c.wait(`id=="` + id + `"`)
		if r.Get("success").Bool() || !strings.Contains(r.Get("error").String(), want) {
			t.Errorf("%s: %s, want an error with %q", line, r.Raw, want)
		}
	}
	// A parse error before any session is answered at once.
	c.send(`[1]`)
	c.wait(`command=="parse"`)
	fails(`{"id":"x1","type":"get_state","sessionId":"s9"}`, "x1", "Not attached to session s9: attach first")
	fails(`{"id":"x2","type":"get_state","sessionId":""}`, "x2", "sessionId must be a non-empty string")
	fails(`{"id":"x3","type":"attach","sessionId":"nope"}`, "x3", "No session nope (get_sessions lists them)")
	fails(`{"id":"x4","type":"attach"}`, "x4", "attach needs a sessionId")
	fails(`{"id":"x5","type":"detach","sessionId":"s9"}`, "x5", "Not attached to session s9")
	fails(`{"id":"x6","type":"open_session","cwd":"relative"}`, "x6", "cwd must be an absolute path")
	fails(`{"id":"x7","type":"open_session","updates":"some"}`, "x7", `invalid updates "some"`)

	c.send(`{"id":"o1","type":"open_session"}`)
	o := c.wait(`id=="o1"`)
	id := o.Get("data.sessionId").String()
	if id == "" || o.Get("data.epoch").String() != "e1" || o.Get("data.role").String() != "controller" || o.Get("sessionId").String() != id {
		t.Fatalf("open_session: %s", o.Raw)
	}
	c.wait(`type=="clients_changed"`)
	fails(`{"id":"x8","type":"attach","sessionId":"`+id+`","role":"king"}`, "x8", `unknown role "king"`)
	fails(`{"id":"x9","type":"new_session","sessionId":"`+id+`"}`, "x9", "new_session is not available on a served session")
	fails(`{"id":"x10","type":"fork","sessionId":"`+id+`","entryId":"1"}`, "x10", "fork is not available on a served session")

	c.send(`{"id":"p1","type":"prompt","sessionId":"` + id + `","message":"hi"}`)
	if r := c.wait(`id=="p1"`); r.Get("sessionId").String() != id || !r.Get("success").Bool() {
		t.Fatalf("prompt: %s", r.Raw)
	}
	end := c.wait(`type=="agent_end"`)
	if end.Get("sessionId").String() != id || end.Get("seq").Int() == 0 {
		t.Fatalf("an event without its session or number: %s", end.Raw)
	}
	// Without sessionId: the client's own session, another one.
	c.send(`{"id":"s1","type":"get_state"}`)
	if own := c.wait(`id=="s1"`); own.Get("data.sessionId").String() == id || own.Get("sessionId").Exists() {
		t.Fatalf("the own session: %s", own.Raw)
	}
	c.send(`{"id":"g1","type":"get_sessions"}`)
	g := c.wait(`id=="g1"`)
	if n := g.Get("data.sessions.#").Int(); n != 2 {
		t.Fatalf("get_sessions lists %d sessions: %s", n, g.Raw)
	}
	c.send(`{"id":"d1","type":"detach","sessionId":"` + id + `"}`)
	c.wait(`id=="d1"`)
	fails(`{"id":"x11","type":"get_state","sessionId":"`+id+`"}`, "x11", "Not attached")
	c.hangUp()
}

func TestObserverAndCloseSession(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	a, b := dial(t, srv), dial(t, srv)
	a.send(`{"id":"o1","type":"open_session"}`)
	id := a.wait(`id=="o1"`).Get("data.sessionId").String()
	b.send(`{"id":"t1","type":"attach","sessionId":"` + id + `","role":"observer"}`)
	if r := b.wait(`id=="t1"`); r.Get("data.role").String() != "observer" {
		t.Fatalf("attach: %s", r.Raw)
	}
	a.wait(`type=="clients_changed"&&observers==1`)
	for _, cmd := range []string{`"type":"prompt","message":"x"`, `"type":"abort"`, `"type":"close_session"`, `"type":"extension_ui_response","value":"x"`} {
		b.send(`{"id":"b","sessionId":"` + id + `",` + cmd + `}`)
		if r := b.wait(`id=="b"`); !strings.Contains(r.Get("error").String(), "this client is an observer and may only read") {
			t.Errorf("%s from an observer: %s", cmd, r.Raw)
		}
	}
	b.send(`{"id":"r1","type":"get_messages","sessionId":"` + id + `"}`)
	if r := b.wait(`id=="r1"`); !r.Get("success").Bool() {
		t.Errorf("get_messages from an observer: %s", r.Raw)
	}
	// The controller closes it: b is told, a gets its answer; the session
	// is gone for both.
	a.send(`{"id":"c1","type":"close_session","sessionId":"` + id + `"}`)
	a.wait(`id=="c1"&&success==true`)
	b.wait(`type=="session_closed"&&sessionId=="` + id + `"`)
	b.send(`{"id":"r2","type":"get_state","sessionId":"` + id + `"}`)
	if r := b.wait(`id=="r2"`); !strings.Contains(r.Get("error").String(), "Not attached") {
		t.Errorf("after close: %s", r.Raw)
	}
	a.hangUp()
	b.hangUp()
}

// A client that leaves is seen to leave; its run goes on; the end of a
// client's input drains the work it started first.
func TestDepartureAndDrain(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	a, b := dial(t, srv), dial(t, srv)
	a.send(`{"id":"o1","type":"open_session"}`)
	id := a.wait(`id=="o1"`).Get("data.sessionId").String()
	b.send(`{"id":"t1","type":"attach","sessionId":"` + id + `"}`)
	b.wait(`id=="t1"`)
	a.wait(`type=="clients_changed"&&controllers==2`)
	a.send(`{"id":"p1","type":"prompt","sessionId":"` + id + `","message":"block"}`)
	b.wait(`type=="message_update"`)
	a.send(`{"type":"drain"}`) // a WebSocket client's way to say it is done
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		t.Fatal("a drained while its run was going")
	}
	// b aborts the run a started: a's drain ends, and b sees a leave.
	b.send(`{"id":"x1","type":"abort","sessionId":"` + id + `"}`)
	b.wait(`id=="x1"`)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a's connection did not end once its work was over")
	}
	if r := a.all(); !strings.Contains(strings.Join(r, "\n"), `"type":"agent_end"`) {
		t.Fatalf("a did not read its run's end before it was closed:\n%s", strings.Join(r, "\n"))
	}
	b.wait(`type=="clients_changed"&&controllers==1`)
	b.hangUp()
}

func TestShutdownWritesTheAbortedRunsEnd(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	a := dial(t, srv)
	a.send(`{"id":"o1","type":"open_session"}`)
	id := a.wait(`id=="o1"`).Get("data.sessionId").String()
	a.send(`{"id":"p1","type":"prompt","sessionId":"` + id + `","message":"block"}`)
	a.wait(`type=="message_update"`)
	srv.Shutdown(context.Background())
	a.wait(`type=="agent_end"`)
	a.wait(`type=="session_closed"`)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end at Shutdown")
	}
	if _, err := srv.newClient(io.Discard, func() {}, false, false); err != errClosing {
		t.Fatalf("a client after Shutdown: %v", err)
	}
}
