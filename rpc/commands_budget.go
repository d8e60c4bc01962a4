package rpc

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// The budget and continue commands (ours, additive; docs/rpc.md "Budgets"):
// set_budget changes the limits a run may spend, continue runs the agent
// again from the context as it stands (a run that stopped on a budget
// resumes with what it had spent).

// cmdSetBudget sets the limits it names: a field present sets that limit
// (0 or null: none), an absent one keeps it. It answers the budget as
// get_state shows it.
func (s *Server) cmdSetBudget(c *command) {
	b := s.sess.Limits()
	if !s.budgetArg(c, "maxCost", false, func(v float64) { b.MaxCost = v }) ||
		!s.budgetArg(c, "maxTokens", true, func(v float64) { b.MaxTokens = int64(v) }) ||
		!s.budgetArg(c, "maxTimeMs", true, func(v float64) { b.MaxTime = time.Duration(v) * time.Millisecond }) {
		return
	}
	st, err := s.sess.SetBudget(b)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, st.AppendJSON(nil))
}

// budgetArg reads one optional limit of set_budget into set: a
// non-negative number (an integer when whole), null reading as 0. It
// answers the failure, with the id, and reports false on a bad value.
func (s *Server) budgetArg(c *command, field string, whole bool, set func(float64)) bool {
	raw := member(c.line, field)
	if raw == nil {
		return true
	}
	if string(raw) == "null" {
		set(0)
		return true
	}
	var v float64
	kind := "a non-negative number"
	if whole {
		kind = "a non-negative integer"
	}
	if json.Unmarshal(raw, &v) != nil || v < 0 || (whole && (v != math.Trunc(v) || v > 1<<53)) {
		s.fail(c, errMustBe(c.typ, field, kind))
		return false
	}
	set(v)
	return true
}

// cmdContinue answers success just before the run's first event, as a
// prompt does; a session that cannot continue fails with the id.
func (s *Server) cmdContinue(c *command) {
	if err := s.sess.Continue(func() { s.ok(c, nil) }); err != nil {
		s.fail(c, err)
	}
}

// outputSchema reads a prompt's outputSchema: absent or null for none, a
// JSON object the session can use as a schema otherwise. It answers the
// failure, with the id, and reports false then.
func (s *Server) outputSchema(c *command, raw json.RawMessage) ([]byte, bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	if raw[0] != '{' {
		s.fail(c, errMustBe(c.typ, "outputSchema", "a JSON Schema object"))
		return nil, false
	}
	if err := s.sess.CheckOutputSchema(raw); err != nil {
		var ie *engine.OutputSchemaInvalidError
		if errors.As(err, &ie) {
			err = errInvalid(c.typ, `"outputSchema" is not a usable JSON Schema: `+ie.Err.Error())
		}
		s.fail(c, err)
		return nil, false
	}
	return raw, true
}
