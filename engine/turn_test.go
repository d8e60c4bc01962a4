package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// promptResult prompts s and waits for the prompt's result.
func promptResult(t *testing.T, s *Session, text string, opts PromptOptions) TurnResult {
	t.Helper()
	ch := make(chan TurnResult, 2)
	opts.Done = func(r TurnResult) { ch <- r }
	var err error
	s.Call(func() { err = s.Prompt(text, opts) })
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	r := <-ch
	waitIdle(s)
	if len(ch) != 0 {
		t.Fatal("Done called twice")
	}
	return r
}

func TestTurnResultEndTurn(t *testing.T) {
	t.Parallel()
	s := newTestSession(t, textReply("Hel", "lo"), &recorder{})
	r := promptResult(t, s, "hi", PromptOptions{})
	if r.Stop != StopStop || r.Err != nil || r.Last == nil || r.Last.Text() != "Hello" {
		t.Fatalf("result %+v", r)
	}
	if r.Usage.Input != 1 || r.Usage.Output != 2 || r.Usage.TotalTokens != 3 {
		t.Fatalf("usage %+v", r.Usage)
	}
	var idle bool
	s.Call(func() { idle = s.idle() && len(s.turns) == 0 })
	if !idle {
		t.Fatal("the session is not settled, or the watch is still open")
	}
}

func TestTurnResultAborted(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var once sync.Once
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		if err := fn(StreamEvent{Kind: StreamTextStart}); err != nil {
			return err
		}
		once.Do(func() { close(started) })
		<-ctx.Done()
		return ctx.Err()
	})
	s := newTestSession(t, p, &recorder{})
	ch := make(chan TurnResult, 1)
	s.Call(func() {
		if err := s.Prompt("hi", PromptOptions{Done: func(r TurnResult) { ch <- r }}); err != nil {
			t.Error(err)
		}
	})
	<-started
	s.Interrupt()
	r := <-ch
	if r.Stop != StopAborted || r.Err != nil || r.Last == nil || r.Last.ErrorMessage != AbortedMessage {
		t.Fatalf("result %+v", r)
	}
}

func TestTurnResultError(t *testing.T) {
	t.Parallel()
	failure := &ProviderError{Kind: ErrorOther, Status: 400, Message: "400 bad request"}
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error { return failure })
	s := newTestSession(t, p, &recorder{})
	r := promptResult(t, s, "hi", PromptOptions{})
	if r.Stop != StopError || r.Last == nil || r.Last.ErrorMessage != "400 bad request" {
		t.Fatalf("result %+v", r)
	}
	var pe *ProviderError
	if !errors.As(r.Err, &pe) || pe != failure {
		t.Fatalf("err %v: want the provider's typed error", r.Err)
	}
}

func TestTurnResultNotStarted(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: DeterministicEpoch, IDs: &SequentialIDs{}})
	go s.Loop()
	t.Cleanup(s.Stop)
	called := false
	var err error
	s.Call(func() { err = s.Prompt("hi", PromptOptions{Done: func(TurnResult) { called = true }}) })
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v", err)
	}
	s.Call(func() {
		if called || len(s.turns) != 0 {
			t.Errorf("Done called (%v) or watch left open (%d) for a prompt that did not start", called, len(s.turns))
		}
	})
}

// After an overflow the session compacts and retries: the result is the
// retry's answer, once the compaction is over, with the usage of every
// call of the turn.
func TestTurnResultAfterAutomaticCompaction(t *testing.T) {
	t.Parallel()
	x := strings.Repeat("x", 400)
	var mu sync.Mutex
	calls := 0
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case n == 1:
			return &ProviderError{Kind: ErrorContextOverflow, Status: 400, Message: "400 the input length exceeds the context length"}
		case req.SystemPrompt == summarySystemPrompt:
			return textReply("summary ", fmt.Sprint(n))(ctx, req, fn)
		}
		return textReply("answer")(ctx, req, fn)
	})
	rec := &recorder{}
	s := compactSession(t, p, 1000, rec)
	ch := make(chan TurnResult, 1)
	s.Call(func() {
		for _, m := range []Message{user("q1 " + x), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)} {
			s.appendMessage(m)
		}
		s.compact.disabled = false
		if err := s.Prompt("q3 "+x, PromptOptions{Done: func(r TurnResult) { ch <- r }}); err != nil {
			t.Error(err)
		}
	})
	r := <-ch
	rec.mu.Lock()
	types := strings.Join(rec.types, " ")
	rec.mu.Unlock()
	if !strings.Contains(types, "auto_compaction_end") || !strings.HasSuffix(types, "agent_end") {
		t.Fatalf("reported before the session settled: %s", types)
	}
	if r.Stop != StopStop || r.Err != nil || r.Last == nil || r.Last.Text() != "answer" {
		t.Fatalf("result %+v", r)
	}
	// The failed call has no usage; the retry's answer counts once.
	if r.Usage.TotalTokens != 3 {
		t.Fatalf("usage %+v", r.Usage)
	}
}

// A prompt aborted in its Input hook ends as aborted with no message.
func TestTurnResultAbortedInInputHook(t *testing.T) {
	t.Parallel()
	h := &inputHolder{entered: make(chan struct{})}
	h.fakeHooks.input = func(InputHook) InputResult { return InputResult{} } // Has(HookInput)
	s := startSession(t, Config{Provider: textReply("x"), Hooks: h})
	ch := make(chan TurnResult, 1)
	s.Call(func() {
		if err := s.Prompt("hi", PromptOptions{Done: func(r TurnResult) { ch <- r }}); err != nil {
			t.Error(err)
		}
	})
	<-h.entered
	s.Interrupt()
	r := <-ch
	if r.Stop != StopAborted || r.Last != nil || r.Err != nil {
		t.Fatalf("result %+v", r)
	}
}

// inputHolder holds the Input hook until it is cancelled.
type inputHolder struct {
	fakeHooks
	entered chan struct{}
}

func (h *inputHolder) Input(ctx context.Context, in InputHook) InputResult {
	close(h.entered)
	<-ctx.Done()
	return InputResult{}
}

// An extension command's prompt settles once the command is over, with
// no run.
func TestTurnResultExtensionCommand(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{commands: []SlashCommand{{Name: "hello", Source: CommandExtension}}, ran: make(chan string, 1)}
	p := &requestLog{}
	s := startSession(t, Config{Provider: p, Hooks: h, Commands: []CommandSource{h}})
	r := promptResult(t, s, "/hello world", PromptOptions{})
	if got := <-h.ran; got != "hello world" {
		t.Fatalf("ran %q", got)
	}
	if r.Stop != "" || r.Last != nil || r.Err != nil || len(p.reqs) != 0 {
		t.Fatalf("result %+v, %d model calls", r, len(p.reqs))
	}
}
