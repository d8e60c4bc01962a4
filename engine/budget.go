package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Budgets: what one run may spend (Config.Budget, SetBudget): its cost in
// US dollars from the model's per-million prices, its tokens (input,
// cached or not, and output) and its wall time on the session's clock,
// beside Config.MaxTurns. A run is a prompt's whole activity, its retries,
// rule re-runs, reminders and schema retries included; Continue resumes
// the run before it with what that run had spent, a prompt starts from
// nothing.
//
// A limit is reached when the spending is at or over it. It is checked
// before every model call (a run that has reached one makes no call: the
// turn's message is the budget's error) and while a call streams: the call
// counts with the usage its provider reported, its input taken to be the
// previous call's until the provider says, and its output at least its
// streamed deltas at four bytes a token. The delta that reaches a limit is
// applied, then the provider call is aborted and the message kept, marked
// (stopReason "aborted", errorMessage the budget's text). The time limit
// is a timer: it ends the run the moment it passes (a retry wait or a
// compaction then finishes first, and the run stops before its next call).
// Either way the run ends through its own context, cancelled with a
// *BudgetError as the cause: nothing after it (retry, compaction,
// reminders) runs, and agent_end carries the budget.
//
// Per delta the check is one addition and one comparison against a byte
// count worked out when the call starts and at each usage report
// (BenchmarkBudgetObserve5000Deltas: about 3 ns a delta; a 5,000-delta
// stream through a session takes the same time with and without a budget,
// BenchmarkStream5000DeltasBudget); a run without a cost or token limit
// has no meter at all.

// StopBudgetReached is agent_end's stopReason when the run reached a
// budget (ours, additive: the original's agent_end has none).
const StopBudgetReached = "budget_reached"

// BudgetKind names a budget.
type BudgetKind string

// The budgets.
const (
	BudgetCost   BudgetKind = "cost"   // US dollars
	BudgetTokens BudgetKind = "tokens" // input (cached or not) and output tokens
	BudgetTime   BudgetKind = "time"   // milliseconds of wall time
)

// Budget is the limits of a run; a zero field is no limit.
type Budget struct {
	MaxCost   float64 // US dollars
	MaxTokens int64
	MaxTime   time.Duration
}

// IsZero reports whether b limits nothing.
func (b Budget) IsZero() bool { return b.MaxCost == 0 && b.MaxTokens == 0 && b.MaxTime == 0 }

// ErrInvalidBudget: a limit that is negative or not a number.
var ErrInvalidBudget = errors.New("a budget must be a non-negative number (0: no limit)")

// Validate reports a limit that is negative or not a finite number.
func (b Budget) Validate() error {
	if b.MaxCost < 0 || math.IsNaN(b.MaxCost) || math.IsInf(b.MaxCost, 0) || b.MaxTokens < 0 || b.MaxTime < 0 {
		return ErrInvalidBudget
	}
	return nil
}

// BudgetSpent is what a run has spent.
type BudgetSpent struct {
	Cost   float64
	Tokens int64
	Time   time.Duration
}

// BudgetError is why a run stopped on a budget: which one, what the run
// had spent and the limit (US dollars for cost, tokens, milliseconds for
// time). It is the cause the run's context is cancelled with, the
// agent_end's budget and TurnResult.Budget.
type BudgetError struct {
	Kind         BudgetKind
	Spent, Limit float64
}

func (e *BudgetError) Error() string {
	switch e.Kind {
	case BudgetCost:
		return fmt.Sprintf("Budget reached: the run has cost $%s of its $%s (--max-cost); the run stops here", usd(e.Spent), usd(e.Limit))
	case BudgetTokens:
		return fmt.Sprintf("Budget reached: the run has used %d tokens of its %d (--max-tokens); the run stops here", int64(e.Spent), int64(e.Limit))
	}
	return fmt.Sprintf("Budget reached: the run has taken %s of its %s (--max-time); the run stops here", msDuration(e.Spent), msDuration(e.Limit))
}

