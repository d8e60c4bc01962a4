package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Structured output: a prompt may ask for its final answer as a JSON
// value valid against a JSON Schema (PromptOptions.OutputSchema). Every
// model call of its run carries the schema: in Request.Output, which the
// adapters of backends with a native structured output send (OpenAI's
// response_format and text.format, Ollama's format; Gemini's
// responseSchema reads the same field), and in the system prompt, which
// every model reads. When the run stops with a final answer (no tool
// call, no failure), the last post-run stage checks it: a match ends the
// prompt (output_schema_end with the JSON); a mismatch is told to the
// model in a developer message and the run goes on, at most
// Config.OutputRetries times (output_schema_retry), after which the
// prompt fails with an *OutputSchemaError (output_schema_end with the
// problems). A run that fails, is aborted or reaches a budget is not
// checked: its own reason ends it. Continue keeps the prompt's schema.

// DefaultOutputRetries is how many times a mismatched answer is asked for
// again unless the configuration says otherwise.
const DefaultOutputRetries = 2

// OutputFormat is the structured answer a model call asks for
// (Request.Output): a name for the APIs that want one (the schema's title
// made of the characters they take, else "output") and the schema,
// compact.
type OutputFormat struct {
	Name   string
	Schema []byte
}

// ValueValidator is a Validator that can also check a whole JSON value
// exactly (no leniency for the nulls models send in tool arguments): the
// final answer of a prompt with an output schema. A Validator without it
// is asked Validate.
type ValueValidator interface {
	ValidateValue(schema, doc []byte) []string
}

// ErrOutputQueued: a prompt with an output schema that would be queued
// (steer or follow-up into a running run): its answer would be the run's.
var ErrOutputQueued = errors.New("A prompt with an output schema must start a run: it cannot be queued (steer, follow_up, or streamingBehavior while the agent is busy)")

// OutputSchemaInvalidError: an output schema that is not a JSON Schema
// object a validator can use.
type OutputSchemaInvalidError struct{ Err error }

func (e *OutputSchemaInvalidError) Error() string {
	return "the output schema is not a usable JSON Schema: " + e.Err.Error()
}

func (e *OutputSchemaInvalidError) Unwrap() error { return e.Err }

// OutputSchemaError is why a prompt failed its output schema: the
// problems of its last answer, after Retries further attempts.
type OutputSchemaError struct {
	Errors  []string
	Retries int
}

