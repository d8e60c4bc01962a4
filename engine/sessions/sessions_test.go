package sessions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

func TestMain(m *testing.M) {
	engine.CheckReentry(true)
	m.Run()
}

// streamFunc adapts a function to engine.Provider.
type streamFunc func(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error

func (f streamFunc) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	return f(ctx, req, fn)
}

// sinkFunc adapts a function to engine.Sink.
type sinkFunc func(engine.Event)

func (f sinkFunc) Event(ev engine.Event) { f(ev) }

// reply streams text with a little usage.
func reply(ctx context.Context, text string, fn func(engine.StreamEvent) error) error {
	for _, ev := range []engine.StreamEvent{{Kind: engine.StreamTextStart}, {Kind: engine.StreamTextDelta, Delta: text}, {Kind: engine.StreamTextEnd},
		{Kind: engine.StreamUsage, Usage: engine.Usage{Input: 1, Output: 2, TotalTokens: 3}}, {Kind: engine.StreamDone, StopReason: engine.StopStop}} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// fakeBuilder builds in-memory sessions on its provider, continuing the
// stored records it has by id.
type fakeBuilder struct {
	provider engine.Provider
	window   int
	stored   map[string][]*engine.Entry
	ids      atomic.Int64
	mu       sync.Mutex
	closed   []string // the sessions whose parts were closed
	started  []string
}

func (b *fakeBuilder) Build(req Request) (*Parts, error) {
	var resume *engine.LoadedSession
	id := fmt.Sprintf("s%d", b.ids.Add(1))
	if req.ID != "" {
		es, ok := b.stored[req.ID]
		if !ok {
			return nil, ErrUnknown
		}
		id = req.ID
		resume = &engine.LoadedSession{ID: id, Entries: es, Leaf: es[len(es)-1].ID}
	}
	m := engine.Model{ID: "m", API: "fake", Provider: "fake", ContextWindow: b.window, MaxTokens: 1000}
	if m.ContextWindow == 0 {
		m.ContextWindow = 100000
	}
	p := &Parts{Config: engine.Config{Provider: b.provider, Model: &m, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, SessionID: id, Cwd: req.Cwd, RetryBaseDelay: time.Millisecond}, Resume: resume}
	p.Start = func(*engine.Session) {
		b.mu.Lock()
		b.started = append(b.started, id)
		b.mu.Unlock()
	}
	p.Close = func() {
		b.mu.Lock()
		b.closed = append(b.closed, id)
		b.mu.Unlock()
	}
	return p, nil
}

func (b *fakeBuilder) Stored(cwd string) ([]Info, error) {
	var out []Info
	for id := range b.stored {
		if cwd == "" || cwd == "/stored" {
			out = append(out, Info{ID: id, Cwd: "/stored"})
		}
	}
	return out, nil
}

// open opens and starts a new session of m.
func open(t *testing.T, m *Manager, cwd string) *Live {
	t.Helper()
	l, err := m.Open(Request{Cwd: cwd}, Front{Sink: sinkFunc(func(engine.Event) {})})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	return l
}

func TestOpenListAndCloseAll(t *testing.T) {
	t.Parallel()
	b := &fakeBuilder{provider: streamFunc(func(ctx context.Context, _ *engine.Request, fn func(engine.StreamEvent) error) error {
		return reply(ctx, "hi", fn)
	}), stored: map[string][]*engine.Entry{"old": {{Type: engine.EntryMessage, ID: "e1",
		Message: &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("before")}}}}}}
	m := New(Options{Builder: b})
	a := open(t, m, "/a")
	open(t, m, "/b")
	// A request for a stored session continues it; a second one finds it live.
	old, err := m.Open(Request{Cwd: "/a", ID: "old"}, Front{Value: 1})
	if err != nil {
		t.Fatal(err)
	}
	old.Start()
	var n int
	old.Engine().Call(func() { n = len(old.Engine().Messages()) })
	if n != 1 || old.ID() != "old" {
		t.Fatalf("resumed %q with %d messages", old.ID(), n)
	}
	again, err := m.Open(Request{Cwd: "/a", ID: "old"}, Front{Value: 2})
	if err != nil || again != old || again.Value() != 1 {
		t.Fatalf("second open: %v, same session %v", err, again == old)
	}
	if _, err := m.Open(Request{ID: "nosuch"}, Front{}); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown id: %v", err)
	}
	if m.Get(a.ID()) != a {
		t.Fatal("Get does not find the session")
	}
	infos, err := m.List("")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range infos {
		got = append(got, fmt.Sprintf("%s:%v", in.ID, in.Live))
	}
	if strings.Join(got, " ") != "old:true s1:true s2:true" {
		t.Fatalf("list %v", got)
	}
	if infos, _ := m.List("/b"); len(infos) != 1 || infos[0].ID != "s2" {
		t.Fatalf("list /b %+v", infos)
	}
	if r, err := a.Ask(context.Background(), "hello", nil); err != nil || r.Last.Text() != "hi" {
		t.Fatalf("ask: %+v %v", r, err)
	}
	m.CloseAll(false)
	if len(m.Live()) != 0 {
		t.Fatal("sessions left after CloseAll")
	}
	b.mu.Lock()
	closed := len(b.closed)
	b.mu.Unlock()
	if closed != 3 {
		t.Fatalf("%d sessions' parts closed, want 3", closed)
	}
	if _, err := m.Open(Request{}, Front{}); !errors.Is(err, ErrClosing) {
		t.Fatalf("open after CloseAll: %v", err)
	}
}

