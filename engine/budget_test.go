package engine

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted answers call n with calls[n-1] (the last one again past the
// end), and keeps every request and how each call ended.
type scripted struct {
	mu    sync.Mutex
	calls [][]StreamEvent
	reqs  []*Request
	ended []error // what each call returned
	block bool    // after its events, the last call waits for its context
}

func (p *scripted) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	evs := p.calls[min(len(p.reqs), len(p.calls))-1]
	last := len(p.reqs) >= len(p.calls)
	p.mu.Unlock()
	err := func() error {
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		if last && p.block {
			<-ctx.Done()
			return context.Cause(ctx)
		}
		return nil
	}()
	p.mu.Lock()
	p.ended = append(p.ended, err)
	p.mu.Unlock()
	return err
}

func (p *scripted) requests() []*Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Request(nil), p.reqs...)
}

// textEvents is a whole text reply of deltas, with its usage.
func textEvents(u Usage, deltas ...string) []StreamEvent {
	evs := []StreamEvent{{Kind: StreamTextStart}}
	for _, d := range deltas {
		evs = append(evs, StreamEvent{Kind: StreamTextDelta, Delta: d})
	}
	return append(evs, StreamEvent{Kind: StreamTextEnd}, StreamEvent{Kind: StreamUsage, Usage: u}, StreamEvent{Kind: StreamDone, StopReason: StopStop})
}

// callReply is a reply calling tool name, with its usage.
func callReply(id, name string, u Usage) []StreamEvent {
	return []StreamEvent{{Kind: StreamToolCallStart, ToolCallID: id, ToolName: name}, {Kind: StreamToolCallEnd, Arguments: []byte(`{}`)},
		{Kind: StreamUsage, Usage: u}, {Kind: StreamDone, StopReason: StopToolUse}}
}

func lastFrame(rec *recorder, typ string) string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i := len(rec.types) - 1; i >= 0; i-- {
		if rec.types[i] == typ {
			return rec.frames[i]
		}
	}
	return ""
}

// A run whose spending has reached the token budget makes no further
// model call: the turn's message is the budget's error, agent_end names
// it, and the turn's result carries it.
func TestBudgetTokensBeforeCall(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := &scripted{calls: [][]StreamEvent{callReply("c1", "read", Usage{Input: 600, Output: 500}), textEvents(Usage{}, "never")}}
	s := startSession(t, Config{Provider: p, Sink: rec, Tools: []Tool{&namedTool{"read"}}, Budget: Budget{MaxTokens: 1000}})
	res := promptResult(t, s, "go", PromptOptions{})
	if n := len(p.requests()); n != 1 {
		t.Fatalf("model calls %d, want 1", n)
	}
	if res.Budget == nil || res.Budget.Kind != BudgetTokens || res.Budget.Spent != 1100 || res.Budget.Limit != 1000 || res.Stop != StopAborted {
		t.Fatalf("result %+v budget %+v", res, res.Budget)
	}
	want := "Budget reached: the run has used 1100 tokens of its 1000 (--max-tokens); the run stops here"
	if res.Last == nil || res.Last.ErrorMessage != want || len(res.Last.Content) != 0 {
		t.Fatalf("last message %+v", res.Last)
	}
	end := lastFrame(rec, "agent_end")
	if !strings.HasSuffix(end, `,"stopReason":"budget_reached","budget":{"name":"tokens","spent":1100,"limit":1000}}`) {
		t.Fatalf("agent_end %s", end)
	}
	rec.mu.Lock()
	got := strings.Join(rec.types, " ")
	rec.mu.Unlock()
	if !strings.HasSuffix(got, "tool_execution_end message_start message_end turn_end turn_start message_start message_end turn_end agent_end") {
		t.Fatalf("events %s", got)
	}
	var st BudgetState
	s.Call(func() { st = s.Budget() })
	if st.Spent.Tokens != 1100 || st.MaxTokens != 1000 {
		t.Fatalf("state %+v", st)
	}
}

// A stream that reaches the cost budget is cut at the delta that reaches
// it: the provider call ends, the partial message is kept and marked.
func TestBudgetCostCutsMidStream(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	deltas := make([]string, 100)
	for i := range deltas {
		deltas[i] = "abcd" // one estimated token each
	}
	p := &scripted{calls: [][]StreamEvent{textEvents(Usage{Output: 100}, deltas...)}}
	m := &Model{ID: "m", API: "fake", Provider: "fake", Cost: ModelCost{Output: 1e6}} // $1 a token
	s := startSession(t, Config{Provider: p, Model: m, Sink: rec, Budget: Budget{MaxCost: 10}})
	res := promptResult(t, s, "go", PromptOptions{})
	if res.Budget == nil || res.Budget.Kind != BudgetCost || res.Budget.Spent != 10 || res.Budget.Limit != 10 {
		t.Fatalf("budget %+v", res.Budget)
	}
	if got := res.Last.Text(); got != strings.Repeat("abcd", 10) {
		t.Fatalf("kept %q", got)
	}
	if res.Last.StopReason != StopAborted || !strings.HasPrefix(res.Last.ErrorMessage, "Budget reached: the run has cost $10 of its $10 (--max-cost)") {
		t.Fatalf("message %+v", res.Last)
	}
	p.mu.Lock()
	ended := p.ended[0]
	p.mu.Unlock()
	var be *BudgetError
	if !errors.As(ended, &be) {
		t.Fatalf("provider call ended with %v, want the budget", ended)
	}
	var st BudgetState
	s.Call(func() { st = s.Budget() })
	if st.Spent.Cost != 10 || st.Spent.Tokens != 10 {
		t.Fatalf("spent %+v", st.Spent)
	}
}

