package client

import (
	"context"
	"time"
)

// Budgets and continue (docs/rpc.md "Budgets"): what one run may spend,
// and how a run stopped on its budget goes on.

// Budget is set_budget's limits: a nil field keeps the limit as it is, a
// pointer to 0 removes it.
type Budget struct {
	MaxCost   *float64 // US dollars
	MaxTokens *int64
	MaxTime   *time.Duration // sent in milliseconds
}

// BudgetState is get_state.budget and set_budget's answer: the limits set
// (0: none) and what the current run, or the last, has spent.
type BudgetState struct {
	MaxCost   float64     `json:"maxCost,omitempty"`
	MaxTokens int64       `json:"maxTokens,omitempty"`
	MaxTimeMs int64       `json:"maxTimeMs,omitempty"`
	Spent     BudgetSpent `json:"spent"`
}

// BudgetSpent is a run's spending.
type BudgetSpent struct {
	Cost   float64 `json:"cost"`
	Tokens int64   `json:"tokens"`
	TimeMs int64   `json:"timeMs"`
}

type budgetFields struct {
	MaxCost   *float64 `json:"maxCost,omitempty"`
	MaxTokens *int64   `json:"maxTokens,omitempty"`
	MaxTimeMs *int64   `json:"maxTimeMs,omitempty"`
}

// SetBudget changes the limits b names and returns the budget as it now
// stands. During a run the time limit applies at once, the others from
// its next model call.
func (t *target) SetBudget(ctx context.Context, b Budget) (*BudgetState, error) {
	f := budgetFields{MaxCost: b.MaxCost, MaxTokens: b.MaxTokens}
	if b.MaxTime != nil {
		ms := b.MaxTime.Milliseconds()
		f.MaxTimeMs = &ms
	}
	var st BudgetState
	if err := t.call(ctx, "set_budget", f, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Continue runs the agent again from the context as it stands (a run that
// stopped on its budget resumes with what it had spent) and returns once
// the run has started; it is observed through events. Nothing to continue,
// or a busy session, is a *CommandError.
func (t *target) Continue(ctx context.Context) error { return t.call(ctx, "continue", nil, nil) }
