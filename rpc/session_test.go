package rpc

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
)

// recFrames records a served session's frames with the client each is
// for (rpc/serve's hub, in memory).
type recFrames struct {
	mu     sync.Mutex
	cond   *sync.Cond
	frames []recFrame
}

type recFrame struct {
	to   Client
	line string
}

func newRecFrames() *recFrames {
	r := &recFrames{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recFrames) Buf() *[]byte { b := make([]byte, 0, 128); return &b }

func (r *recFrames) Send(bp *[]byte, to Client) {
	r.mu.Lock()
	r.frames = append(r.frames, recFrame{to, string(*bp)})
	r.mu.Unlock()
	r.cond.Broadcast()
}

// waitFor returns the first frame for client to that contains sub.
func (r *recFrames) waitFor(to Client, sub string) recFrame {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		for _, f := range r.frames {
			if f.to == to && strings.Contains(f.line, sub) {
				return f
			}
		}
		r.cond.Wait()
	}
}

func (r *recFrames) all() []recFrame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recFrame(nil), r.frames...)
}

type nopSink struct{}

func (nopSink) Event(engine.Event) {}

// servedSession starts a served protocol core on an engine session;
// resolved hears of each request answered.
func servedSession(t *testing.T, resolved func(string)) (*Server, *recFrames) {
	t.Helper()
	rec := newRecFrames()
	srv := NewSession(rec, Options{Version: "0.0.0-test", Resolved: resolved})
	sess := engine.New(engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, Sink: nopSink{}, Host: srv})
	srv.Attach(sess)
	loopDone := make(chan struct{})
	go func() { sess.Loop(); close(loopDone) }()
	srv.Serve()
	t.Cleanup(func() {
		srv.Stop()
		sess.Stop()
		<-loopDone
	})
	return srv, rec
}

// Two clients answer one dialog: the first answer wins and is reported
// once; the second client is told, in order, that the request no longer
// waits; the first gets no frame for its answer.
func TestServedFirstAnswerWins(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var resolved []string
	srv, rec := servedSession(t, func(id string) { mu.Lock(); resolved = append(resolved, id); mu.Unlock() })
	a, b := "client a", "client b"

	registered := make(chan struct{})
	got := make(chan engine.DialogReply, 1)
	go func() {
		r, err := srv.AwaitDialog(context.Background(), "ui_1", func() { close(registered) })
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	<-registered
	srv.Dispatch([]byte(`{"type":"extension_ui_response","id":"ui_1","value":"from a"}`), a)
	srv.Dispatch([]byte(`{"type":"extension_ui_response","id":"ui_1","value":"from b"}`), b)
	if r := <-got; r.Value != "from a" {
		t.Fatalf("the dialog got %q, want the first answer", r.Value)
	}
	late := rec.waitFor(b, `"command":"extension_ui_response"`)
	if gjson.Get(late.line, "success").Bool() || gjson.Get(late.line, "id").String() != "ui_1" ||
		!strings.HasPrefix(gjson.Get(late.line, "error").String(), "Request ui_1 is not waiting for an answer: another client answered it first") {
		t.Fatalf("the late answer: %s", late.line)
	}
	// A host tool call the same way; an answer to an id never asked is
	// refused too.
	registered = make(chan struct{})
	tool := make(chan engine.ToolResult, 1)
	go func() {
		r, err := srv.AwaitTool(context.Background(), "host_1", func() { close(registered) }, nil)
		if err != nil {
			t.Error(err)
		}
		tool <- r
	}()
	<-registered
	srv.Dispatch([]byte(`{"type":"host_tool_result","id":"host_1","result":{"content":[{"type":"text","text":"from b"}]}}`), b)
	srv.Dispatch([]byte(`{"type":"host_tool_result","id":"host_1","result":{"content":[{"type":"text","text":"from a"}]}}`), a)
	if r := <-tool; len(r.Content) != 1 || r.Content[0].Text != "from b" {
		t.Fatalf("the tool got %+v, want b's result", r.Content)
	}
	rec.waitFor(a, `"error":"Request host_1 is not waiting`)
	srv.Dispatch([]byte(`{"type":"extension_ui_response","id":"ui_9","value":"x"}`), a)
	rec.waitFor(a, `"error":"Request ui_9 is not waiting`)

	mu.Lock()
	defer mu.Unlock()
	if strings.Join(resolved, ",") != "ui_1,host_1" {
		t.Fatalf("resolved: %v, want each request once", resolved)
	}
	for _, f := range rec.all() {
		if f.to == a && strings.Contains(f.line, `"id":"ui_1"`) || f.to == b && strings.Contains(f.line, `"id":"host_1"`) {
			t.Errorf("a frame for the answer that won: %s", f.line)
		}
	}
}

// Each client gets the answers to its own commands, parse errors
// included; a request still waiting when the session stops fails.
func TestServedAnswersGoToTheirClient(t *testing.T) {
	t.Parallel()
	srv, rec := servedSession(t, nil)
	a, b := "client a", "client b"
	srv.Dispatch([]byte(`{"id":"s","type":"get_state"}`), a)
	srv.Dispatch([]byte(`not json`), b)
	srv.Dispatch([]byte(`{"id":"s","type":"no_such"}`), b)
	if f := rec.waitFor(a, `"command":"get_state"`); !gjson.Get(f.line, "success").Bool() {
		t.Fatalf("get_state: %s", f.line)
	}
	rec.waitFor(b, `"command":"parse"`)
	rec.waitFor(b, `Unknown command: no_such`)
	for _, f := range rec.all() {
		if f.to == a && !strings.Contains(f.line, "get_state") || f.to == b && strings.Contains(f.line, "get_state") {
			t.Errorf("misaddressed: %v %s", f.to, f.line)
		}
	}
	registered := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		_, err := srv.AwaitDialog(context.Background(), "ui_2", func() { close(registered) })
		errs <- err
	}()
	<-registered
	srv.Stop()
	if err := <-errs; err != engine.ErrHostGone {
		t.Fatalf("a dialog pending at Stop: %v", err)
	}
}
