package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// failThen fails the first n calls with err, then answers with text. It
// records the number of messages each call was given.
type failThen struct {
	mu    sync.Mutex
	n     int
	err   error
	calls int
	sizes []int
}

func (f *failThen) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.sizes = append(f.sizes, len(req.Messages))
	f.mu.Unlock()
	if call <= f.n {
		return f.err
	}
	return textReply("ok")(ctx, req, fn)
}

// retrySession starts a session on a manual clock and prompts it.
func retrySession(t *testing.T, p Provider, setup func(s *Session)) (*Session, *recorder, *ManualClock) {
	t.Helper()
	clock := NewManualClock(int64(DeterministicEpoch))
	rec := &recorder{}
	s := startSession(t, Config{Provider: p, Sink: rec, Clock: clock})
	s.Call(func() {
		if setup != nil {
			setup(s)
		}
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	return s, rec, clock
}

// advanceWhenWaiting moves the clock by d once something waits on it.
func advanceWhenWaiting(c *ManualClock, d time.Duration) {
	for c.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	c.Advance(d)
}

func retryFrames(rec *recorder) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []string
	for i, f := range rec.frames {
		switch rec.types[i] {
		case "auto_retry_start", "auto_retry_end":
			out = append(out, f)
		case "agent_start", "agent_end", "turn_end":
			out = append(out, rec.types[i])
		case "message_end":
			if strings.Contains(f, `"role":"assistant"`) {
				out = append(out, "message_end:"+map[bool]string{true: "error", false: "ok"}[strings.Contains(f, `"stopReason":"error"`)])
			}
		}
	}
	return out
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	p := &failThen{n: 1, err: &ProviderError{Kind: ErrorOverloaded, Status: 529, Message: "529 overloaded_error: Overloaded"}}
	s, rec, clock := retrySession(t, p, nil)
	advanceWhenWaiting(clock, 2*time.Second)
	waitIdle(s)
	want := []string{
		"agent_start", "message_end:error", "turn_end", "agent_end",
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error: Overloaded"}`,
		"agent_start", "message_end:ok",
		`{"type":"auto_retry_end","success":true,"attempt":1}`,
		"turn_end", "agent_end",
	}
	if got := retryFrames(rec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The failed message left the context (the retry asks again from the
	// user message) but not the record.
	p.mu.Lock()
	defer p.mu.Unlock()
	if fmt.Sprint(p.sizes) != "[1 1]" {
		t.Fatalf("messages per call %v", p.sizes)
	}
	s.Call(func() {
		if n := len(s.Entries()); n != 3 {
			t.Fatalf("%d entries, want user, failed and good assistant", n)
		}
		if n := len(s.Messages()); n != 2 {
			t.Fatalf("context of %d messages", n)
		}
	})
}

func TestRetryExhaustedBacksOffExponentially(t *testing.T) {
	t.Parallel()
	p := &failThen{n: 100, err: &ProviderError{Kind: ErrorOverloaded, Message: "503 service unavailable"}}
	s, rec, clock := retrySession(t, p, nil)
	for _, d := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
		advanceWhenWaiting(clock, d)
	}
	waitIdle(s)
	var starts []string
	var end string
	for _, f := range retryFrames(rec) {
		if strings.Contains(f, "auto_retry_start") {
			starts = append(starts, f)
		}
		if strings.Contains(f, "auto_retry_end") {
			end = f
		}
	}
	if len(starts) != 3 || !strings.Contains(starts[2], `"attempt":3`) || !strings.Contains(starts[2], `"delayMs":8000`) {
		t.Fatalf("starts %v", starts)
	}
	if end != `{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"503 service unavailable"}` {
		t.Fatalf("end %s", end)
	}
	if p.calls != 4 {
		t.Fatalf("%d calls", p.calls)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	p := &failThen{n: 1, err: &ProviderError{Kind: ErrorRateLimit, Status: 429, Message: "429 rate limited", RetryAfter: 7 * time.Second}}
	s, rec, clock := retrySession(t, p, nil)
	advanceWhenWaiting(clock, 6*time.Second)
	s.Call(func() {
		if s.Phase() != PhaseRetrying {
			t.Fatalf("retried before the server's delay: %v", s.Phase())
		}
	})
	clock.Advance(time.Second)
	waitIdle(s)
	if got := retryFrames(rec); !strings.Contains(strings.Join(got, " "), `"delayMs":7000`) {
		t.Fatalf("events %v", got)
	}
}

// TestRetryAfterClock: an absolute retry instant is measured on the
// session's clock, never the wall clock.
func TestRetryAfterClock(t *testing.T) {
	t.Parallel()
	epoch := time.UnixMilli(int64(DeterministicEpoch))
	manual := NewManualClock(int64(DeterministicEpoch))
	manual.Advance(30 * time.Second)
	failed := &AssistantMessage{StopReason: StopError, ErrorMessage: "429 rate limited"}
	tests := []struct {
		name  string
		clock Clock
		msg   *AssistantMessage
		err   error
		want  time.Duration
	}{
		{name: "delay", clock: DeterministicEpoch, msg: failed,
			err: &ProviderError{Kind: ErrorRateLimit, RetryAfter: 7 * time.Second}, want: 7 * time.Second},
		{name: "instant on the fixed clock", clock: DeterministicEpoch, msg: failed,
			err: &ProviderError{Kind: ErrorRateLimit, RetryAt: epoch.Add(90 * time.Second)}, want: 90 * time.Second},
		{name: "instant on a manual clock that moved", clock: manual, msg: failed,
			err: &ProviderError{Kind: ErrorRateLimit, RetryAt: epoch.Add(90 * time.Second)}, want: 60 * time.Second},
		{name: "instant through a wrapped error", clock: DeterministicEpoch, msg: failed,
			err: fmt.Errorf("stream: %w", &ProviderError{Kind: ErrorRateLimit, RetryAt: epoch.Add(1500 * time.Millisecond)}), want: 1500 * time.Millisecond},
		{name: "delay wins over instant", clock: DeterministicEpoch, msg: failed,
			err: &ProviderError{Kind: ErrorRateLimit, RetryAfter: 2 * time.Second, RetryAt: epoch.Add(time.Hour)}, want: 2 * time.Second},
		{name: "past instant asks for nothing", clock: DeterministicEpoch, msg: failed,
			err: &ProviderError{Kind: ErrorRateLimit, RetryAt: epoch.Add(-time.Minute)}},
		{name: "instant now asks for nothing", clock: DeterministicEpoch, msg: failed,
			err: &ProviderError{Kind: ErrorRateLimit, RetryAt: epoch}},
		{name: "past instant leaves the text's delay", clock: DeterministicEpoch,
			msg: &AssistantMessage{StopReason: StopError, ErrorMessage: "429 rate limited, retry-after-ms=250"},
			err: &ProviderError{Kind: ErrorRateLimit, RetryAt: epoch.Add(-time.Minute)}, want: 250 * time.Millisecond},
		{name: "nothing", clock: DeterministicEpoch, msg: failed, err: &ProviderError{Kind: ErrorRateLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := retryAfter(tt.clock, tt.msg, tt.err); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetryAtHonoured(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(int64(DeterministicEpoch)).Add(7 * time.Second)
	p := &failThen{n: 1, err: &ProviderError{Kind: ErrorRateLimit, Status: 429, Message: "429 rate limited", RetryAt: at}}
	s, rec, clock := retrySession(t, p, nil)
	advanceWhenWaiting(clock, 6*time.Second)
	s.Call(func() {
		if s.Phase() != PhaseRetrying {
			t.Fatalf("retried before the server's instant: %v", s.Phase())
		}
	})
	clock.Advance(time.Second)
	waitIdle(s)
	if got := retryFrames(rec); !strings.Contains(strings.Join(got, " "), `"delayMs":7000`) {
		t.Fatalf("events %v", got)
	}
}

func TestAbortDuringRetryWait(t *testing.T) {
	t.Parallel()
	p := &failThen{n: 1, err: &ProviderError{Kind: ErrorOverloaded, Message: "overloaded"}}
	s, rec, clock := retrySession(t, p, nil)
	for clock.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Cancel(ActRetry) // abort_retry
	waitIdle(s)
	got := retryFrames(rec)
	if last := got[len(got)-1]; last != `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}` {
		t.Fatalf("events %v", got)
	}
	if p.calls != 1 {
		t.Fatalf("%d calls after the wait was cancelled", p.calls)
	}
	// The next prompt starts a fresh count.
	p.mu.Lock()
	p.n = 0
	p.mu.Unlock()
	s.Call(func() {
		if err := s.Prompt("again", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
}

func TestNoRetryWhenDisabledOrNotTransient(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		err     error
		disable bool
	}{
		{"disabled", &ProviderError{Kind: ErrorOverloaded, Message: "overloaded"}, true},
		{"context overflow", &ProviderError{Kind: ErrorContextOverflow, Message: "prompt is too long: 300000 tokens > 200000 maximum"}, false},
		{"auth", &ProviderError{Kind: ErrorAuth, Status: 401, Message: "401 invalid x-api-key"}, false},
		// Its text would read as transient ("connection refused"): the kind wins.
		{"local server down", &ProviderError{Kind: ErrorNoServer, Message: "could not reach Ollama at http://127.0.0.1:11434: connection refused"}, false},
		{"plain text, not transient", fmt.Errorf("invalid_request_error: tools.0.name is invalid"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &failThen{n: 1, err: tc.err}
			s, rec, _ := retrySession(t, p, func(s *Session) { s.SetAutoRetry(!tc.disable) })
			waitIdle(s)
			for _, f := range retryFrames(rec) {
				if strings.HasPrefix(f, `{"type":"auto_retry`) {
					t.Fatalf("retried: %s", f)
				}
			}
		})
	}
	// Untyped errors are classified by their text, as the original does.
	for text, want := range map[string]bool{
		"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}": true,
		"fetch failed":                 true,
		"Rate limit reached for gpt-5": true,
		"usage_limit_reached":          true,
		"anthropic stream envelope error: x before message_start": true,
		"context_length_exceeded: maximum context length is 8192": false,
		"Invalid API key": false,
	} {
		msg := &AssistantMessage{StopReason: StopError, ErrorMessage: text}
		if got := retryable(msg, fmt.Errorf("%s", text)); got != want {
			t.Errorf("retryable(%q) = %v", text, got)
		}
	}
}

// blockUntilCancelled accepts the request and never sends anything.
type blockUntilCancelled struct{ calls int }

func (b *blockUntilCancelled) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	b.calls++
	if b.calls > 1 {
		return textReply("recovered")(ctx, req, fn)
	}
	<-ctx.Done()
	return context.Cause(ctx)
}

// A provider that goes silent ends the attempt with a retryable error
// after the idle timeout, and the retry recovers.
func TestStalledStreamEndsAndIsRetried(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(int64(DeterministicEpoch))
	rec := &recorder{}
	p := &blockUntilCancelled{}
	s := startSession(t, Config{Provider: p, Sink: rec, Clock: clock, StreamIdleTimeout: 40 * time.Second})
	s.Call(func() {
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	for i := 0; i < 4; i++ { // four quiet checks of 10 s
		advanceWhenWaiting(clock, 10*time.Second)
	}
	advanceWhenWaiting(clock, 2*time.Second) // the retry wait
	waitIdle(s)
	got := strings.Join(retryFrames(rec), "\n")
	if !strings.Contains(got, `"errorMessage":"stream stall: the provider sent nothing for 40s"`) ||
		!strings.Contains(got, `{"type":"auto_retry_end","success":true,"attempt":1}`) {
		t.Fatalf("events:\n%s", got)
	}
}

// A protocol failure (a page where a stream was asked for) is never
// retried, whatever its text says.
func TestProtocolErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	msg := &AssistantMessage{StopReason: StopError, ErrorMessage: `the server answered 200 with text/html instead of an event stream: "<title>502 Bad Gateway</title>"`}
	if retryable(msg, &ProviderError{Kind: ErrorProtocol, Message: msg.ErrorMessage}) {
		t.Error("a protocol error whose text says 502 was retried")
	}
}

// An abort that lands after agent_end but before the retry wait has
// registered (it cancels the run only) still ends the wait.
func TestAbortBetweenAgentEndAndRetryWait(t *testing.T) {
	t.Parallel()
	p := &failThen{n: 1, err: &ProviderError{Kind: ErrorOverloaded, Message: "overloaded"}}
	clock := NewManualClock(int64(DeterministicEpoch))
	rec := &recorder{}
	s := startSession(t, Config{Provider: p, Sink: rec, Clock: clock})
	s.Call(func() {
		s.stages = []postStage{func(r *run, aborted bool) *postRun {
			post := s.retryStage(r, aborted)
			s.Cancel(ActRun) // the abort, before the wait registers as ActRetry
			return post
		}}
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
	got := retryFrames(rec)
	if last := got[len(got)-1]; last != `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}` {
		t.Fatalf("events %v", got)
	}
}
