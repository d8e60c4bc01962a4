// Package subproc serves an engine.Provider from a helper process: the
// agent writes each model call to the helper's stdin as one JSON line and
// reads its stream events back from its stdout, one JSON line each, by
// call id.
//
// It exists for adapters whose SDK is costly to link: Go runs every
// linked package's init at every start, whether or not the user ever
// calls that backend, and AWS's SDK (the Bedrock adapter's) builds some
// two thousand schema values and five endpoint tables there. The agent's
// binary links this package instead, which imports the engine only; the
// helper binary (cmd/xcsh-bedrock) links the adapter and runs Serve. The
// helper starts on the first call of one of its models and serves every
// call after it, concurrently, until the agent closes its stdin (or
// exits: the pipe closes with it).
//
// # The wire
//
// Agent to helper, one JSON object a line:
//
//	{"id":1,"apiKey":"...","request":{"model":{...},"systemPrompt":"...","messages":[...],"tools":[...],"thinkingLevel":"medium"}}
//	{"id":1,"cancel":true}
//
// Helper to agent:
//
//	{"id":1,"event":{"kind":2,"delta":"Hel"}}
//	{"id":1,"end":true}
//	{"id":1,"error":{"kind":1,"status":429,"message":"Throttling error: ...","retryAfterMs":3000}}
//
// A call ends with one end or error line; a cancelled call ends with an
// error whose "canceled" is true (the agent has stopped listening by
// then). Messages go in the session file's JSON (engine.DecodeMessage
// reads them back); the error keeps what the engine's retry reads of an
// *engine.ProviderError (its kind, status, message, the wait asked for).
package subproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// callFrame is a line from the agent.
type callFrame struct {
	ID      int64        `json:"id"`
	APIKey  string       `json:"apiKey,omitempty"`
	Request *wireRequest `json:"request,omitempty"`
	Cancel  bool         `json:"cancel,omitempty"`
}

type wireRequest struct {
	Model         engine.Model         `json:"model"`
	SystemPrompt  string               `json:"systemPrompt,omitempty"`
	Messages      []json.RawMessage    `json:"messages"`
	Tools         []wireTool           `json:"tools,omitempty"`
	ThinkingLevel engine.ThinkingLevel `json:"thinkingLevel,omitempty"`
	Output        *wireOutput          `json:"output,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type wireOutput struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// replyFrame is a line from the helper.
type replyFrame struct {
	ID    int64      `json:"id"`
	Event *wireEvent `json:"event,omitempty"`
	Error *wireError `json:"error,omitempty"`
	End   bool       `json:"end,omitempty"`
}

type wireEvent struct {
	Kind       engine.StreamEventKind `json:"kind"`
	Delta      string                 `json:"delta,omitempty"`
	Signature  string                 `json:"signature,omitempty"`
	ToolCallID string                 `json:"toolCallId,omitempty"`
	ToolName   string                 `json:"toolName,omitempty"`
	Arguments  json.RawMessage        `json:"arguments,omitempty"`
	Usage      *wireUsage             `json:"usage,omitempty"`
	StopReason engine.StopReason      `json:"stopReason,omitempty"`
	ResponseID string                 `json:"responseId,omitempty"`
}

type wireUsage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
}

type wireError struct {
	Kind         engine.ErrorKind `json:"kind"`
	Status       int              `json:"status,omitempty"`
	Message      string           `json:"message"`
	RetryAfterMs int64            `json:"retryAfterMs,omitempty"`
	RetryAt      int64            `json:"retryAt,omitempty"` // Unix milliseconds
	Canceled     bool             `json:"canceled,omitempty"`
}

func encodeRequest(req *engine.Request) (*wireRequest, error) {
	w := &wireRequest{Model: req.Model, SystemPrompt: req.SystemPrompt, ThinkingLevel: req.ThinkingLevel,
		Messages: make([]json.RawMessage, 0, len(req.Messages))}
	for _, m := range req.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("subproc: encode a %T: %w", m, err)
		}
		w.Messages = append(w.Messages, b)
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, Parameters: rawOrNil(t.Parameters)})
	}
	if o := req.Output; o != nil {
		w.Output = &wireOutput{Name: o.Name, Schema: rawOrNil(o.Schema)}
	}
	return w, nil
}

func (w *wireRequest) decode() (*engine.Request, error) {
	req := &engine.Request{Model: w.Model, SystemPrompt: w.SystemPrompt, ThinkingLevel: w.ThinkingLevel,
		Messages: make([]engine.Message, 0, len(w.Messages))}
	for _, raw := range w.Messages {
		m, err := engine.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("subproc: decode a message: %w", err)
		}
		req.Messages = append(req.Messages, m)
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, engine.ToolSpec{Name: t.Name, Description: t.Description, Parameters: []byte(t.Parameters)})
	}
	if o := w.Output; o != nil {
		req.Output = &engine.OutputFormat{Name: o.Name, Schema: []byte(o.Schema)}
	}
	return req, nil
}

// rawOrNil keeps raw JSON as is; an invalid value (which json.RawMessage
// would refuse to marshal) goes as nil, as the adapters treat it alike.
func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(b)
}

func encodeEvent(e engine.StreamEvent) *wireEvent {
	w := &wireEvent{Kind: e.Kind, Delta: e.Delta, Signature: e.Signature, ToolCallID: e.ToolCallID,
		ToolName: e.ToolName, Arguments: rawOrNil(e.Arguments), StopReason: e.StopReason, ResponseID: e.ResponseID}
	if e.Kind == engine.StreamUsage {
		u := e.Usage
		w.Usage = &wireUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, TotalTokens: u.TotalTokens}
	}
	return w
}

func (w *wireEvent) decode() engine.StreamEvent {
	e := engine.StreamEvent{Kind: w.Kind, Delta: w.Delta, Signature: w.Signature, ToolCallID: w.ToolCallID,
		ToolName: w.ToolName, Arguments: []byte(w.Arguments), StopReason: w.StopReason, ResponseID: w.ResponseID}
	if u := w.Usage; u != nil {
		e.Usage = engine.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, TotalTokens: u.TotalTokens}
	}
	return e
}

func encodeError(err error) *wireError {
	if pe := (*engine.ProviderError)(nil); errors.As(err, &pe) {
		w := &wireError{Kind: pe.Kind, Status: pe.Status, Message: pe.Error(), RetryAfterMs: pe.RetryAfter.Milliseconds()}
		if !pe.RetryAt.IsZero() {
			w.RetryAt = pe.RetryAt.UnixMilli()
		}
		return w
	}
	return &wireError{Kind: engine.ErrorOther, Message: err.Error()}
}

func (w *wireError) decode() *engine.ProviderError {
	pe := &engine.ProviderError{Kind: w.Kind, Status: w.Status, Message: w.Message,
		RetryAfter: time.Duration(w.RetryAfterMs) * time.Millisecond, Err: ErrHelper}
	if w.RetryAt != 0 {
		pe.RetryAt = time.UnixMilli(w.RetryAt)
	}
	return pe
}