// usd writes dollars to the millionth, without trailing zeros.
func usd(v float64) string {
	return strconv.FormatFloat(roundMicro(v), 'f', -1, 64)
}

// roundMicro rounds to the millionth: sums of prices carry float noise
// (0.30000000000000004) that a host should not see.
func roundMicro(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func msDuration(ms float64) string { return (time.Duration(ms) * time.Millisecond).String() }

// appendJSON encodes {"name","spent","limit"}.
func (e *BudgetError) appendJSON(dst []byte) []byte {
	dst = AppendJSONString(append(dst, `{"name":`...), string(e.Kind))
	dst = appendBudgetNumber(appendKey(dst, "spent"), e.Kind, e.Spent)
	dst = appendBudgetNumber(appendKey(dst, "limit"), e.Kind, e.Limit)
	return append(dst, '}')
}

func appendBudgetNumber(dst []byte, k BudgetKind, v float64) []byte {
	if k == BudgetCost {
		return appendFloat(dst, roundMicro(v))
	}
	return strconv.AppendInt(dst, int64(v), 10)
}

// budgetCause is the budget a cancelled context stopped on (nil: none).
func budgetCause(ctx context.Context) *BudgetError {
	var be *BudgetError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &be) {
		return be
	}
	return nil
}

// BudgetState is get_state.budget (absent while no limit is set): the
// limits, and what the current run, or the last, has spent.
type BudgetState struct {
	MaxCost   float64
	MaxTokens int64
	MaxTimeMs int64
	Spent     BudgetSpent
}

// MarshalJSON encodes b as AppendJSON does.
func (b *BudgetState) MarshalJSON() ([]byte, error) { return b.AppendJSON(nil), nil }

// AppendJSON appends {"maxCost"?,"maxTokens"?,"maxTimeMs"?,"spent":{"cost",
// "tokens","timeMs"}}: the limits set, and the spending (cost rounded to
// the millionth of a dollar).
func (b *BudgetState) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if b.MaxCost > 0 {
		dst = appendFloat(append(dst, `"maxCost":`...), b.MaxCost)
		dst = append(dst, ',')
	}
	if b.MaxTokens > 0 {
		dst = strconv.AppendInt(append(dst, `"maxTokens":`...), b.MaxTokens, 10)
		dst = append(dst, ',')
	}
	if b.MaxTimeMs > 0 {
		dst = strconv.AppendInt(append(dst, `"maxTimeMs":`...), b.MaxTimeMs, 10)
		dst = append(dst, ',')
	}
	dst = appendFloat(append(dst, `"spent":{"cost":`...), roundMicro(b.Spent.Cost))
	dst = appendIntField(dst, "tokens", b.Spent.Tokens)
	dst = appendIntField(dst, "timeMs", b.Spent.Time.Milliseconds())
	return append(dst, '}', '}')
}

// budgetState is the session's budget: actor state.
type budgetState struct {
	limits Budget
	// spent is the current run's spending, or the last run's once it is
	// over: its time counts while a run is active, from since.
	spent  BudgetSpent
	active bool
	since  int64         // clock milliseconds when the active run's time started counting
	timer  chan struct{} // closed to disarm the active run's time limit; nil: none armed
}

// timeSpent is the run's time so far. (actor)
func (b *budgetState) timeSpent(now int64) time.Duration {
	t := b.spent.Time
	if b.active {
		t += time.Duration(now-b.since) * time.Millisecond
	}
	return t
}

// plugBudget plugs the budgets in (features.go): their limits from the
// configuration, the stream watch (a nil check per event for a call
// without a meter), and, on a new record, nothing spent.
func (s *Session) plugBudget() {
	s.budget.limits = s.cfg.Budget
	s.watches = append(s.watches, s.budgetWatch)
	s.onInstall = append(s.onInstall, func() { s.budget.spent = BudgetSpent{} })
}

