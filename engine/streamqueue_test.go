package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stalledSink is a Sink whose output blocks on the first text_delta frame
// until released, as a host that stops reading does.
type stalledSink struct {
	recorder
	release chan struct{}
	once    sync.Once
	stalled chan struct{} // closed when the blocking frame starts
	backlog atomic.Bool
}

func newStalledSink() *stalledSink {
	return &stalledSink{release: make(chan struct{}), stalled: make(chan struct{})}
}

func (k *stalledSink) Event(ev Event) {
	u, ok := ev.(MessageUpdate)
	block := false
	if ok && u.Kind == UpdateTextDelta {
		k.once.Do(func() { block = true })
	}
	// As rpc's writer: the flag says whether this frame had to wait, and
	// stays until the next frame is written.
	k.backlog.Store(block)
	if block {
		close(k.stalled)
		<-k.release
	}
	k.recorder.Event(ev)
}

// backlogSink adds Backlog to a stalledSink.
type backlogSink struct{ *stalledSink }

func (b backlogSink) Backlogged() bool { return b.backlog.Load() }

// deltaStream streams one text block of n deltas of d; progress counts the
// events handed to the engine, done is closed once all are.
type deltaStream struct {
	n        int
	d        string
	progress atomic.Int64
	done     chan struct{}
}

func (p *deltaStream) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	emit := func(ev StreamEvent) error {
		p.progress.Add(1)
		return fn(ev)
	}
	if err := emit(StreamEvent{Kind: StreamTextStart}); err != nil {
		return err
	}
	for i := 0; i < p.n; i++ {
		if err := emit(StreamEvent{Kind: StreamTextDelta, Delta: p.d}); err != nil {
			return err
		}
	}
	err := emit(StreamEvent{Kind: StreamTextEnd})
	if err == nil {
		err = emit(StreamEvent{Kind: StreamDone, StopReason: StopStop})
	}
	close(p.done)
	return err
}

// deltaUpdates returns the deltas of the text_delta updates and the final
// text of the assistant's message_end.
func deltaUpdates(t *testing.T, rec *recorder) (deltas []string, final string) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, f := range rec.frames {
		switch rec.types[i] {
		case "message_update":
			if j := strings.Index(f, `"type":"text_delta","contentIndex":0,"delta":"`); j >= 0 {
				rest := f[j+len(`"type":"text_delta","contentIndex":0,"delta":"`):]
				deltas = append(deltas, rest[:strings.IndexByte(rest, '"')])
			}
		case "message_end":
			if j := strings.Index(f, `"role":"assistant","content":[{"type":"text","text":"`); j >= 0 {
				rest := f[j+len(`"role":"assistant","content":[{"type":"text","text":"`):]
				final = rest[:strings.IndexByte(rest, '"')]
			}
		}
	}
	return deltas, final
}

// A host that stops reading while a reply streams gets the deltas that
// piled up meanwhile in one frame: the same text, far fewer frames.
func TestSlowHostDeltasMerged(t *testing.T) {
	t.Parallel()
	sink := newStalledSink()
	p := &deltaStream{n: 5000, d: "ab", done: make(chan struct{})}
	s := startSession(t, Config{Provider: p, Sink: backlogSink{sink}})
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	<-sink.stalled
	<-p.done // the provider was never held up by the stalled host
	close(sink.release)
	waitIdle(s)
	deltas, final := deltaUpdates(t, &sink.recorder)
	if want := strings.Repeat("ab", 5000); final != want || strings.Join(deltas, "") != want {
		t.Fatalf("final text %d bytes, deltas %d bytes; want %d", len(final), len(strings.Join(deltas, "")), len(want))
	}
	if len(deltas) > 3 {
		t.Errorf("%d text_delta frames, want the piled-up deltas merged (at most 3)", len(deltas))
	}
}

