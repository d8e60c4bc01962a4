package acp

import (
	"fmt"
	"math"
	"strconv"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
)

// Budgets as session configuration options (docs/acp.md, "Budgets"):
// max_cost, max_tokens and max_time, selectors of a few values beside
// "off" and the one in force. They are listed once the session has a
// budget (the agent started with --max-cost, --max-tokens or --max-time,
// or a client set one), so the options of a session without one stay the
// model and the thinking level. session/set_config_option takes any value
// of the option's kind, listed or not ("0.75", "250000", "45m").

// The budget options' ids.
const (
	optMaxCost   = "max_cost"
	optMaxTokens = "max_tokens"
	optMaxTime   = "max_time"
)

// The values offered beside "off" and the one in force.
var (
	costChoices  = []string{"0.1", "0.5", "1", "5", "20"}
	tokenChoices = []string{"100000", "500000", "1000000", "5000000"}
	timeChoices  = []string{"5m", "15m", "30m", "1h", "4h"}
)

const budgetOff = "off"

// budgetShown reports whether the session lists its budget options: once
// it has had a budget, they stay. (actor)
func (ss *session) budgetShown() bool {
	if !ss.eng.Limits().IsZero() {
		ss.showBudget = true
	}
	return ss.showBudget
}

// budgetConfigOptions are the budget's selectors (none until the session
// has a budget). (actor)
func (ss *session) budgetConfigOptions() []sdk.SessionConfigOption {
	if !ss.budgetShown() {
		return nil
	}
	l := ss.eng.Limits()
	cost, tokens, wall := budgetOff, budgetOff, budgetOff
	if l.MaxCost > 0 {
		cost = strconv.FormatFloat(l.MaxCost, 'f', -1, 64)
	}
	if l.MaxTokens > 0 {
		tokens = strconv.FormatInt(l.MaxTokens, 10)
	}
	if l.MaxTime > 0 {
		wall = l.MaxTime.String()
		for _, c := range timeChoices {
			if d, _ := time.ParseDuration(c); d == l.MaxTime {
				wall = c
			}
		}
	}
	return []sdk.SessionConfigOption{
		budgetSelect(optMaxCost, "Cost budget", "End a turn once it has cost this many US dollars, from the model's prices", cost, costChoices),
		budgetSelect(optMaxTokens, "Token budget", "End a turn once it has used this many tokens, input and output", tokens, tokenChoices),
		budgetSelect(optMaxTime, "Time budget", "End a turn once it has run this long", wall, timeChoices),
	}
}

func budgetSelect(id, name, desc, cur string, choices []string) sdk.SessionConfigOption {
	opts := sdk.SessionConfigSelectOptionsUngrouped{{Value: budgetOff, Name: "No limit"}}
	found := cur == budgetOff
	for _, c := range choices {
		found = found || c == cur
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(c), Name: c})
	}
	if !found {
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(cur), Name: cur})
	}
	return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{Id: sdk.SessionConfigId(id), Name: name, Description: &desc,
		CurrentValue: sdk.SessionConfigValueId(cur), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}
}

// setBudgetOption sets one budget from a set_config_option value. (actor)
func (ss *session) setBudgetOption(id, v string) error {
	b := ss.eng.Limits()
	off := v == budgetOff
	switch id {
	case optMaxCost:
		f, err := strconv.ParseFloat(v, 64)
		if !off && (err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f)) {
			return fmt.Errorf("%s takes a number of US dollars or off, not %q", id, v)
		}
		b.MaxCost = f
		if off {
			b.MaxCost = 0
		}
	case optMaxTokens:
		n, err := strconv.ParseInt(v, 10, 64)
		if !off && (err != nil || n < 0) {
			return fmt.Errorf("%s takes a number of tokens or off, not %q", id, v)
		}
		b.MaxTokens = n
		if off {
			b.MaxTokens = 0
		}
	case optMaxTime:
		d, err := time.ParseDuration(v)
		if !off && (err != nil || d < 0) {
			return fmt.Errorf("%s takes a duration (45m, 2h) or off, not %q", id, v)
		}
		b.MaxTime = d
		if off {
			b.MaxTime = 0
		}
	}
	if _, err := ss.eng.SetBudget(b); err != nil {
		return err
	}
	ss.showBudget = true
	return nil
}

// budgetStopReason is the prompt's answer when its turn stopped on a
// budget: max_tokens for the token budget, max_turn_requests for the
// others (the turn may make no more model requests).
func budgetStopReason(be *engine.BudgetError) sdk.StopReason {
	if be.Kind == engine.BudgetTokens {
		return sdk.StopReasonMaxTokens
	}
	return sdk.StopReasonMaxTurnRequests
}
