package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer plays an agent server over pipes: each dial of the client is
// a new connection, handed to the test as a fakeAgent (its c is nil).
type fakeServer struct {
	t     *testing.T
	conns chan *fakeAgent
	mu    sync.Mutex
	fail  error // dials fail with it while set
	dials int
	// failed hears of each failed dial.
	failed chan struct{}
}

func newFakeServer(t *testing.T, opts Options) (*fakeServer, *Client, *fakeAgent) {
	t.Helper()
	fs := &fakeServer{t: t, conns: make(chan *fakeAgent, 8), failed: make(chan struct{}, 16)}
	if opts.CloseGrace == 0 {
		opts.CloseGrace = 100 * time.Millisecond
	}
	if opts.Reconnect == (Reconnect{}) {
		opts.Reconnect = Reconnect{Attempts: 3, MinDelay: time.Millisecond, MaxDelay: time.Millisecond}
	}
	l, err := fs.dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(l, fs.dial, opts)
	c.addr = "fake"
	t.Cleanup(func() { c.Close() })
	return fs, c, fs.next()
}

func (fs *fakeServer) dial(ctx context.Context) (*link, error) {
	fs.mu.Lock()
	fs.dials++
	err := fs.fail
	fs.mu.Unlock()
	if err != nil {
		select {
		case fs.failed <- struct{}{}:
		default:
		}
		return nil, err
	}
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	l := &link{r: cr, w: cw, half: cw.Close, readDone: make(chan struct{})}
	l.hard = func() error {
		cr.Close()
		cw.Close()
		return nil
	}
	fs.conns <- &fakeAgent{t: fs.t, in: bufio.NewReader(ar), out: aw}
	fs.t.Cleanup(func() { aw.Close(); ar.Close() })
	return l, nil
}

// next is the client's next connection.
func (fs *fakeServer) next() *fakeAgent {
	fs.t.Helper()
	select {
	case a := <-fs.conns:
		return a
	case <-time.After(testTimeout):
		fs.t.Fatal("the client did not connect")
		return nil
	}
}

// expect reads the client's next frame, bounded by testTimeout, and
// checks its type and fields.
func (f *fakeAgent) expect(typ string, fields map[string]any) map[string]any {
	f.t.Helper()
	got := make(chan []byte, 1)
	go func() {
		line, _ := f.in.ReadBytes('\n')
		got <- line
	}()
	var m map[string]any
	select {
	case line := <-got:
		if err := json.Unmarshal(line, &m); err != nil {
			f.t.Fatalf("client wrote %q: %v", line, err)
		}
	case <-time.After(testTimeout):
		f.t.Fatalf("the client wrote no %s within %v", typ, testTimeout)
	}
	if m["type"] != typ {
		f.t.Fatalf("client wrote %v, want a %s", m, typ)
	}
	for k, v := range fields {
		if fmt.Sprint(m[k]) != fmt.Sprint(v) {
			f.t.Fatalf("client wrote %v: %s = %v, want %v", m, k, m[k], v)
		}
	}
	return m
}

// attachAnswer answers an attach or open_session request.
func attachAnswer(id any, cmd, session, epoch string, seq int, extra string) string {
	return fmt.Sprintf(`{"id":%q,"type":"response","command":%q,"success":true,"data":{"sessionId":%q,"epoch":%q,"seq":%d,"role":"controller"%s},"sessionId":%q}`,
		id, cmd, session, epoch, seq, extra, session)
}

func ev(session string, seq int, typ string, rest string) string {
	if rest != "" {
		rest = "," + rest
	}
	return fmt.Sprintf(`{"type":%q%s,"sessionId":%q,"seq":%d}`, typ, rest, session, seq)
}

// attach runs Client.Attach against the fake and returns the Session.
func attachFake(t *testing.T, c *Client, a *fakeAgent, opts AttachOptions, answer func(id any) string) *Session {
	t.Helper()
	got := make(chan *Session, 1)
	errs := make(chan error, 1)
	go func() {
		s, err := c.Attach(testCtx(t), "s1", opts)
		got <- s
		errs <- err
	}()
	m := a.expect("attach", map[string]any{"sessionId": "s1"})
	a.write(answer(m["id"]))
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	return <-got
}

func seqsOf(evs []Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, fmt.Sprint(e.Seq))
	}
	return strings.Join(s, ",")
}

