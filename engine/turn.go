package engine

import "errors"

// TurnResult is how a prompt ended, reported once (PromptOptions.Done)
// when the session has settled after it: the run it started and every
// post-run stage (retry, TTSR, compaction, todo reminders), or the
// extension command it named, are over. A front answers a prompt from it
// instead of reading its own event stream.
type TurnResult struct {
	// Stop is the stop reason of the last assistant message of the turn;
	// StopAborted when the turn was aborted, also before any message (in
	// its Input hook). It is "" when the prompt started no run: an
	// extension command ran instead, or an input step consumed it.
	Stop StopReason
	// Err is why the turn failed: the reason it could not start after its
	// Input hook (ErrBusy, ErrNoModel, ...), or the last assistant
	// message's error (Stop is StopError): the provider's typed error when
	// there is one.
	Err error
	// Last is the turn's last assistant message (nil: none).
	Last *AssistantMessage
	// Usage is the sum over the turn's assistant messages (retries and
	// every tool round included).
	Usage Usage
	// Budget is the budget the turn's run stopped on (nil: none); Stop is
	// then StopAborted, and Last the message the budget ended.
	Budget *BudgetError
	// Output is the final answer's JSON (compact) when the prompt asked
	// for an output schema and the answer matched it; when it never did,
	// Err is an *OutputSchemaError.
	Output []byte
}

// turnWatch collects a prompt's outcome while the session works on it:
// every assistant message recorded while it is open counts. Actor state.
type turnWatch struct {
	done    func(TurnResult)
	res     TurnResult
	aborted bool // ended in its Input hook by an abort
}

// openTurn starts collecting for a prompt whose opts ask for its result;
// nil when they do not. (actor)
func (s *Session) openTurn(opts PromptOptions) *turnWatch {
	if opts.Done == nil {
		return nil
	}
	w := &turnWatch{done: opts.Done}
	s.turns = append(s.turns, w)
	return w
}

// settleTurn reports w's result once the session is idle (at once if it
// is). (actor)
func (s *Session) settleTurn(w *turnWatch) {
	if w == nil {
		return
	}
	s.WhenIdle(func() {
		s.dropTurn(w)
		res := w.res
		if w.aborted && res.Stop == "" {
			res.Stop = StopAborted
		}
		w.done(res)
	})
}

// failTurn reports a failure found after Prompt returned (after the Input
// hook). (actor)
func (s *Session) failTurn(w *turnWatch, err error) {
	if w == nil {
		return
	}
	w.res.Err = err
	s.settleTurn(w)
}

// observeAssistant counts a recorded assistant message in every open
// turn. r.err is the provider's error when the message is its failure.
// (actor)
func (s *Session) observeAssistant(r *run, a *AssistantMessage) {
	if len(s.turns) == 0 {
		return
	}
	var err error
	if a.StopReason == StopError {
		err = r.err
		if err == nil || err.Error() != a.ErrorMessage {
			err = errors.New(a.ErrorMessage)
		}
	}
	for _, w := range s.turns {
		w.res.Last, w.res.Stop, w.res.Err = a, a.StopReason, err
		w.res.Usage.add(&a.Usage)
	}
}

// add sums o into u.
func (u *Usage) add(o *Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.TotalTokens += o.TotalTokens
	if o.PremiumRequests != nil {
		n := *o.PremiumRequests
		if u.PremiumRequests != nil {
			n += *u.PremiumRequests
		}
		u.PremiumRequests = &n
	}
	u.Cost.Input += o.Cost.Input
	u.Cost.Output += o.Cost.Output
	u.Cost.CacheRead += o.Cost.CacheRead
	u.Cost.CacheWrite += o.Cost.CacheWrite
	u.Cost.Total += o.Cost.Total
}

// dropTurn forgets a watch whose prompt failed to start (Prompt returns
// the error instead). (actor)
func (s *Session) dropTurn(w *turnWatch) {
	for i, o := range s.turns {
		if o == w {
			s.turns = append(s.turns[:i], s.turns[i+1:]...)
			return
		}
	}
}