// Budget returns the limits and the spending of the current run, or of
// the last one. (actor)
func (s *Session) Budget() BudgetState {
	l := s.budget.limits
	sp := s.budget.spent
	sp.Time = s.budget.timeSpent(s.now())
	return BudgetState{MaxCost: l.MaxCost, MaxTokens: l.MaxTokens, MaxTimeMs: l.MaxTime.Milliseconds(), Spent: sp}
}

// Limits returns the budget's limits. (actor)
func (s *Session) Limits() Budget { return s.budget.limits }

// SetBudget replaces the limits (a zero field: no limit). During a run the
// time limit applies at once (its timer is armed again), the cost and
// token limits from the next model call. Raising a limit a run stopped on
// and calling Continue resumes that run. (actor)
func (s *Session) SetBudget(b Budget) (BudgetState, error) {
	if err := b.Validate(); err != nil {
		return BudgetState{}, err
	}
	s.budget.limits = b
	if s.budget.active {
		s.armBudgetTimer()
	}
	return s.Budget(), nil
}

// budgetState is get_state.budget: nil while no limit is set. (actor)
func (s *Session) budgetStateOrNil() *BudgetState {
	if s.budget.limits.IsZero() {
		return nil
	}
	st := s.Budget()
	return &st
}

// startBudget starts counting a run's time; fresh (a prompt) starts the
// spending from nothing, otherwise (Continue) the run goes on from what
// the one before it spent. (actor)
func (s *Session) startBudget(fresh bool) {
	if fresh {
		s.budget.spent = BudgetSpent{}
	}
	s.budget.active, s.budget.since = true, s.now()
	s.armBudgetTimer()
}

// stopBudget stops counting the run's time. A time limit that fired is
// spent whole, also on a clock that does not move. (actor)
func (s *Session) stopBudget(r *run) {
	if !s.budget.active {
		return
	}
	s.budget.spent.Time = s.budget.timeSpent(s.now())
	s.budget.active = false
	if be := r.timeUp; be != nil {
		if t := time.Duration(be.Spent) * time.Millisecond; s.budget.spent.Time < t {
			s.budget.spent.Time = t
		}
	}
	s.disarmBudgetTimer()
}

func (s *Session) disarmBudgetTimer() {
	if s.budget.timer != nil {
		close(s.budget.timer)
		s.budget.timer = nil
	}
}

// armBudgetTimer (re)starts the active run's time limit: when it passes,
// the run is told (timeUp). (actor)
func (s *Session) armBudgetTimer() {
	s.disarmBudgetTimer()
	r, limit := s.run, s.budget.limits.MaxTime
	if r == nil || limit <= 0 {
		return
	}
	now := s.now()
	left := limit - s.budget.timeSpent(now)
	base, since := s.budget.spent.Time, s.budget.since
	stop := make(chan struct{})
	s.budget.timer = stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if left > 0 {
			ch, stopTimer := s.cfg.Clock.After(left)
			select {
			case <-ch:
			case <-stop:
				stopTimer()
				return
			}
		}
		// The timer says the limit has passed, whatever a frozen clock
		// reads.
		spent := max(base+time.Duration(s.now()-since)*time.Millisecond, limit)
		be := &BudgetError{Kind: BudgetTime, Spent: float64(spent.Milliseconds()), Limit: float64(limit.Milliseconds())}
		s.Post(func() { s.timeUp(r, be) })
	}()
}

// timeUp stops a run whose time limit has passed: at once while it runs
// (streams, tools, a hook), at its next model call while it waits for a
// retry or compacts, so what that work started is not left half done.
// (actor)
func (s *Session) timeUp(r *run, be *BudgetError) {
	if s.run != r || r.timeUp != nil {
		return
	}
	r.timeUp = be
	if s.phase == PhaseRunning {
		r.cancel(be)
	}
}

