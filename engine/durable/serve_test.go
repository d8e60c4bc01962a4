package durable

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/xcsh-go/xcsh/engine"
)

// Served against the local dev server (the SDK's test environment has no
// client to query or update a workflow with): two servers' views of one
// session, the replay from the workflow's log, the messages at a seq, one
// delta endpoint for every session a server serves.

// emitted collects what a Served hands its server, and signals each event.
type emitted struct {
	mu     sync.Mutex
	events []Frame
	deltas int
	more   chan struct{}
}

func newEmitted() *emitted { return &emitted{more: make(chan struct{}, 1)} }

func (e *emitted) emit(seq int64, frame []byte) {
	e.mu.Lock()
	if seq == 0 {
		e.deltas++
	} else {
		e.events = append(e.events, Frame{Seq: seq, Data: append([]byte(nil), frame...)})
	}
	e.mu.Unlock()
	select {
	case e.more <- struct{}{}:
	default:
	}
}

// waitFor waits until an event with seq has been emitted.
func (e *emitted) waitFor(t *testing.T, seq int64) []Frame {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		e.mu.Lock()
		n := len(e.events)
		got := append([]Frame(nil), e.events...)
		e.mu.Unlock()
		if n > 0 && got[n-1].Seq >= seq {
			return got
		}
		select {
		case <-e.more:
		case <-deadline:
			t.Fatalf("no event %d; got %d events", seq, n)
		}
	}
}

// do is Do with the answer given during it ("": none).
func do(ctx context.Context, s *Served, line string) string {
	var got string
	s.Do(ctx, []byte(line), func(b []byte) { got = string(b) })
	return got
}

func TestServedTwoServersOneSession(t *testing.T) {
	addr := devServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("durable hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: addr, DataConverter: DataConverter()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "served", worker.Options{})
	testActivities(t, dir).Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	o := FrontOptions{Client: c, TaskQueue: "served", Session: "s1", Start: Start{HeartbeatMs: 10000},
		HostToolReply: func([]byte) (string, engine.ToolResult, bool, bool) { return "nobody", engine.ToolResult{}, true, true }}

	if _, err := OpenServed(ctx, o, false, nil, func(int64, []byte) {}); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("attach to a session that does not run: %v", err)
	}
	d1, err := ListenDeltas("")
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Close()
	e1 := newEmitted()
	one, err := OpenServed(ctx, o, true, d1, e1.emit)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if one.ID() != "s1" || one.Epoch() == "" || one.Last() != 0 {
		t.Fatalf("opened %q epoch %q last %d", one.ID(), one.Epoch(), one.Last())
	}
	if got := do(ctx, one, `{"id":"p1","type":"prompt","message":"demo:tool read {\"path\":\"f.txt\"}"}`); got != `{"id":"p1","type":"response","command":"prompt","success":true}` {
		t.Fatalf("prompt answered %s", got)
	}
	if got := do(ctx, one, `{"id":"f1","type":"fork","sessionId":"s1"}`); got != `{"id":"f1","type":"response","command":"fork","success":false,"error":"Unknown command: fork"}` {
		t.Fatalf("fork answered %s", got)
	}
	if got := do(ctx, one, `{"type":"host_tool_result","id":"nobody","result":{"content":[]}}`); got != "" {
		t.Fatalf("a host_tool_result no call waits for answered %s", got)
	}
	first := e1.waitFor(t, 16)

	// A second server serves it from now on; the events before come from
	// the workflow's log, the same bytes with the same numbers.
	e2 := newEmitted()
	two, err := OpenServed(ctx, o, false, nil, e2.emit)
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	if two.Epoch() != one.Epoch() || two.Last() != 16 {
		t.Fatalf("second: epoch %q (first %q), last %d", two.Epoch(), one.Epoch(), two.Last())
	}
	var replay []Frame
	lost, err := two.Events(ctx, 3, func(seq int64, frame []byte) { replay = append(replay, Frame{seq, append([]byte(nil), frame...)}) })
	if err != nil || lost {
		t.Fatalf("events after 3: lost %v, %v", lost, err)
	}
	if len(replay) != 13 {
		t.Fatalf("events after 3: %d, want 13", len(replay))
	}
	for i, f := range replay {
		if f.Seq != first[i+3].Seq || string(f.Data) != string(first[i+3].Data) {
			t.Fatalf("replayed %d %s, first server had %d %s", f.Seq, f.Data, first[i+3].Seq, first[i+3].Data)
		}
	}
	seq, msgs, err := two.Messages(ctx)
	if err != nil || seq != 16 || strings.Count(string(msgs), `"role":`) < 4 {
		t.Fatalf("messages at %d: %s (%v)", seq, msgs, err)
	}

	// A prompt through the second: both follow it, numbered alike.
	do(ctx, two, `{"id":"p2","type":"prompt","message":"again"}`)
	a, b := e1.waitFor(t, 24), e2.waitFor(t, 24)
	if len(b) != 8 || b[0].Seq != 17 {
		t.Fatalf("the second server emitted %d events from %d", len(b), b[0].Seq)
	}
	for i := range b {
		if string(a[16+i].Data) != string(b[i].Data) || a[16+i].Seq != b[i].Seq {
			t.Fatalf("the servers differ at %d: %s against %s", b[i].Seq, a[16+i].Data, b[i].Data)
		}
	}
	// compact answers when its compaction is over, after its Do; a
	// get_state sent meanwhile passes it: each answer reaches its asker.
	compacted := make(chan string, 2)
	one.Do(ctx, []byte(`{"id":"c1","type":"compact"}`), func(b []byte) { compacted <- string(b) })
	if got := do(ctx, one, `{"id":"s1","type":"get_state"}`); !strings.HasPrefix(got, `{"id":"s1","type":"response","command":"get_state","success":true`) {
		t.Fatalf("get_state during compact answered %s", got)
	}
	select {
	case got := <-compacted:
		if !strings.HasPrefix(got, `{"id":"c1","type":"response","command":"compact",`) {
			t.Fatalf("compact answered %s", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("compact never answered")
	}
	if len(compacted) != 0 {
		t.Fatal("compact answered twice")
	}
	two.Settle(ctx)
	e1.mu.Lock()
	deltas := e1.deltas
	e1.mu.Unlock()
	if deltas == 0 {
		t.Error("the first server's endpoint got no delta")
	}
}