// Before the provider reports usage, the call's input is taken to be the
// previous call's: a call whose input alone reaches the budget is cut at
// its first delta.
func TestBudgetAssumesThePreviousInput(t *testing.T) {
	t.Parallel()
	p := &scripted{calls: [][]StreamEvent{
		callReply("c1", "read", Usage{Input: 900, Output: 10}),
		append(textEvents(Usage{}, "late", "answer")[:2:2], textEvents(Usage{Input: 950, Output: 2}, "x")...),
	}}
	s := startSession(t, Config{Provider: p, Tools: []Tool{&namedTool{"read"}}, Budget: Budget{MaxTokens: 1800}})
	res := promptResult(t, s, "go", PromptOptions{})
	if res.Budget == nil || res.Budget.Spent != 910+900+1 {
		t.Fatalf("budget %+v", res.Budget)
	}
	if got := res.Last.Text(); got != "late" {
		t.Fatalf("kept %q", got)
	}
}

// The time limit ends the run the moment it passes, whatever it is doing;
// on a clock that does not move the time spent is the limit.
func TestBudgetTimeEndsTheRun(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(int64(DeterministicEpoch))
	rec := &recorder{notify: make(chan string, 64)}
	p := &scripted{calls: [][]StreamEvent{{{Kind: StreamTextStart}, {Kind: StreamTextDelta, Delta: "working"}}}, block: true}
	s := startSession(t, Config{Provider: p, Sink: rec, Clock: clock, Budget: Budget{MaxTime: time.Second}})
	ch := make(chan TurnResult, 1)
	s.Call(func() { _ = s.Prompt("go", PromptOptions{Done: func(r TurnResult) { ch <- r }}) })
	for updates := 0; updates < 2; { // the delta is applied: the stream waits
		if <-rec.notify == "message_update" {
			updates++
		}
	}
	for clock.Waiters() == 0 { // the time limit's timer is set
		runtime.Gosched()
	}
	clock.Advance(1500 * time.Millisecond)
	res := <-ch
	if res.Budget == nil || res.Budget.Kind != BudgetTime || res.Budget.Spent != 1500 || res.Budget.Limit != 1000 {
		t.Fatalf("budget %+v", res.Budget)
	}
	if res.Last.Text() != "working" || res.Last.ErrorMessage != "Budget reached: the run has taken 1.5s of its 1s (--max-time); the run stops here" {
		t.Fatalf("message %+v", res.Last)
	}
	var st BudgetState
	s.Call(func() { st = s.Budget() })
	if st.Spent.Time != 1500*time.Millisecond || st.MaxTimeMs != 1000 {
		t.Fatalf("state %+v", st)
	}
}