// budgetBeforeCall is the check before a model call: the budget the run
// has reached, or nil. (actor)
func (s *Session) budgetBeforeCall(r *run) *BudgetError {
	if r.timeUp != nil {
		return r.timeUp
	}
	l := s.budget.limits
	if l.IsZero() {
		return nil
	}
	sp := s.budget.spent
	switch {
	case l.MaxTokens > 0 && sp.Tokens >= l.MaxTokens:
		return &BudgetError{Kind: BudgetTokens, Spent: float64(sp.Tokens), Limit: float64(l.MaxTokens)}
	case l.MaxCost > 0 && costReached(sp.Cost, l.MaxCost):
		return &BudgetError{Kind: BudgetCost, Spent: sp.Cost, Limit: l.MaxCost}
	case l.MaxTime > 0:
		if t := s.budget.timeSpent(s.now()); t >= l.MaxTime {
			return &BudgetError{Kind: BudgetTime, Spent: float64(t.Milliseconds()), Limit: float64(l.MaxTime.Milliseconds())}
		}
	}
	return nil
}

// costReached compares dollars with room for float noise.
func costReached(spent, limit float64) bool { return spent+1e-12 >= limit }

// budgetTurn ends a run that has reached a budget before its model call:
// the turn (already started, its pending messages delivered) gets an
// empty assistant message whose error is the budget, recorded as a
// provider failure is, and the run's context ends with the budget as its
// cause. (actor)
func (s *Session) budgetTurn(r *run, be *BudgetError) {
	msg := &AssistantMessage{Content: []ContentBlock{}, StopReason: StopAborted, ErrorMessage: be.Error(), Timestamp: s.now()}
	if m := s.set.model; m != nil {
		msg.API, msg.Provider, msg.Model = m.API, m.Provider, m.ID
	}
	s.emit(MessageStart{Message: msg})
	s.addMessage(r, msg)
	s.emit(MessageEnd{Message: msg})
	s.emit(TurnEnd{Message: msg, ToolResults: []*ToolResultMessage{}})
	r.cancel(be)
}

// newBudgetMeter is the meter of the model call about to be made, nil
// without a cost or token limit. (actor)
func (s *Session) newBudgetMeter(r *run) *budgetMeter {
	l := s.budget.limits
	if l.MaxCost == 0 && l.MaxTokens == 0 {
		return nil
	}
	m := &budgetMeter{limits: l, price: r.model.Cost, base: s.budget.spent, cancel: r.cancel}
	m.assumed = s.lastInput()
	m.crossAt = m.threshold()
	return m
}

// lastInputScan bounds how far back lastInput looks for a response.
const lastInputScan = 256

