package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Auto-retry (agent-core.md §7): when a run ends on a transient provider
// failure, the run goroutine waits (abortably, on the injected clock) and
// runs again from the same context, visibly: auto_retry_start after the
// failed run's agent_end, a new agent_start, and auto_retry_end at the
// message_end of the first assistant message that succeeds.

// Retry defaults (retry.maxRetries, retry.baseDelayMs).
const (
	DefaultMaxRetries = 3
	DefaultRetryBase  = 2 * time.Second
	// RetryCancelled is the finalError of a retry wait ended by abort or
	// abort_retry.
	RetryCancelled = "Retry cancelled"
)

// retryState is actor state.
type retryState struct {
	disabled bool // set_auto_retry false
	attempt  int  // 1-based attempt of the retry in progress; 0: none
}

// The original's classification of a failure text (§7.1). Every pattern
// of the product compiles on first use (sync.OnceValue), not at package
// init: init runs on every start, and compiling them all there was a
// sixth of the time to the first answer.
var (
	retryTransport = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|timed? out|timeout|terminated|retry delay|stream stall`)
	})
	retryEnvelope  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)anthropic stream envelope error:`) })
	retryBeforeMsg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)before message_start`) })
	retryUsage     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)usage.?limit|usage_limit_reached|usage_not_included|limit_reached|quota.?exceeded|resource.?exhausted`)
	})
	retryOverflow = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)context.?length|context.?window|prompt is too long|maximum context|too many tokens|exceeds? the (model's )?context`)
	})
)

// retryable decides whether a failed assistant message is worth another
// attempt: a typed provider error says so by its kind; any failure text
// (the fake provider's, an adapter's) is classified as the original does.
func retryable(msg *AssistantMessage, err error) bool {
	if msg == nil || msg.StopReason != StopError || msg.ErrorMessage == "" {
		return false
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		switch {
		case pe.Kind == ErrorContextOverflow || pe.Kind == ErrorAuth || pe.Kind == ErrorProtocol || pe.Kind == ErrorNoServer:
			return false
		case pe.Kind.Retryable():
			return true
		}
	}
	text := msg.ErrorMessage
	if retryOverflow().MatchString(text) {
		return false
	}
	return retryTransport().MatchString(text) || retryUsage().MatchString(text) ||
		(retryEnvelope().MatchString(text) && retryBeforeMsg().MatchString(text))
}

// retryAfter is the delay the backend asked for: the typed error's delay,
// or the time from c's now to its retry instant (one already past asks for
// nothing), else one parsed from the failure text as the original's
// adapters append it.
func retryAfter(c Clock, msg *AssistantMessage, err error) time.Duration {
	var pe *ProviderError
	if errors.As(err, &pe) {
		if pe.RetryAfter > 0 {
			return pe.RetryAfter
		}
		if !pe.RetryAt.IsZero() {
			if d := pe.RetryAt.Sub(time.UnixMilli(c.NowMillis())); d > 0 {
				return d
			}
		}
	}
	if m := retryAfterMs().FindStringSubmatch(msg.ErrorMessage); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return time.Duration(n) * time.Millisecond
		}
	}
	if m := retryAfterS().FindStringSubmatch(msg.ErrorMessage); m != nil {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil {
			return time.Duration(f * float64(time.Second))
		}
	}
	return 0
}

var (
	retryAfterMs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)retry-after-ms[=:]\s*(\d+)`) })
	retryAfterS  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)retry-after:\s*(\d+(?:\.\d+)?)\b`) })
)

// AbortRetry ends a retry wait and calls done once its auto_retry_end has
// been emitted and the session is idle; at once when no retry is waiting.
// The wait itself was cancelled ahead of the queue (Cancel(ActRetry)); the
// cancellation here covers a caller that did not preempt. (actor)
func (s *Session) AbortRetry(done func()) {
	s.Cancel(ActRetry)
	if s.phase != PhaseRetrying {
		done()
		return
	}
	s.WhenIdle(done)
}

// SetAutoRetry turns automatic retry on or off for the session. (actor)
func (s *Session) SetAutoRetry(enabled bool) { s.retry.disabled = !enabled }

// lastAssistant returns the run's last assistant message.
func (r *run) lastAssistant() *AssistantMessage {
	for i := len(r.newMessages) - 1; i >= 0; i-- {
		if a, ok := r.newMessages[i].(*AssistantMessage); ok {
			return a
		}
	}
	return nil
}

// plugRetry plugs auto-retry in (features.go): the first post-run stage,
// and a new record starts with no retry in progress.
func (s *Session) plugRetry() {
	s.stages = append(s.stages, s.retryStage)
	s.onInstall = append(s.onInstall, func() { s.retry.attempt = 0 })
}

