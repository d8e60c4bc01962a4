package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
)

// tool is a tool an extension registered in its handshake. A call is a
// tool/execute request with no deadline (a tool takes the time it takes);
// tool/update notifications stream partial results; abort withdraws the
// request ($/cancelRequest) and fails the call at once, as a host tool's.
type tool struct {
	e   *ext
	def toolDef
}

func (t *tool) Name() string        { return t.def.Name }
func (t *tool) Description() string { return t.def.Description }
func (t *tool) Schema() []byte      { return t.def.Parameters }
func (t *tool) Concurrency() engine.Concurrency {
	if t.def.Concurrency == "exclusive" {
		return engine.Exclusive
	}
	return engine.Shared
}

func toolError(format string, args ...any) engine.ToolResult {
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(fmt.Sprintf(format, args...))}, Details: []byte("{}"), IsError: true}
}

// Run implements engine.Tool.
func (t *tool) Run(ctx context.Context, call engine.ToolCall, update func(engine.ToolResult)) (engine.ToolResult, error) {
	e := t.e
	if ctx.Err() != nil {
		return toolError("Extension tool %q was aborted", t.def.Name), nil
	}
	if update != nil {
		e.mu.Lock()
		e.updates[call.ID] = update
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			delete(e.updates, call.ID)
			e.mu.Unlock()
		}()
	}
	params := newObj("tool", e.h.currentSession()).str("toolCallId", call.ID).str("toolName", call.Name).raw("input", call.Arguments).bytes()
	raw, err := e.request(ctx, "tool/execute", params, 0)
	switch {
	case ctx.Err() != nil:
		return toolError("Extension tool %q was aborted", t.def.Name), nil
	case errors.Is(err, errGone):
		return toolError("Extension tool %q failed: %v", t.def.Name, err), nil
	case err != nil:
		return toolError("%s", errorText(err)), nil
	}
	res, err := decodeResult(raw)
	if err != nil {
		e.h.report(engine.ExtensionError{ExtensionPath: e.spec.Path, Event: "tool/execute", Error: "malformed result: " + err.Error()})
		return toolError("Extension tool %q returned a malformed result", t.def.Name), nil
	}
	return res, nil
}

// decodeResult reads a tool result {content, details?, isError?}.
func decodeResult(raw json.RawMessage) (engine.ToolResult, error) {
	var r struct {
		Content json.RawMessage `json:"content"`
		Details json.RawMessage `json:"details"`
		IsError bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return engine.ToolResult{}, err
	}
	if r.Content == nil {
		return engine.ToolResult{}, errors.New(`no "content"`)
	}
	content, err := decodeBlocks(r.Content)
	if err != nil {
		return engine.ToolResult{}, err
	}
	res := engine.ToolResult{Content: content, IsError: r.IsError}
	if r.Details != nil && string(r.Details) != "null" {
		if !isObject(r.Details) {
			return engine.ToolResult{}, errors.New(`"details" is not an object`)
		}
		res.Details = compact(r.Details)
	}
	return res, nil
}
