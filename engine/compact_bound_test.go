package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A conversation that needs many parts is summarised in at most
// maxSummaryChunks history calls, from its newest part: the earliest
// messages are left out with a note heading the first part, the newest
// summarised message is in the last. It counts calls, not time (a 1 GiB
// session made ~2,500).
func TestCompactionChunksBounded(t *testing.T) {
	t.Parallel()
	p := &summaryProvider{}
	s := compactSession(t, p, 2000, &recorder{}) // parts of about 1,000 characters
	x := strings.Repeat("x", 600)
	const turns = 100
	s.Call(func() {
		for i := 0; i < turns; i++ {
			s.appendMessage(user(fmt.Sprintf("q%d %s", i, x)))
			s.appendMessage(reply(fmt.Sprintf("a%d %s", i, x)))
		}
	})
	if _, err := compactNow(s, ""); err != nil {
		t.Fatal(err)
	}
	var history []string
	for _, r := range p.reqs {
		if text := lastUserText(r); strings.Contains(text, "checkpoint summary") || strings.Contains(text, "Merge it into that summary") {
			history = append(history, text)
		}
	}
	if len(history) != maxSummaryChunks {
		t.Fatalf("%d history calls (of %d requests), want %d", len(history), len(p.reqs), maxSummaryChunks)
	}
	if !strings.HasPrefix(history[0], "<conversation>\n[... the ") || !strings.Contains(history[0], "earliest messages (about ") ||
		strings.Contains(history[0], "[User]: q0 ") {
		t.Errorf("first part:\n%.300s", history[0])
	}
	// The kept part is the newest ~200 tokens (the window's keep): the
	// newest summarised messages are shortly before it.
	last := history[len(history)-1]
	if !strings.Contains(last, fmt.Sprintf("a%d ", turns-3)) && !strings.Contains(last, fmt.Sprintf("a%d ", turns-2)) {
		t.Errorf("last part does not end near the kept part:\n%.300s", last)
	}
}

// The parts are the same whatever is left out: a conversation that fits
// the bound is cut exactly as before (every message, in order).
func TestCompactionChunksUnderBound(t *testing.T) {
	t.Parallel()
	j := &summaryJob{model: Model{ContextWindow: 2000}, reserve: 1000}
	var msgs []Message
	for i := 0; i < maxSummaryChunks/2; i++ { // one part each: exactly the bound
		msgs = append(msgs, user(fmt.Sprintf("q%d %s", i, strings.Repeat("y", 600))), reply(fmt.Sprintf("a%d %s", i, strings.Repeat("z", 600))))
	}
	chunks := j.chunks(&CompactionPreparation{ToSummarize: msgs, Ratio: 1})
	if len(chunks) != maxSummaryChunks {
		t.Fatalf("%d chunks", len(chunks))
	}
	if got, want := strings.Join(chunks, "\n\n"), serializeConversation(msgs); got != want {
		t.Errorf("parts joined differ from the conversation")
	}
}

// After LimitCompactions, a compaction still running when the bound
// passes is cancelled, and one started later is cancelled at once.
func TestLimitCompactions(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 2)
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		started <- struct{}{}
		<-ctx.Done()
		return context.Cause(ctx)
	})
	clock := &ManualClock{}
	m := Model{ID: "m", API: "fake", Provider: "fake", ContextWindow: 400, MaxTokens: 30000}
	s := New(Config{Provider: p, Model: &m, Clock: clock, IDs: &SequentialIDs{}, Sink: &recorder{}, RetryBaseDelay: 1})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	defer func() {
		waitIdle(s)
		s.Stop()
		<-done
		s.Close()
	}()
	x := strings.Repeat("x", 400)
	s.Call(func() {
		for _, m := range []Message{user("q1 " + x), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)} {
			s.appendMessage(m)
		}
	})
	errs := make(chan error, 1)
	s.Post(func() { s.Compact("", func(_ *CompactionResult, err error) { errs <- err }) })
	<-started
	s.LimitCompactions(time.Minute)
	s.LimitCompactions(time.Hour) // only the first counts
	for clock.Waiters() == 0 {    // the bound's timer is set
		runtime.Gosched()
	}
	clock.Advance(59 * time.Second)
	select {
	case err := <-errs:
		t.Fatalf("cancelled before the bound: %v", err)
	default:
	}
	clock.Advance(time.Second)
	if err := <-errs; !errors.Is(err, ErrCompactionCancelled) {
		t.Fatalf("err %v", err)
	}
	// A compaction started after the bound is cancelled as it starts.
	s.Post(func() { s.Compact("", func(_ *CompactionResult, err error) { errs <- err }) })
	if err := <-errs; !errors.Is(err, ErrCompactionCancelled) {
		t.Fatalf("a later compaction: %v", err)
	}
}
