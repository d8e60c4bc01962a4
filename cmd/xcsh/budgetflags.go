package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
)

// The flags of runs a fleet can trust (docs/automation.md): budgets a run
// may spend, and the JSON Schema a one-shot run's answer must match.

// Exit statuses of print and json modes beside 0 (an answer), 1 (no
// answer), 2 (the command line) and 128+n (signal n).
const (
	exitBudget       = 3 // the run stopped on a budget (--max-cost, --max-tokens, --max-time)
	exitOutputSchema = 4 // the answer never matched --output-schema
)

// maxSchemaFileBytes caps an --output-schema file, read whole.
const maxSchemaFileBytes = 4 << 20

// The validator the sessions use can check an answer exactly.
var _ engine.ValueValidator = (*schema.Validator)(nil)

// budgetFlags are the flags of budgets and structured output.
type budgetFlags struct {
	maxCost       float64
	maxTokens     int64
	maxTime       time.Duration
	outputSchema  string // a file
	outputRetries int
	schema        []byte // the file's content, once check has read it
}

func addBudgetFlags(f *pflag.FlagSet, b *budgetFlags) {
	f.Float64Var(&b.maxCost, "max-cost", 0, "end a run once it has cost this many US dollars, from the model's prices (0: no limit)")
	f.Int64Var(&b.maxTokens, "max-tokens", 0, "end a run once it has used this many tokens, input and output (0: no limit)")
	f.DurationVar(&b.maxTime, "max-time", 0, "end a run once it has run this long (0: no limit)")
	f.StringVar(&b.outputSchema, "output-schema", "", "-p and --mode json: a JSON Schema file the final answer must match; -p prints just that JSON")
	f.IntVar(&b.outputRetries, "output-retries", engine.DefaultOutputRetries, "how many times an answer that does not match --output-schema is asked for again")
}

// check refuses a bad value (exit 2) and reads the schema file: mode is
// the front's (an output schema belongs to print and json modes, an RPC
// host sends its own with each prompt).
func (b *budgetFlags) check(mode string) error {
	switch {
	case b.maxCost < 0 || math.IsNaN(b.maxCost) || math.IsInf(b.maxCost, 0):
		return &exitError{2, fmt.Sprintf("Error: --max-cost must be a non-negative number of dollars, got %v", b.maxCost)}
	case b.maxTokens < 0:
		return &exitError{2, fmt.Sprintf("Error: --max-tokens must be a non-negative number, got %d", b.maxTokens)}
	case b.maxTime < 0:
		return &exitError{2, fmt.Sprintf("Error: --max-time must be a non-negative duration, got %s", b.maxTime)}
	case b.outputRetries < 0:
		return &exitError{2, fmt.Sprintf("Error: --output-retries must be a non-negative number, got %d", b.outputRetries)}
	case b.outputSchema == "":
		return nil
	case mode != "print" && mode != "json":
		return &exitError{2, fmt.Sprintf("Error: --output-schema works with -p and --mode json; in --mode %s a host gives its schema with each prompt (outputSchema, docs/rpc.md)", mode)}
	}
	doc, err := safefile.ReadFile(b.outputSchema, maxSchemaFileBytes)
	if err != nil {
		var r *safefile.Refusal
		if errors.As(err, &r) {
			err = errors.New(r.Reason)
		}
		return &exitError{2, fmt.Sprintf("Error: --output-schema %s: %v", b.outputSchema, err)}
	}
	// The session checks it again, with its own validator; the command
	// line's mistake is said before anything starts.
	if err := engine.CheckOutputSchema(schema.New(), doc); err != nil {
		return &exitError{2, fmt.Sprintf("Error: --output-schema %s: %v", b.outputSchema, err)}
	}
	b.schema = doc
	return nil
}

// configure puts the limits and the retries into a session's
// configuration.
func (b *budgetFlags) configure(cfg *engine.Config) {
	cfg.Budget = engine.Budget{MaxCost: b.maxCost, MaxTokens: b.maxTokens, MaxTime: b.maxTime}
	cfg.OutputRetries = b.outputRetries
	if b.outputRetries == 0 {
		cfg.OutputRetries = -1 // the engine's 0 is its default
	}
}

// exitStatus is the status of a one-shot run that failed with err, once
// the user has been told why on stderr.
func (b *budgetFlags) exitStatus(err error) (int, bool) {
	var be *engine.BudgetError
	var oe *engine.OutputSchemaError
	switch {
	case errors.As(err, &be):
		return exitBudget, true
	case errors.As(err, &oe):
		return exitOutputSchema, true
	}
	return 0, false
}
