package rpc

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// gatedWriter lets the first n writes through, then blocks every write
// until open is closed: a host that stopped reading its stdout.
type gatedWriter struct {
	mu      sync.Mutex
	n       int
	open    chan struct{}
	blocked chan struct{} // closed when the first write blocks
	once    sync.Once
	out     syncBuffer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	pass := g.n > 0
	g.n--
	g.mu.Unlock()
	if !pass {
		g.once.Do(func() { close(g.blocked) })
		<-g.open
	}
	return g.out.Write(p)
}

// A reply from the host reaches the run waiting for it while stdout is
// stalled and the executor's queue is full: replies are resolved on the
// reader, never queued behind the executor (engine-review F4).
func TestReplyDeliveredWhileStdoutBlockedAndInboxFull(t *testing.T) {
	out := &gatedWriter{n: 1, open: make(chan struct{}), blocked: make(chan struct{})}
	srv := NewServer(out, Options{Version: "0.0.0-test"})
	sess := engine.New(engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, Sink: srv, Host: srv, InboxSize: 1})
	srv.Attach(sess)
	pr, pw := io.Pipe()
	runDone := make(chan error, 1)
	go func() { runDone <- srv.Run(context.Background(), pr) }()

	type result struct {
		reply engine.ToolResult
		err   error
	}
	got := make(chan result, 1)
	registered := make(chan struct{})
	go func() {
		reply, err := srv.AwaitTool(context.Background(), "host_1", func() { close(registered) }, nil)
		got <- result{reply, err}
	}()
	<-registered

	// Stall the executor on stdout: get_state's answer cannot be written.
	io.WriteString(pw, `{"id":"g1","type":"get_state"}`+"\n")
	<-out.blocked
	// Fill the executor's queue (size 1): one function queued, one poster
	// blocked behind it.
	var posters sync.WaitGroup
	for i := 0; i < 2; i++ {
		posters.Add(1)
		go func() { defer posters.Done(); sess.Post(func() {}) }()
	}
	// More commands pile up behind them, then the reply.
	io.WriteString(pw, `{"id":"g2","type":"get_state"}`+"\n")
	io.WriteString(pw, `{"type":"host_tool_result","id":"host_1","result":{"content":[{"type":"text","text":"done"}]}}`+"\n")

	select {
	case r := <-got:
		if r.err != nil || !strings.Contains(string(r.reply.Raw), `"text":"done"`) {
			t.Fatalf("AwaitTool = %s, %v", r.reply.Raw, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reply was not delivered while stdout was blocked")
	}

	close(out.open)
	pw.Close()
	posters.Wait()
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	// Nothing was lost: both get_state commands were answered in order.
	lines := strings.Split(strings.TrimSpace(out.out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `"id":"g1"`) || !strings.Contains(lines[2], `"id":"g2"`) {
		t.Fatalf("output:\n%s", out.out.String())
	}
}

// When stdin closes, a request still waiting for the host fails with the
// documented message, and later requests fail at once.
func TestAwaitFailsWhenHostGoes(t *testing.T) {
	srv := NewServer(&syncBuffer{}, Options{Version: "0.0.0-test"})
	sess := engine.New(engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, Sink: srv, Host: srv})
	srv.Attach(sess)
	pr, pw := io.Pipe()
	runDone := make(chan error, 1)
	go func() { runDone <- srv.Run(context.Background(), pr) }()
	errs := make(chan error, 1)
	registered := make(chan struct{})
	go func() {
		_, err := srv.AwaitDialog(context.Background(), "ui_1", func() { close(registered) })
		errs <- err
	}()
	<-registered
	pw.Close()
	if err := <-errs; !errors.Is(err, engine.ErrHostGone) {
		t.Fatalf("pending AwaitDialog = %v, want ErrHostGone", err)
	}
	<-runDone
	if _, err := srv.AwaitTool(context.Background(), "host_2", func() { t.Error("sent after the host had gone") }, nil); !errors.Is(err, engine.ErrHostGone) {
		t.Fatalf("AwaitTool after EOF = %v", err)
	}
	if engine.ErrHostGone.Error() != "RPC client disconnected before host tool execution completed" {
		t.Fatal("wire text changed")
	}
}

// Intermediate replies reach the waiter's update callback in order, late
// and unknown ids are ignored without an answer, and a malformed reply
// does not retire the request.
func TestUpdatesAndStrayReplies(t *testing.T) {
	out := &syncBuffer{}
	srv := NewServer(out, Options{Version: "0.0.0-test"})
	sess := engine.New(engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, Sink: srv, Host: srv})
	srv.Attach(sess)
	pr, pw := io.Pipe()
	runDone := make(chan error, 1)
	go func() { runDone <- srv.Run(context.Background(), pr) }()
	var mu sync.Mutex
	var updates []string
	reply := make(chan engine.ToolResult, 1)
	registered := make(chan struct{})
	go func() {
		b, _ := srv.AwaitTool(context.Background(), "host_1", func() { close(registered) }, func(r engine.ToolResult) {
			mu.Lock()
			updates = append(updates, string(r.Raw))
			mu.Unlock()
		})
		reply <- b
	}()
	<-registered
	for _, l := range []string{
		`{"type":"host_tool_update","id":"host_1","partialResult":{"content":[{"type":"text","text":"a"}]}}`,
		`{"type":"host_tool_result","id":"host_9","result":{"content":[]}}`,
		`{"type":"host_tool_result","id":"host_1"}`,
		`{"type":"host_tool_update","id":"host_1","partialResult":{"content":[{"type":"text","text":"b"}]}}`,
		`{"type":"host_tool_result","id":"host_1","result":{"content":[{"type":"text","text":"end"}]}}`,
		`{"type":"host_tool_result","id":"host_1","result":{"content":[{"type":"text","text":"late"}]}}`,
	} {
		io.WriteString(pw, l+"\n")
	}
	b := <-reply
	pw.Close()
	<-runDone
	if !strings.Contains(string(b.Raw), `"end"`) {
		t.Fatalf("reply %s", b.Raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updates) != 2 || !strings.Contains(updates[0], `"a"`) || !strings.Contains(updates[1], `"b"`) {
		t.Fatalf("updates %q", updates)
	}
	// Only the malformed frame is answered (Unknown command, as the
	// original does); the stray and late replies are ignored.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"error":"Unknown command: host_tool_result"`) {
		t.Fatalf("output:\n%s", out.String())
	}
}