func TestTurnResults(t *testing.T) {
	t.Parallel()
	overflow := &engine.ProviderError{Kind: engine.ErrorContextOverflow, Status: 400, Message: "400 the input length exceeds the context length"}
	failure := &engine.ProviderError{Kind: engine.ErrorOther, Status: 400, Message: "400 bad request"}
	var calls atomic.Int64
	p := streamFunc(func(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
		n := calls.Add(1)
		last := req.Messages[len(req.Messages)-1]
		text := ""
		if u, ok := last.(*engine.UserMessage); ok {
			text = u.Text()
		}
		switch {
		case strings.HasPrefix(text, "fail"):
			return failure
		case strings.HasPrefix(text, "block"):
			if err := fn(engine.StreamEvent{Kind: engine.StreamTextStart}); err != nil {
				return err
			}
			<-ctx.Done()
			return ctx.Err()
		case strings.HasPrefix(text, "big") && n == 1:
			return overflow
		case strings.Contains(req.SystemPrompt, "summar"):
			return reply(ctx, "the summary", fn)
		}
		return reply(ctx, "answer to "+text, fn)
	})
	x := strings.Repeat("x", 4000)
	var es []*engine.Entry
	for i, msg := range []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("q1 " + x)}},
		&engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock("a1 " + x)}, StopReason: engine.StopStop},
		&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("q2 " + x)}},
		&engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock("a2 " + x)}, StopReason: engine.StopStop},
	} {
		e := &engine.Entry{Type: engine.EntryMessage, ID: fmt.Sprintf("e%d", i+1), Message: msg}
		if i > 0 {
			e.ParentID = es[i-1].ID
		}
		es = append(es, e)
	}
	b := &fakeBuilder{provider: p, window: 4000, stored: map[string][]*engine.Entry{"long": es}}
	m := New(Options{Builder: b})
	t.Cleanup(func() { m.CloseAll(true) })

	// An automatic compaction (the first call overflows): the result is
	// the retry's answer, reported once the compaction is over.
	var types []string
	var tmu sync.Mutex
	long, err := m.Open(Request{ID: "long"}, Front{Sink: sinkFunc(func(ev engine.Event) {
		tmu.Lock()
		types = append(types, ev.EventType())
		tmu.Unlock()
	})})
	if err != nil {
		t.Fatal(err)
	}
	long.Start()
	r, err := long.Ask(context.Background(), "big question", nil)
	tmu.Lock()
	seen := strings.Join(types, " ")
	tmu.Unlock()
	if err != nil || r.Stop != engine.StopStop || r.Last.Text() != "answer to big question" {
		t.Fatalf("after compaction: %+v %v", r, err)
	}
	if !strings.Contains(seen, "auto_compaction_end") || !strings.HasSuffix(seen, "agent_end") {
		t.Fatalf("reported before the session settled: %s", seen)
	}

	l := open(t, m, "/w")
	// end_turn
	if r, err := l.Ask(context.Background(), "hello", nil); err != nil || r.Stop != engine.StopStop || r.Usage.TotalTokens != 3 {
		t.Fatalf("end turn: %+v %v", r, err)
	}
	// error: the provider's typed error
	r, err = l.Ask(context.Background(), "fail now", nil)
	var pe *engine.ProviderError
	if err != nil || r.Stop != engine.StopError || !errors.As(r.Err, &pe) || pe != failure {
		t.Fatalf("error: %+v %v", r, err)
	}
	// aborted: Cancel while the turn runs; the turn asked after the
	// cancel runs normally.
	done := make(chan engine.TurnResult, 2)
	l.Enqueue(func() {
		l.Prompt(&Turn{Text: "block please", Gen: l.Generation(), Done: func(r engine.TurnResult) { done <- r }})
	})
	for {
		var streaming bool
		l.Engine().Call(func() { streaming = l.Engine().IsStreaming() })
		if streaming {
			break
		}
		time.Sleep(time.Millisecond)
	}
	queued := l.Generation()
	l.Enqueue(func() {
		l.Prompt(&Turn{Text: "queued", Gen: queued, Done: func(r engine.TurnResult) { done <- r }})
	})
	l.Cancel()
	if r := <-done; r.Stop != engine.StopAborted || r.Last == nil || r.Last.ErrorMessage != engine.AbortedMessage {
		t.Fatalf("aborted: %+v", r)
	}
	// Asked before the cancel, not started yet: cancelled too, no run.
	if r := <-done; r.Stop != engine.StopAborted || r.Last != nil {
		t.Fatalf("queued before the cancel: %+v", r)
	}
	if r, err := l.Ask(context.Background(), "after", nil); err != nil || r.Last.Text() != "answer to after" {
		t.Fatalf("after the cancel: %+v %v", r, err)
	}
	// Ask's context ends: the turn is aborted and Ask returns the cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for {
			var streaming bool
			l.Engine().Call(func() { streaming = l.Engine().IsStreaming() })
			if streaming {
				cancel(errors.New("stop"))
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	if r, err := l.Ask(ctx, "block again", nil); err == nil || err.Error() != "stop" || r.Stop != engine.StopAborted {
		t.Fatalf("ask cancelled: %+v %v", r, err)
	}
}