// Raising the budget and continuing resumes the run from where it stood,
// with what it had spent; a new prompt starts from nothing.
func TestBudgetRaiseAndContinue(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := &scripted{calls: [][]StreamEvent{callReply("c1", "read", Usage{Input: 600, Output: 500}), textEvents(Usage{Input: 700, Output: 5}, "done")}}
	s := startSession(t, Config{Provider: p, Sink: rec, Tools: []Tool{&namedTool{"read"}}, Budget: Budget{MaxTokens: 1000}})
	if res := promptResult(t, s, "go", PromptOptions{}); res.Budget == nil {
		t.Fatalf("no budget reached: %+v", res)
	}
	var err error
	s.Call(func() { err = s.Continue(nil) })
	waitIdle(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastFrame(rec, "agent_end"), `"budget":{"name":"tokens","spent":1100,"limit":1000}`) {
		t.Fatalf("continue without more budget: %s", lastFrame(rec, "agent_end"))
	}
	if n := len(p.requests()); n != 1 {
		t.Fatalf("model calls %d", n)
	}
	s.Call(func() {
		if _, err = s.SetBudget(Budget{MaxTokens: 5000}); err == nil {
			err = s.Continue(nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(s)
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls %d", len(reqs))
	}
	// The cut turns left the context: the model sees the tool result last.
	if msgs := reqs[1].Messages; msgs[len(msgs)-1].Role() != "toolResult" {
		t.Fatalf("last message sent %s", msgs[len(msgs)-1].Role())
	}
	end := lastFrame(rec, "agent_end")
	if strings.Contains(end, "budget_reached") || !strings.Contains(end, `"text":"done"`) {
		t.Fatalf("agent_end %s", end)
	}
	var st BudgetState
	s.Call(func() { st = s.Budget() })
	if st.Spent.Tokens != 1100+705 {
		t.Fatalf("spent %+v", st.Spent)
	}
	p.mu.Lock()
	p.calls = append(p.calls, textEvents(Usage{Input: 10, Output: 1}, "again"))
	p.mu.Unlock()
	if res := promptResult(t, s, "more", PromptOptions{}); res.Budget != nil {
		t.Fatalf("budget %+v", res.Budget)
	}
	s.Call(func() { st = s.Budget() })
	if st.Spent.Tokens != 11 {
		t.Fatalf("a prompt spends from nothing: %+v", st.Spent)
	}
}

func TestContinueRefusals(t *testing.T) {
	t.Parallel()
	p := &scripted{calls: [][]StreamEvent{textEvents(Usage{}, "hi")}}
	s := startSession(t, Config{Provider: p})
	var err error
	s.Call(func() { err = s.Continue(nil) })
	if err != ErrNothingToContinue || err.Error() != "No messages to continue from" {
		t.Fatalf("empty: %v", err)
	}
	promptResult(t, s, "go", PromptOptions{})
	s.Call(func() { err = s.Continue(nil) })
	if err != ErrContinueAssistant || err.Error() != "Cannot continue from message role: assistant" {
		t.Fatalf("after an answer: %v", err)
	}
	started := false
	s.Call(func() {
		if err = s.FollowUp("next", nil); err == nil {
			err = s.Continue(func() { started = true })
		}
	})
	waitIdle(s)
	if err != nil || !started {
		t.Fatalf("with a follow-up: %v %v", err, started)
	}
	reqs := p.requests()
	if got := reqs[len(reqs)-1].Messages; len(got) != 3 || got[2].Role() != "user" {
		t.Fatalf("continued with %d messages", len(got))
	}
}

func TestSetBudgetRefusesNegatives(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("x")})
	for _, b := range []Budget{{MaxCost: -1}, {MaxTokens: -1}, {MaxTime: -time.Second}, {MaxCost: math.NaN()}, {MaxCost: math.Inf(1)}} {
		var err error
		s.Call(func() { _, err = s.SetBudget(b) })
		if !errors.Is(err, ErrInvalidBudget) {
			t.Errorf("%+v: %v", b, err)
		}
	}
	var st State
	s.Call(func() { st = s.State() })
	if st.Budget != nil {
		t.Fatalf("budget shown with no limit: %+v", st.Budget)
	}
}

func TestBudgetStateJSON(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("x"), Budget: Budget{MaxCost: 0.5, MaxTime: 90 * time.Second}})
	s.Call(func() {
		s.budget.spent = BudgetSpent{Cost: 0.1 + 0.2, Tokens: 42}
		want, err := MarshalJSON(s.State())
		if err != nil {
			t.Fatal(err)
		}
		got := s.AppendStateJSON(nil)
		if string(got) != string(want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
		if !strings.HasSuffix(string(got), `,"budget":{"maxCost":0.5,"maxTimeMs":90000,"spent":{"cost":0.3,"tokens":42,"timeMs":0}}}`) {
			t.Fatalf("state %s", got)
		}
	})
}

// The threshold a delta is compared with is where the estimate reaches
// the tighter limit.
func TestBudgetMeterThreshold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		m       budgetMeter
		crossAt int64
	}{
		{"no limits", budgetMeter{}, math.MaxInt64},
		{"tokens", budgetMeter{limits: Budget{MaxTokens: 100}, base: BudgetSpent{Tokens: 40}}, 240},
		{"tokens and assumed input", budgetMeter{limits: Budget{MaxTokens: 100}, assumed: Usage{Input: 30, CacheRead: 10}}, 240},
		{"reported usage wins", budgetMeter{limits: Budget{MaxTokens: 100}, assumed: Usage{Input: 90}, usage: Usage{Input: 20, Output: 5}, reported: true}, 320},
		{"reached by input", budgetMeter{limits: Budget{MaxTokens: 100}, assumed: Usage{Input: 100}}, 0},
		{"cost", budgetMeter{limits: Budget{MaxCost: 1}, price: ModelCost{Input: 1e6, Output: 1e5}, assumed: Usage{Input: 0}}, 40},
		{"cost with input", budgetMeter{limits: Budget{MaxCost: 1}, price: ModelCost{Input: 5e5, Output: 1e5}, base: BudgetSpent{Cost: 0.25}, assumed: Usage{Input: 1}}, 12},
		{"cost without an output price", budgetMeter{limits: Budget{MaxCost: 1}, price: ModelCost{Input: 1}}, math.MaxInt64},
		{"tighter of two", budgetMeter{limits: Budget{MaxCost: 1, MaxTokens: 5}, price: ModelCost{Output: 1e5}}, 20},
	} {
		if got := c.m.threshold(); got != c.crossAt {
			t.Errorf("%s: crossAt %d, want %d", c.name, got, c.crossAt)
		}
	}
}
