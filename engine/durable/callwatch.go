package durable

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// callWatch is what watches a model call on a worker, as a session's
// watches do (engine/loop.go streamAssistant): the stall watchdog
// (engine.WatchStall: a provider silent for the idle timeout fails the
// call with the engine's retryable stall error) and the TTSR rules
// (engine.RuleWatch: a match of an interrupting rule cuts the call after
// the delta that broke it; the activity reports the rules, the workflow
// does the rest). The provider's callback goroutine owns it.
type callWatch struct {
	ctx    context.Context // the stream's: cancelled by a stall or a cut
	cancel context.CancelCauseFunc
	seen   atomic.Uint64
	stop   func()
	idle   time.Duration
	rules  *engine.RuleWatch
	cut    []*engine.Rule
}

// errRuleCut is the cancellation cause of a call a rule cut.
var errRuleCut = errors.New(engine.AbortedMessage)

// watchCall starts the watches of one call under ctx (the activity's);
// injected are the rules this session already injected (they fire once
// per branch).
func (a *Activities) watchCall(ctx context.Context, injected []string) *callWatch {
	w := &callWatch{idle: a.StreamIdleTimeout}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	w.stop = engine.WatchStall(a.clock(), a.StreamIdleTimeout, w.cancel, &w.seen, new(atomic.Bool))
	w.rules = engine.NewRuleWatch(a.Rules, func(name string) bool { return contains(injected, name) }, a.Cwd)
	return w
}

// before is called for each stream event before it is applied: a
// stream already ended answers with its cause.
func (w *callWatch) before() error {
	w.seen.Add(1)
	if w.ctx.Err() != nil {
		return context.Cause(w.ctx)
	}
	return nil
}

// after is called once the event is applied (its delta shown): a rule
// that matches cuts the call here.
func (w *callWatch) after(ev engine.StreamEvent) error {
	if hit := w.rules.Observe(ev); len(hit) > 0 {
		w.cut = hit
		w.cancel(errRuleCut)
		return errRuleCut
	}
	return nil
}

// end stops the watches and returns the call's failure as the session
// would see it (a stall is the engine's stall error), and whether a rule
// cut it.
func (w *callWatch) end(serr error) (error, bool) {
	w.stop()
	cause := context.Cause(w.ctx)
	w.cancel(nil)
	if w.cut != nil {
		return serr, true
	}
	if engine.Stalled(cause) {
		return engine.StallError(w.idle), false
	}
	return serr, false
}

// report records the rules that matched in the call's result.
func (w *callWatch) report(out *ModelOutput) {
	for _, r := range w.cut {
		out.Rules = append(out.Rules, *r)
	}
	for _, r := range w.rules.Deferred() {
		out.Deferred = append(out.Deferred, *r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