// Turns run one at a time, in order, each answered with its own result.
func TestTurnsInOrder(t *testing.T) {
	t.Parallel()
	b := &fakeBuilder{provider: streamFunc(func(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
		u := req.Messages[len(req.Messages)-1].(*engine.UserMessage)
		return reply(ctx, "re: "+u.Text(), fn)
	})}
	m := New(Options{Builder: b})
	t.Cleanup(func() { m.CloseAll(false) })
	l := open(t, m, "/w")
	var mu sync.Mutex
	var got []string
	all := make(chan struct{})
	for i := range 5 {
		text := fmt.Sprint("p", i)
		gen := l.Generation()
		l.Enqueue(func() {
			l.Prompt(&Turn{Text: text, Gen: gen, Done: func(r engine.TurnResult) {
				mu.Lock()
				got = append(got, r.Last.Text())
				if len(got) == 5 {
					close(all)
				}
				mu.Unlock()
			}})
		})
	}
	// A command of the front is a turn too.
	ran := make(chan struct{})
	l.Enqueue(func() {
		l.Prompt(&Turn{Run: func(done func()) { close(ran); done() }, Gen: l.Generation(), Done: func(r engine.TurnResult) {
			if r.Stop != "" || r.Last != nil {
				t.Errorf("command result %+v", r)
			}
		}})
	})
	<-all
	<-ran
	if strings.Join(got, ",") != "re: p0,re: p1,re: p2,re: p3,re: p4" {
		t.Fatalf("results %v", got)
	}
}

// A session the front runs itself (RPC) is released by Close: its parts
// and store close, nothing waits for a pump that never ran.
func TestCloseUnstarted(t *testing.T) {
	t.Parallel()
	b := &fakeBuilder{provider: streamFunc(func(context.Context, *engine.Request, func(engine.StreamEvent) error) error { return nil })}
	m := New(Options{Builder: b})
	l, err := m.Open(Request{}, Front{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { l.Engine().Loop(); close(done) }()
	l.Engine().Stop()
	<-done
	l.Close(false)
	if len(b.closed) != 1 || m.Get(l.ID()) != nil {
		t.Fatalf("closed %v, still listed %v", b.closed, m.Get(l.ID()) != nil)
	}
}
