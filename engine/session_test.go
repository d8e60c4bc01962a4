package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// funcProvider adapts a function to Provider.
type funcProvider func(ctx context.Context, req *Request, fn func(StreamEvent) error) error

func (f funcProvider) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	return f(ctx, req, fn)
}

// recorder is a Sink keeping every encoded event.
type recorder struct {
	mu     sync.Mutex
	frames []string
	types  []string
	notify chan string
}

func (r *recorder) Event(ev Event) {
	r.mu.Lock()
	r.frames = append(r.frames, string(ev.AppendJSON(nil)))
	r.types = append(r.types, ev.EventType())
	r.mu.Unlock()
	if r.notify != nil {
		r.notify <- ev.EventType()
	}
}

func textReply(deltas ...string) funcProvider {
	return func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		evs := []StreamEvent{{Kind: StreamTextStart}}
		for _, d := range deltas {
			evs = append(evs, StreamEvent{Kind: StreamTextDelta, Delta: d})
		}
		evs = append(evs, StreamEvent{Kind: StreamTextEnd}, StreamEvent{Kind: StreamUsage, Usage: Usage{Input: 1, Output: 2, TotalTokens: 3}}, StreamEvent{Kind: StreamDone, StopReason: StopStop})
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	}
}

func newTestSession(t *testing.T, p Provider, sink Sink) *Session {
	t.Helper()
	m := Model{ID: "m", API: "fake", Provider: "fake", Reasoning: true}
	s := New(Config{Provider: p, Model: &m, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Sink: sink})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	t.Cleanup(func() {
		idle := make(chan struct{})
		s.Post(func() { s.WhenIdle(func() { close(idle) }) })
		<-idle
		s.Stop()
		<-done
	})
	return s
}

func waitIdle(s *Session) {
	idle := make(chan struct{})
	s.Post(func() { s.WhenIdle(func() { close(idle) }) })
	<-idle
}

func TestPromptEventOrder(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s := newTestSession(t, textReply("Hel", "lo"), rec)
	var err error
	s.Call(func() { err = s.Prompt("hi", PromptOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(s)
	want := "agent_start turn_start message_start message_end message_start message_update message_update message_update message_update message_end turn_end agent_end"
	if got := strings.Join(rec.types, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	last := rec.frames[len(rec.frames)-1]
	if !strings.Contains(last, `"content":[{"type":"text","text":"Hello"}]`) || !strings.Contains(last, `"stopReason":"stop"`) {
		t.Fatalf("agent_end = %s", last)
	}
	var text string
	var ok bool
	s.Call(func() { text, ok = s.LastAssistantText() })
	if !ok || text != "Hello" {
		t.Fatalf("last text %q %v", text, ok)
	}
}

func TestAbortMidStream(t *testing.T) {
	t.Parallel()
	rec := &recorder{notify: make(chan string, 64)}
	blocking := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		if err := fn(StreamEvent{Kind: StreamTextStart}); err != nil {
			return err
		}
		if err := fn(StreamEvent{Kind: StreamTextDelta, Delta: "part"}); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	})
	s := newTestSession(t, blocking, rec)
	s.Call(func() { _ = s.Prompt("hi", PromptOptions{}) })
	for ev := range rec.notify {
		if ev == "message_update" {
			rec.mu.Lock()
			n := strings.Count(strings.Join(rec.types, " "), "message_update")
			rec.mu.Unlock()
			if n == 2 {
				break
			}
		}
	}
	var busy error
	s.Call(func() { busy = s.Prompt("again", PromptOptions{}) })
	if busy != ErrBusy {
		t.Fatalf("busy = %v", busy)
	}
	aborted := make(chan struct{})
	go func() {
		for range rec.notify {
		}
	}()
	s.Post(func() { s.Abort(func() { close(aborted) }) })
	<-aborted
	rec.mu.Lock()
	defer rec.mu.Unlock()
	end := rec.frames[len(rec.frames)-3]
	if !strings.Contains(end, `"type":"message_end"`) || !strings.Contains(end, `"stopReason":"aborted","errorMessage":"Request was aborted"`) || !strings.Contains(end, `"text":"part"`) {
		t.Fatalf("message_end = %s", end)
	}
	if rec.types[len(rec.types)-1] != "agent_end" {
		t.Fatalf("last event %s", rec.types[len(rec.types)-1])
	}
}

func TestAppendStateJSONMatchesMarshal(t *testing.T) {
	t.Parallel()
	s := newTestSession(t, textReply("x"), &recorder{})
	s.Call(func() {
		for i := 0; i < 3; i++ {
			want, err := MarshalJSON(s.State())
			if err != nil {
				t.Fatal(err)
			}
			if got := s.AppendStateJSON(nil); string(got) != string(want) {
				t.Fatalf("got %s\nwant %s", got, want)
			}
			s.set.name = "named <&>"
			s.set.version++
			s.todo.phases = []TodoPhase{{ID: "p", Name: "n", Tasks: []TodoItem{{ID: "t", Content: "c", Status: "pending"}}}}
			s.set.thinking = ""
		}
	})
}

// A host that prompts as soon as it reads agent_end must find the session
// idle: agent_end and the switch to idle are one step of the actor. The
// sink posts the next prompt while agent_end is being emitted, the
// earliest moment a host could.
func TestPromptRightAfterAgentEndIsAccepted(t *testing.T) {
	t.Parallel()
	n := &endNotifier{errs: make(chan error, 1)}
	s := newTestSession(t, textReply("ok"), n)
	n.s = s
	s.Call(func() {
		if err := s.Prompt("first", PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	if err := <-n.errs; err != nil {
		t.Fatalf("prompt after agent_end: %v", err)
	}
}

type endNotifier struct {
	s     *Session
	errs  chan error
	fired bool
}

func (n *endNotifier) Event(ev Event) {
	if ev.EventType() != "agent_end" || n.fired {
		return
	}
	n.fired = true
	n.s.later(func() { n.errs <- n.s.Prompt("second", PromptOptions{}) })
}