func (e *OutputSchemaError) Error() string {
	return fmt.Sprintf("The final answer does not match the output schema (%d %s):\n- %s",
		e.Retries+1, plural(e.Retries+1, "attempt", "attempts"), strings.Join(e.Errors, "\n- "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// outputSpec is the current prompt's output schema and its retries so
// far: actor state.
type outputSpec struct {
	format  OutputFormat
	max     int
	retries int
}

// CheckOutputSchema says why schema cannot be an output schema (nil when
// it can): it must be a JSON object v compiles, referring to nothing
// outside itself (nil v checks only that it is an object).
func CheckOutputSchema(v Validator, schema []byte) error {
	_, err := outputFormat(v, schema)
	return err
}

// CheckOutputSchema is CheckOutputSchema with the session's validator.
// Safe anywhere: fronts call it on their reader, before a prompt is
// acknowledged.
func (s *Session) CheckOutputSchema(schema []byte) error {
	return CheckOutputSchema(s.cfg.Validator, schema)
}

// outputFormat reads an output schema.
func outputFormat(v Validator, schema []byte) (OutputFormat, error) {
	compact := compactRaw(schema)
	if compact == nil {
		return OutputFormat{}, &OutputSchemaInvalidError{errors.New("it is not valid JSON")}
	}
	if compact[0] != '{' {
		return OutputFormat{}, &OutputSchemaInvalidError{errors.New("it must be a JSON object")}
	}
	if v != nil {
		if err := v.Check(compact); err != nil {
			return OutputFormat{}, &OutputSchemaInvalidError{err}
		}
	}
	var meta struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(compact, &meta)
	return OutputFormat{Name: formatName(meta.Title), Schema: compact}, nil
}

// newOutputSpec is the output schema of a prompt; nil for none. It reads
// only the configuration.
func (s *Session) newOutputSpec(schema []byte) (*outputSpec, error) {
	if schema == nil {
		return nil, nil
	}
	f, err := outputFormat(s.cfg.Validator, schema)
	if err != nil {
		return nil, err
	}
	max := s.cfg.OutputRetries
	switch {
	case max == 0:
		max = DefaultOutputRetries
	case max < 0:
		max = 0
	}
	return &outputSpec{format: f, max: max}, nil
}

// formatName is a title made of the characters OpenAI's format names take
// ([a-zA-Z0-9_-], at most 64), else "output".
func formatName(title string) string {
	var b strings.Builder
	for _, c := range title {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		case c == ' ':
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "output"
	}
	return b.String()
}

// outputInstruction is what the system prompt of a call with an output
// schema adds: every model reads it, native support or not.
func outputInstruction(schema []byte) string {
	return "\n\nWhen you have finished, your final answer must be a single JSON value valid against this JSON Schema, " +
		"with no other text before or after it:\n" + string(schema)
}

// plugOutput plugs structured output in (features.go): the last post-run
// stage, and a new record forgets the schema of a prompt of the old one.
func (s *Session) plugOutput() {
	s.stages = append(s.stages, s.outputStage)
	s.onInstall = append(s.onInstall, func() { s.output = nil })
}

// outputStage checks the final answer of a run whose prompt asked for an
// output schema. (actor)
func (s *Session) outputStage(r *run, aborted bool) *postRun {
	o := s.output
	if o == nil || aborted {
		return nil
	}
	msg := r.lastAssistant()
	if msg == nil || msg.StopReason == StopError || msg.StopReason == StopAborted || len(msg.ToolCalls()) > 0 {
		return nil
	}
	doc, problems := s.checkOutput(o, msg.Text())
	if problems == nil {
		s.emit(OutputSchemaEnd{Success: true, Retries: o.retries, Output: doc})
		for _, w := range s.turns {
			w.res.Output = doc
		}
		return nil
	}
	if o.retries >= o.max {
		err := &OutputSchemaError{Errors: problems, Retries: o.retries}
		s.emit(OutputSchemaEnd{Success: false, Retries: o.retries, Errors: problems})
		for _, w := range s.turns {
			w.res.Err = err
		}
		return nil
	}
	o.retries++
	s.emit(OutputSchemaRetry{Attempt: o.retries, MaxAttempts: o.max, Errors: problems})
	text := outputRetryText(problems)
	return &postRun{phase: PhaseRunning, act: ActRun,
		work: func(ctx context.Context) bool { return ctx.Err() == nil },
		resume: func(r *run) {
			s.emitMessage(r, &DeveloperMessage{Content: []ContentBlock{TextBlock(text)}, Attribution: "agent", Timestamp: s.now()})
		}}
}

// outputRetryText tells the model what was wrong with its answer.
func outputRetryText(problems []string) string {
	return "Your final answer does not match the output schema:\n- " + strings.Join(problems, "\n- ") +
		"\n\nAnswer again with only the JSON value, valid against the schema, and no other text."
}

// checkOutput reads the JSON value of an answer (its text, or a fenced
// block that is all of it) and validates it: the value, compact, or the
// problems, one "<location>: <problem>" line each. (actor)
func (s *Session) checkOutput(o *outputSpec, text string) ([]byte, []string) {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "```"); ok && strings.HasSuffix(rest, "```") {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			t = strings.TrimSpace(strings.TrimSuffix(rest[nl+1:], "```"))
		}
	}
	if t == "" {
		return nil, []string{"root: the answer is empty; it must be a JSON value"}
	}
	var v any
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		return nil, []string{"root: the answer is not JSON (" + err.Error() + ")"}
	}
	doc := compactRaw([]byte(t))
	var problems []string
	switch v := s.cfg.Validator.(type) {
	case ValueValidator:
		problems = v.ValidateValue(o.format.Schema, doc)
	case Validator:
		problems = v.Validate(o.format.Schema, doc)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return doc, nil
}

// OutputSchemaRetry is the output_schema_retry event: the answer did not
// match, the model is asked again (attempt of maxAttempts).
type OutputSchemaRetry struct {
	Attempt     int
	MaxAttempts int
	Errors      []string
}

// OutputSchemaEnd is the output_schema_end event: the prompt's answer
// matched (Output, the JSON) or, after Retries, did not (Errors).
type OutputSchemaEnd struct {
	Success bool
	Retries int
	Output  []byte
	Errors  []string
}

// EventType implements Event.
func (OutputSchemaRetry) EventType() string { return "output_schema_retry" }

// EventType implements Event.
func (OutputSchemaEnd) EventType() string { return "output_schema_end" }

// AppendJSON implements Event.
func (e OutputSchemaRetry) AppendJSON(dst []byte) []byte {
	dst = appendIntField(appendType(dst, "output_schema_retry"), "attempt", int64(e.Attempt))
	dst = appendIntField(dst, "maxAttempts", int64(e.MaxAttempts))
	return append(appendStrings(appendKey(dst, "errors"), e.Errors), '}')
}

// AppendJSON implements Event.
func (e OutputSchemaEnd) AppendJSON(dst []byte) []byte {
	dst = appendBoolField(appendType(dst, "output_schema_end"), "success", e.Success)
	dst = appendIntField(dst, "retries", int64(e.Retries))
	if e.Output != nil {
		dst = appendRawField(dst, "output", e.Output)
	}
	if e.Errors != nil {
		dst = appendStrings(appendKey(dst, "errors"), e.Errors)
	}
	return append(dst, '}')
}