// The events are held for the first subscriber; a lagged notice and a gap
// each make the client attach again from its cursor, a replay's overlap
// is dropped, and a command the server refused as not attached while it
// lagged goes again.
func TestSessionLaggedGapAndRetry(t *testing.T) {
	t.Parallel()
	_, c, a := newFakeServer(t, Options{})
	s := attachFake(t, c, a, AttachOptions{}, func(id any) string { return attachAnswer(id, "attach", "s1", "e1", 5, "") })
	a.write(ev("s1", 6, "clients_changed", `"controllers":1,"observers":0`), ev("s1", 7, "agent_start", ""))
	events, cancel := s.Subscribe(0)
	defer cancel()
	if got := collect(t, events, func(e Event) bool { return e.Seq == 7 }); seqsOf(got) != "6,7" {
		t.Fatalf("held events %s", seqsOf(got))
	}

	// A command in flight when the server drops the attachment.
	res := make(chan error, 1)
	go func() {
		_, err := s.GetState(testCtx(t))
		res <- err
	}()
	m := a.expect("get_state", map[string]any{"sessionId": "s1"})
	a.write(`{"type":"lagged","sessionId":"s1","lastSeq":7}`,
		fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":false,"error":"Not attached to session s1: attach first","sessionId":"s1"}`, m["id"]))
	m = a.expect("attach", map[string]any{"sessionId": "s1", "after": 7, "epoch": "e1", "role": "controller"})
	a.write(attachAnswer(m["id"], "attach", "s1", "e1", 9, ""),
		ev("s1", 7, "agent_start", ""), ev("s1", 8, "turn_start", ""), ev("s1", 9, "turn_end", ""))
	m = a.expect("get_state", map[string]any{"sessionId": "s1"})
	a.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":true,"data":{"sessionId":"s1"},"sessionId":"s1"}`, m["id"]))
	if err := <-res; err != nil {
		t.Fatalf("get_state refused while lagging: %v", err)
	}

	// A gap: attach again rather than skip 10.
	a.write(ev("s1", 11, "turn_start", ""))
	m = a.expect("attach", map[string]any{"after": 9})
	a.write(attachAnswer(m["id"], "attach", "s1", "e1", 11, ""), ev("s1", 10, "turn_end", ""), ev("s1", 11, "turn_start", ""))
	got := collect(t, events, func(e Event) bool { return e.Seq == 11 })
	if seqsOf(got) != "8,9,10,11" {
		t.Fatalf("events %s", seqsOf(got))
	}
	if cur := s.Cursor(); cur != (Cursor{"e1", 11}) {
		t.Errorf("cursor %+v", cur)
	}

	// Another client closes it: session_closed is the last event, and the
	// drained subscription leaves the client.
	a.write(`{"type":"session_closed","sessionId":"s1"}`)
	var last Event
	for e := range events {
		last = e
	}
	<-s.Done()
	if last.Type != "session_closed" || !errors.Is(s.Err(), ErrSessionClosed) {
		t.Errorf("last event %s, err %v", last.Raw, s.Err())
	}
	c.mu.Lock()
	n := len(c.subs)
	c.mu.Unlock()
	if n != 0 {
		t.Errorf("%d subscriptions left", n)
	}
}

// A cursor the server no longer serves: the first subscriber gets the
// notice with the messages, then the events that follow.
func TestSessionCursorTooOld(t *testing.T) {
	t.Parallel()
	_, c, a := newFakeServer(t, Options{})
	s := attachFake(t, c, a, AttachOptions{After: &Cursor{"e0", 3}}, func(id any) string {
		return attachAnswer(id, "attach", "s1", "e1", 10,
			`,"cursorTooOld":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}]`)
	})
	a.write(ev("s1", 11, "clients_changed", ""))
	events, cancel := s.Subscribe(0)
	defer cancel()
	got := collect(t, events, func(e Event) bool { return e.Seq == 11 })
	if len(got) != 2 || got[0].Type != EventCursorTooOld {
		t.Fatalf("events %s", types(got))
	}
	n := got[0].CursorTooOld
	if n == nil || n.Epoch != "e1" || n.Seq != 10 || len(n.Messages) != 1 || n.Messages[0].Text() != "hi" {
		t.Fatalf("notice %+v", n)
	}
}

// The connection drops: a request in flight fails with ErrDisconnected;
// the client connects again, attaches from its cursor, and a request made
// meanwhile goes once the session is attached; the connection's own
// session, used before the drop, is lost.
func TestReconnectAttachesAgain(t *testing.T) {
	t.Parallel()
	fs, c, a := newFakeServer(t, Options{})
	go func() {
		m := a.expect("get_state", nil)
		a.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":true,"data":{}}`, m["id"]))
	}()
	if _, err := c.GetState(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	s := attachFake(t, c, a, AttachOptions{}, func(id any) string { return attachAnswer(id, "attach", "s1", "e1", 2, "") })
	events, cancel := s.Subscribe(0)
	defer cancel()
	a.write(ev("s1", 3, "agent_start", ""))
	collect(t, events, IsType("agent_start"))

	inflight := make(chan error, 1)
	go func() {
		_, err := s.GetMessages(testCtx(t))
		inflight <- err
	}()
	a.expect("get_messages", nil)
	a.out.Close() // the server's end of the connection
	if err := <-inflight; !errors.Is(err, ErrDisconnected) {
		t.Errorf("in-flight request: %v", err)
	}
	queued := make(chan error, 1)
	go func() {
		_, err := s.GetState(testCtx(t))
		queued <- err
	}()

	b := fs.next()
	m := b.expect("attach", map[string]any{"sessionId": "s1", "after": 3, "epoch": "e1"})
	b.write(attachAnswer(m["id"], "attach", "s1", "e1", 5, ""), ev("s1", 4, "clients_changed", ""), ev("s1", 5, "agent_end", ""))
	m = b.expect("get_state", map[string]any{"sessionId": "s1"})
	b.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":true,"data":{},"sessionId":"s1"}`, m["id"]))
	if err := <-queued; err != nil {
		t.Errorf("request made while reconnecting: %v", err)
	}
	if got := collect(t, events, IsType("agent_end")); seqsOf(got) != "4,5" {
		t.Errorf("events after the reconnection %s", seqsOf(got))
	}
	if _, err := c.GetState(testCtx(t)); !errors.Is(err, ErrOwnSessionLost) {
		t.Errorf("own session after the reconnection: %v", err)
	}
}

// Reconnection is bounded: when every dial fails the client ends, and the
// requests waiting for it fail.
func TestReconnectGivesUp(t *testing.T) {
	t.Parallel()
	fs, c, a := newFakeServer(t, Options{Reconnect: Reconnect{Attempts: 3, MinDelay: time.Millisecond}})
	s := attachFake(t, c, a, AttachOptions{}, func(id any) string { return attachAnswer(id, "attach", "s1", "e1", 0, "") })
	fs.mu.Lock()
	fs.fail = errors.New("connection refused")
	fs.mu.Unlock()
	a.out.Close()
	select {
	case <-c.Done():
	case <-time.After(testTimeout):
		t.Fatal("the client did not give up")
	}
	fs.mu.Lock()
	dials := fs.dials
	fs.mu.Unlock()
	if dials != 1+3 || !errors.Is(c.Err(), ErrClosed) || !strings.Contains(c.Err().Error(), "3 attempts") {
		t.Errorf("%d dials, err %v", dials, c.Err())
	}
	<-s.Done()
	if _, err := s.GetState(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("request after giving up: %v", err)
	}
}

// Close stops a reconnection that waits between dials.
func TestCloseStopsReconnecting(t *testing.T) {
	t.Parallel()
	fs, c, a := newFakeServer(t, Options{Reconnect: Reconnect{Attempts: 5, MinDelay: time.Hour, MaxDelay: time.Hour}})
	fs.mu.Lock()
	fs.fail = errors.New("connection refused")
	fs.mu.Unlock()
	a.out.Close()
	select {
	case <-fs.failed: // the first dial again failed: now it waits an hour
	case <-time.After(testTimeout):
		t.Fatal("no dial again")
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := c.Sessions(context.Background(), "")
		waiting <- err
	}()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Close waited for the reconnection")
	}
	if err := <-waiting; !errors.Is(err, ErrClosed) {
		t.Errorf("request waiting for the connection: %v", err)
	}
}

// A replay's requests wait for its end: one answered within it never
// reaches the handler, the others do; a live request's handler is
// cancelled by the resolved notice of another client's answer, and
// nothing is sent for it.
func TestReplayedRequestsAndResolved(t *testing.T) {
	t.Parallel()
	_, c, a := newFakeServer(t, Options{})
	asked := make(chan string, 4)
	causes := make(chan error, 1)
	ui := UIFuncs{DialogFunc: func(ctx context.Context, req UIRequest) (UIResponse, error) {
		asked <- req.ID
		if req.ID == "d3" {
			<-ctx.Done()
			causes <- context.Cause(ctx)
		}
		return UIResponse{Confirmed: true}, nil
	}}
	s := attachFake(t, c, a, AttachOptions{After: &Cursor{"e1", 0}, UI: ui}, func(id any) string { return attachAnswer(id, "attach", "s1", "e1", 4, "") })
	a.write(
		ev("s1", 1, "extension_ui_request", `"id":"d1","method":"confirm","title":"one"`),
		ev("s1", 2, "resolved", `"id":"d1"`),
		ev("s1", 3, "extension_ui_request", `"id":"d2","method":"confirm","title":"two"`),
		ev("s1", 4, "clients_changed", ""))
	a.expect("extension_ui_response", map[string]any{"id": "d2", "confirmed": true, "sessionId": "s1"})
	if id := <-asked; id != "d2" {
		t.Fatalf("handler asked %s", id)
	}
	a.write(ev("s1", 5, "extension_ui_request", `"id":"d3","method":"confirm","title":"three"`))
	if id := <-asked; id != "d3" {
		t.Fatalf("handler asked %s", id)
	}
	a.write(ev("s1", 6, "resolved", `"id":"d3"`))
	if err := <-causes; !errors.Is(err, errResolved) {
		t.Errorf("cause %v", err)
	}
	c.handlers.Wait()
	// Nothing was answered for d3: the next frame is the detach.
	done := make(chan error, 1)
	go func() { done <- s.Detach(testCtx(t)) }()
	m := a.expect("detach", map[string]any{"sessionId": "s1"})
	a.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"detach","success":true,"sessionId":"s1"}`, m["id"]))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(s.Err(), ErrDetached) {
		t.Errorf("after detach: %v", s.Err())
	}
}