// lastInput is the input side of the last response in the context: what
// the next call is taken to send at least (the context only grows, but
// for a compaction, which starts a context without responses). (actor)
func (s *Session) lastInput() Usage {
	c := s.rec.context
	for i := len(c) - 1; i >= 0 && i >= len(c)-lastInputScan; i-- {
		if a, ok := c[i].(*AssistantMessage); ok && a.StopReason != StopError && a.StopReason != StopAborted {
			if u := a.Usage; u.Input+u.CacheRead+u.CacheWrite > 0 {
				return Usage{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
			}
		}
	}
	return Usage{}
}

// commitBudget adds a finished call to the run's spending: its reported
// usage, or, for a call cut short or never reported, what its meter
// counted. (actor)
func (s *Session) commitBudget(r *run, msg *AssistantMessage) {
	u := msg.Usage
	if m := r.meter; m != nil && (!m.reported || msg.StopReason == StopAborted) {
		u = m.live()
		u.ApplyCost(m.price)
	}
	s.budget.spent.Tokens += usageTokens(u)
	s.budget.spent.Cost += u.Cost.Total
}

func usageTokens(u Usage) int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// budgetWatch is the budgets' stream watch: the call's meter, when it has
// one. (run goroutine)
func (s *Session) budgetWatch(r *run, ev StreamEvent) error {
	if r.meter == nil {
		return nil
	}
	return r.meter.observe(ev)
}

// budgetMeter counts one model call against the cost and token limits.
// It is made on the executor before the call and owned by the run
// goroutine while the call streams (the stream watch), then read on the
// executor again (commitBudget).
type budgetMeter struct {
	limits   Budget
	price    ModelCost
	base     BudgetSpent // the run's spending before this call
	assumed  Usage       // the input taken until the provider reports usage
	usage    Usage       // the provider's last report
	reported bool
	streamed int64 // bytes of the call's deltas
	// crossAt is the streamed byte count at which a limit is reached
	// (math.MaxInt64: none): the only thing a delta is compared with.
	crossAt int64
	cancel  context.CancelCauseFunc // the run's
}

// observe counts one event; at the delta that reaches a limit it ends the
// run with the budget as the cause and returns it.
func (m *budgetMeter) observe(ev StreamEvent) error {
	switch ev.Kind {
	case StreamTextDelta, StreamThinkingDelta, StreamToolCallDelta:
		m.streamed += int64(len(ev.Delta))
		if m.streamed >= m.crossAt {
			return m.cross()
		}
	case StreamUsage:
		m.usage, m.reported = ev.Usage, true
		m.crossAt = m.threshold()
	}
	return nil
}

// live is the call's usage so far: the report, the assumed input before
// one, and at least the streamed output at four bytes a token.
func (m *budgetMeter) live() Usage {
	u := m.usage
	if !m.reported {
		u.Input, u.CacheRead, u.CacheWrite = m.assumed.Input, m.assumed.CacheRead, m.assumed.CacheWrite
	}
	if est := m.streamed / 4; est > u.Output {
		u.Output = est
	}
	return u
}

// threshold is the streamed byte count at which the call's spending
// reaches a limit, given what is reported: 0 when it already has (the
// next delta ends the call), math.MaxInt64 when no streaming can.
func (m *budgetMeter) threshold() int64 {
	u := m.usage
	if !m.reported {
		u = m.assumed
	}
	at := int64(math.MaxInt64)
	if m.limits.MaxTokens > 0 {
		left := m.limits.MaxTokens - m.base.Tokens - (u.Input + u.CacheRead + u.CacheWrite)
		if u.Output >= left {
			return 0
		}
		at = min(at, bytesFor(float64(left)))
	}
	if m.limits.MaxCost > 0 {
		in := u
		in.Output = 0
		in.ApplyCost(m.price)
		left := m.limits.MaxCost - m.base.Cost - in.Cost.Total
		if costReached(0, left) {
			return 0
		}
		if m.price.Output > 0 {
			n := math.Ceil(left / (m.price.Output / 1e6)) // output tokens that reach it
			if float64(u.Output) >= n {
				return 0
			}
			at = min(at, bytesFor(n))
		}
	}
	return at
}

// bytesFor is the streamed bytes that estimate n tokens, capped.
func bytesFor(n float64) int64 {
	if n >= math.MaxInt64/8 {
		return math.MaxInt64
	}
	return int64(n) * 4
}

// cross is the slow path, at the delta that reaches the threshold: it
// works the spending out exactly and ends the run on the limit reached
// (float noise that leaves it just short moves the threshold a token on).
func (m *budgetMeter) cross() error {
	u := m.live()
	var be *BudgetError
	if l := m.limits.MaxTokens; l > 0 {
		if t := m.base.Tokens + usageTokens(u); t >= l {
			be = &BudgetError{Kind: BudgetTokens, Spent: float64(t), Limit: float64(l)}
		}
	}
	if l := m.limits.MaxCost; be == nil && l > 0 {
		u.ApplyCost(m.price)
		if c := m.base.Cost + u.Cost.Total; costReached(c, l) {
			be = &BudgetError{Kind: BudgetCost, Spent: c, Limit: l}
		}
	}
	if be == nil {
		m.crossAt = m.streamed + 4
		return nil
	}
	m.crossAt = math.MaxInt64
	m.cancel(be)
	return be
}