// retryStage is the post-run decision of auto-retry, taken in the step
// that emits agent_end. (actor)
func (s *Session) retryStage(r *run, aborted bool) *postRun {
	msg := r.lastAssistant()
	if aborted || !retryable(msg, r.err) || s.retry.disabled {
		if s.retry.attempt > 0 {
			// Every auto_retry_start gets its end: an abort, a failure of
			// another kind, or retry turned off closes the retry in progress.
			final := RetryCancelled
			if !aborted && msg != nil && msg.ErrorMessage != "" {
				final = msg.ErrorMessage
			}
			s.emit(AutoRetryEnd{Success: false, Attempt: s.retry.attempt, FinalError: final})
			s.setStatus("retry", "")
			s.retry.attempt = 0
		}
		return nil
	}
	s.retry.attempt++
	if s.retry.attempt > DefaultMaxRetries {
		s.emit(AutoRetryEnd{Success: false, Attempt: s.retry.attempt - 1, FinalError: msg.ErrorMessage})
		s.setStatus("retry", "")
		s.retry.attempt = 0
		return nil
	}
	attempt := s.retry.attempt
	delay := RetryDelay(s.cfg.Clock, s.cfg.RetryBaseDelay, attempt, msg, r.err) // decide.go
	s.emit(AutoRetryStart{Attempt: attempt, MaxAttempts: DefaultMaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: msg.ErrorMessage})
	// Hosts that show extension UI but not retry events still tell their
	// user why nothing happens for a while.
	s.notify("warning", fmt.Sprintf("Retrying in %s (attempt %d of %d): %s", humanDelay(delay), attempt, DefaultMaxRetries, msg.ErrorMessage))
	s.setStatus("retry", fmt.Sprintf("Retrying (attempt %d of %d)", attempt, DefaultMaxRetries))
	// The failed message leaves the context (the record keeps it): the next
	// attempt asks again from the same user message.
	s.rec.hideLast()
	return &postRun{phase: PhaseRetrying, act: ActRetry,
		work: func(ctx context.Context) bool { return Sleep(ctx, s.cfg.Clock, delay) == nil },
		// The wait was cancelled (abort, abort_retry): the retry ends in the
		// same step as the session goes idle, so a get_state sent after
		// auto_retry_end finds it idle.
		finish: func() {
			if s.retry.attempt == attempt {
				s.emit(AutoRetryEnd{Success: false, Attempt: attempt, FinalError: RetryCancelled})
				s.setStatus("retry", "")
				s.retry.attempt = 0
			}
		}}
}

// retrySucceeded closes a retry in progress at the message_end of an
// assistant message that did not fail. (actor)
func (s *Session) retrySucceeded(msg *AssistantMessage) {
	if s.retry.attempt == 0 || msg.StopReason == StopError || msg.StopReason == StopAborted {
		return
	}
	s.emit(AutoRetryEnd{Success: true, Attempt: s.retry.attempt})
	s.setStatus("retry", "")
	s.retry.attempt = 0
}

// DefaultStreamIdleTimeout ends a model call that has sent nothing for
// this long (beyond the original, whose runs can hang for ever on a
// stalled provider).
const DefaultStreamIdleTimeout = 180 * time.Second

// errStalled is the cancellation cause of a stream the watchdog ended.
var errStalled = errors.New("stream stalled")

// watchStream is the session's stall watchdog (WatchStall) for one
// model call.
func (s *Session) watchStream(cancel context.CancelCauseFunc, seen *atomic.Uint64, ours *atomic.Bool) (stop func()) {
	return WatchStall(s.cfg.Clock, s.cfg.StreamIdleTimeout, cancel, seen, ours)
}

// WatchStall cancels a model call's stream with a stall (Stalled) when
// seen has not moved for idle (0: DefaultStreamIdleTimeout; negative: no
// watch). It checks four times per period (the clock has no notion of
// "last event" under the frozen test clock, so progress is a counter): a
// stall is detected between 1 and 1.25 timeouts after the last event. A
// check that finds ours set (the provider waits for us, not we for it:
// the stream queue is full) counts as progress, so only the provider's
// own silence is measured. The returned stop function ends the watch and
// waits for it. The session and the model-call activity of a durable
// session both watch with it.
func WatchStall(clock Clock, idle time.Duration, cancel context.CancelCauseFunc, seen *atomic.Uint64, ours *atomic.Bool) (stop func()) {
	if idle < 0 {
		return func() {}
	}
	if idle == 0 {
		idle = DefaultStreamIdleTimeout
	}
	tick := idle / 4
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		last, quiet := seen.Load(), 0
		for {
			ch, stopTimer := clock.After(tick)
			select {
			case <-done:
				stopTimer()
				return
			case <-ch:
			}
			if n := seen.Load(); n != last || ours.Load() {
				last, quiet = n, 0
				continue
			}
			if quiet++; quiet >= 4 {
				cancel(errStalled)
				return
			}
		}
	}()
	return func() { close(done); <-exited }
}

// Stalled reports whether a stream's cancellation cause is the stall
// watchdog's.
func Stalled(cause error) bool { return errors.Is(cause, errStalled) }

// stallError is the failure of a stream the watchdog ended.
func (s *Session) stallError() error { return StallError(s.cfg.StreamIdleTimeout) }

// StallError is the failure of a stream the watchdog ended after idle (0:
// DefaultStreamIdleTimeout): retryable ("stream stall" is in the
// original's transport pattern).
func StallError(idle time.Duration) error {
	if idle == 0 {
		idle = DefaultStreamIdleTimeout
	}
	return &ProviderError{Kind: ErrorTransport, Err: errStalled,
		Message: fmt.Sprintf("stream stall: the provider sent nothing for %gs", idle.Seconds())}
}

// humanDelay writes a retry delay the way a person reads it: "2s",
// "250ms", "1m30s".
func humanDelay(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