// Without a Sink that reports a backlog nothing is merged, however the
// events pile up: transcripts never depend on timing.
func TestNoBacklogNoMerge(t *testing.T) {
	t.Parallel()
	sink := newStalledSink()
	p := &deltaStream{n: 3000, d: "ab", done: make(chan struct{})}
	s := startSession(t, Config{Provider: p, Sink: sink})
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	<-sink.stalled
	close(sink.release)
	waitIdle(s)
	deltas, final := deltaUpdates(t, &sink.recorder)
	if len(deltas) != 3000 || final != strings.Repeat("ab", 3000) {
		t.Fatalf("%d text_delta frames (want 3000), final text %d bytes", len(deltas), len(final))
	}
}

// The idle watchdog measures the provider's silence only: a provider held
// up by our own full queue (the host stopped reading) is not stalled.
func TestWatchdogIgnoresOurBackpressure(t *testing.T) {
	t.Parallel()
	sink := newStalledSink()
	clock := NewManualClock(int64(DeterministicEpoch))
	p := &deltaStream{n: 3 * streamQueueMax, d: "ab", done: make(chan struct{})}
	s := startSession(t, Config{Provider: p, Sink: sink, Clock: clock, StreamIdleTimeout: 40 * time.Second})
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	<-sink.stalled
	for p.progress.Load() < streamQueueMax {
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 8; i++ { // 80 s of the provider waiting for us
		// The watchdog waits on the clock again after each check, unless
		// it has ended the stream.
		for deadline := time.Now().Add(10 * time.Second); clock.Waiters() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				close(sink.release)
				s.Call(func() { s.SetAutoRetry(false) })
				s.Cancel(AllKinds...)
				t.Fatalf("the watchdog stopped after %d checks: it counted our own backpressure as the provider's silence", i)
			}
		}
		clock.Advance(10 * time.Second)
	}
	close(sink.release)
	waitIdle(s)
	rec := &sink.recorder
	rec.mu.Lock()
	all := strings.Join(rec.frames, "\n")
	rec.mu.Unlock()
	if strings.Contains(all, "stream stall") {
		t.Fatal("the watchdog counted our own backpressure as the provider's silence")
	}
	if _, final := deltaUpdates(t, rec); final != strings.Repeat("ab", 3*streamQueueMax) {
		t.Fatalf("final text of %d bytes", len(final))
	}
}

func TestStreamQueueMerge(t *testing.T) {
	t.Parallel()
	backlog := true
	q := newStreamQueue(nil)
	q.backlogged = func() bool { return backlog }
	d := func(k StreamEventKind, s string) StreamEvent { return StreamEvent{Kind: k, Delta: s} }
	for _, ev := range []StreamEvent{
		{Kind: StreamTextStart}, d(StreamTextDelta, "a"), d(StreamTextDelta, "b\xff"), d(StreamTextDelta, "c"),
		{Kind: StreamTextEnd}, {Kind: StreamThinkingStart}, d(StreamThinkingDelta, "t1"), d(StreamThinkingDelta, "t2"),
		{Kind: StreamUsage}, d(StreamThinkingDelta, "t3"),
		{Kind: StreamToolCallStart, ToolCallID: "c1"}, {Kind: StreamToolCallDelta, ToolCallID: "c1", Delta: `{"a"`}, {Kind: StreamToolCallDelta, ToolCallID: "c1", Delta: `:1}`},
		{Kind: StreamTextDelta, Delta: "x"}, {Kind: StreamTextDelta, Delta: "y", ResponseID: "r1"},
	} {
		if _, ok := q.push(ev); !ok {
			t.Fatal("push refused")
		}
	}
	var got []string
	for {
		ev, ok := q.pop()
		if !ok {
			break
		}
		got = append(got, ev.Delta)
	}
	want := []string{"", "ab\uFFFDc", "", "", "t1t2", "", "t3", "", `{"a":1}`, "x", "y"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("popped %q\nwant   %q", got, want)
	}
	q.close()
	if _, ok := q.push(StreamEvent{}); ok {
		t.Error("a push after close was taken")
	}
}