// The replies are read into the engine's types by the reading rule:
// JavaScript truthiness for the flags, key presence for value, exact
// names, the last duplicate winning.
func TestReplyDecoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want engine.DialogReply
	}{
		{`{"type":"extension_ui_response","id":"u","value":"a"}`, engine.DialogReply{Value: "a", HasValue: true}},
		{`{"type":"extension_ui_response","id":"u","value":7}`, engine.DialogReply{Value: "7", HasValue: true}},
		{`{"type":"extension_ui_response","id":"u","value":null}`, engine.DialogReply{}},
		{`{"type":"extension_ui_response","id":"u","confirmed":1}`, engine.DialogReply{Confirmed: true}},
		{`{"type":"extension_ui_response","id":"u","confirmed":""}`, engine.DialogReply{}},
		{`{"type":"extension_ui_response","id":"u","Confirmed":true}`, engine.DialogReply{}},
		{`{"type":"extension_ui_response","id":"u","confirmed":true,"confirmed":false}`, engine.DialogReply{}},
		{`{"type":"extension_ui_response","id":"u","cancelled":true,"value":"x","timedOut":"yes"}`, engine.DialogReply{Cancelled: true, TimedOut: true}},
	} {
		if got := dialogReply([]byte(tc.line)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.line, got, tc.want)
		}
	}
	r := hostToolResult([]byte(`{"type":"host_tool_result","id":"h","result":{"content":[{"type":"text","text":" a "},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"b"}],"details":{"k":1}},"isError":1}`))
	if !r.IsError || len(r.Content) != 1 || r.Content[0].Text != "a \nb" || string(r.Details) != "{}" || r.Raw != nil {
		t.Errorf("error result %+v", r)
	}
	if r := hostToolResult([]byte(`{"type":"host_tool_result","id":"h","result":{"content":[]},"isError":true}`)); r.Content[0].Text != hostToolFailedText {
		t.Errorf("empty error result %+v", r)
	}
	r = hostToolResult([]byte(`{"type":"host_tool_result","id":"h","result":{"content":[{"type":"text","text":"ok"}],"details":{ "k" : 1 },"extra":true},"isError":0}`))
	if r.IsError || string(r.Details) != `{"k":1}` || string(r.Raw) != `{"content":[{"type":"text","text":"ok"}],"details":{"k":1},"extra":true}` {
		t.Errorf("result %+v raw %s", r, r.Raw)
	}
	if _, ok := hostToolUpdate([]byte(`{"type":"host_tool_update","id":"h"}`)); ok {
		t.Error("an update without partialResult was taken")
	}
}
