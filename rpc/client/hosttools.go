package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// HostToolDef is the wire definition of a host tool (set_host_tools).
type HostToolDef struct {
	Name        string          `json:"name"`
	Label       string          `json:"label,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
	Hidden      bool            `json:"hidden,omitempty"`
}

// HostToolHandler runs one call of a host tool. args are the model's
// arguments (already validated against the schema by the agent). update
// sends a partial result ({"content":[…]}, shown to the host as
// tool_execution_update); it does nothing once ctx is done. ctx is
// cancelled when the agent withdraws the call (host_tool_cancel, e.g. on
// abort) or the connection ends; no result is sent then. A returned error
// becomes an error result (isError) whose text is the error's.
type HostToolHandler func(ctx context.Context, args json.RawMessage, update func(partial json.RawMessage)) (Result, error)

// HostTool is a host tool with the handler that serves its calls.
type HostTool struct {
	Name        string
	Label       string
	Description string
	Parameters  json.RawMessage
	Hidden      bool
	Handler     HostToolHandler
}

// Result is a tool result sent back to the agent.
type Result struct {
	// Content is the result's text and image parts; never sent as null.
	Content []Content
	// Details is any JSON value; {} when nil.
	Details json.RawMessage
}

// TextResult is a Result with one text part.
func TextResult(text string) Result {
	return Result{Content: []Content{{Type: "text", Text: text}}}
}

// TextPartial is a partial result with one text part, for a handler's
// update function.
func TextPartial(text string) json.RawMessage {
	b, _ := marshal(TextResult(text).wire())
	return b
}

type wireResult struct {
	Content []wireContent   `json:"content"`
	Details json.RawMessage `json:"details"`
}

// wireContent keeps "text" even when empty, which Content's omitempty
// would drop.
type wireContent struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	Data     string  `json:"data,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
}

func (r Result) wire() wireResult {
	w := wireResult{Content: make([]wireContent, 0, len(r.Content)), Details: r.Details}
	if len(w.Details) == 0 {
		w.Details = json.RawMessage("{}")
	}
	for _, c := range r.Content {
		wc := wireContent{Type: c.Type, Data: c.Data, MimeType: c.MimeType}
		if c.Type == "text" || c.Text != "" {
			t := c.Text
			wc.Text = &t
		}
		w.Content = append(w.Content, wc)
	}
	return w
}

// errHostCancel is the cause of a handler's ctx when the agent withdrew the call.
var errHostCancel = errors.New("xcsh client: host tool call cancelled by the agent")

// errResolved is the cause of a handler's ctx when another client of the
// session answered its request first.
var errResolved = errors.New("xcsh client: another client answered the request first")

// SetHostTools sends set_host_tools with bare definitions and returns the
// registered names. It leaves the client's handlers alone: a call of a tool
// without a handler is answered with the error result
// `Host tool "<name>" is not registered` on the connection's own session,
// and left to the client that registered it on a session by id. Use
// RegisterHostTools to serve calls.
func (t *target) SetHostTools(ctx context.Context, defs []HostToolDef) ([]string, error) {
	if defs == nil {
		defs = []HostToolDef{}
	}
	var out struct {
		ToolNames []string `json:"toolNames"`
	}
	err := t.call(ctx, "set_host_tools", struct {
		Tools []HostToolDef `json:"tools"`
	}{defs}, &out)
	return out.ToolNames, err
}

// RegisterHostTools replaces the host tools: it installs the handlers,
// then sends set_host_tools; each host_tool_call then runs its handler on
// its own goroutine. On failure the previous handlers are restored. An
// empty list removes every host tool.
func (t *target) RegisterHostTools(ctx context.Context, tools []HostTool) ([]string, error) {
	defs := make([]HostToolDef, 0, len(tools))
	table := make(map[string]HostTool, len(tools))
	for _, tool := range tools {
		defs = append(defs, HostToolDef{Name: tool.Name, Label: tool.Label, Description: tool.Description, Parameters: tool.Parameters, Hidden: tool.Hidden})
		table[tool.Name] = tool
	}
	// Installed before sending: the agent may call a tool as soon as it
	// has answered, and the reader handles that call before anything else.
	c := t.c
	c.mu.Lock()
	prev := t.tools
	t.tools = table
	c.mu.Unlock()
	names, err := t.SetHostTools(ctx, defs)
	if err != nil {
		c.mu.Lock()
		t.tools = prev
		c.mu.Unlock()
	}
	return names, err
}

// hostRequest acts on a frame that asks the host something or withdraws
// a question (reader goroutine).
func (t *target) hostRequest(typ string, line []byte) {
	switch typ {
	case "host_tool_call":
		t.hostToolCall(line)
	case "host_tool_cancel":
		t.hostToolCancel(line)
	case "extension_ui_request":
		t.uiRequest(line)
	}
}

// hostToolReply is a host_tool_update or host_tool_result frame.
type hostToolReply struct {
	Type          string          `json:"type"`
	ID            string          `json:"id"`
	PartialResult json.RawMessage `json:"partialResult,omitempty"`
	Result        *wireResult     `json:"result,omitempty"`
	IsError       bool            `json:"isError,omitempty"`
	SessionID     string          `json:"sessionId,omitempty"`
}

// hostToolCall starts the handler of a host_tool_call frame (reader
// goroutine). On a session by id the client serves only the calls it has
// a handler for, and none as an observer: another client registered the
// tool, and the first answer wins.
func (t *target) hostToolCall(line []byte) {
	var f struct {
		ID         string          `json:"id"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Arguments  json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(line, &f) != nil || f.ID == "" {
		return
	}
	c := t.c
	c.mu.Lock()
	if c.ended || !t.answersLocked() {
		c.mu.Unlock()
		return
	}
	tool, ok := t.tools[f.ToolName]
	if t.s != nil && (!ok || tool.Handler == nil) {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancelCause(c.root)
	t.toolCalls[f.ID] = cancel
	c.handlers.Add(1)
	sid := t.sidLocked()
	c.mu.Unlock()

	go func() {
		defer c.handlers.Done()
		defer func() {
			c.mu.Lock()
			delete(t.toolCalls, f.ID)
			c.mu.Unlock()
			cancel(nil)
		}()
		var res Result
		var err error
		if !ok || tool.Handler == nil {
			// The TypeScript client's text, capitalised as the model sees it.
			err = fmt.Errorf("Host tool %q is not registered", f.ToolName)
		} else {
			update := func(partial json.RawMessage) {
				if ctx.Err() != nil {
					return
				}
				_ = t.reply(ctx, hostToolReply{Type: "host_tool_update", ID: f.ID, PartialResult: partial, SessionID: sid})
			}
			res, err = tool.Handler(ctx, f.Arguments, update)
		}
		if ctx.Err() != nil {
			// Withdrawn, answered by another client, or disconnected: the
			// agent has already failed the call and ignores a result.
			return
		}
		frame := hostToolReply{Type: "host_tool_result", ID: f.ID, SessionID: sid}
		var w wireResult
		if err != nil {
			w = TextResult(err.Error()).wire()
			frame.IsError = true
		} else {
			w = res.wire()
		}
		frame.Result = &w
		_ = t.reply(ctx, frame)
	}()
}

// hostToolCancel cancels the handler a host_tool_cancel frame names.
func (t *target) hostToolCancel(line []byte) {
	var f struct {
		TargetID string `json:"targetId"`
	}
	if json.Unmarshal(line, &f) != nil {
		return
	}
	t.cancelCall(f.TargetID, errHostCancel)
}

// cancelCall cancels the host tool or dialog handler serving request id.
func (t *target) cancelCall(id string, cause error) {
	c := t.c
	c.mu.Lock()
	cancel := t.toolCalls[id]
	if cancel == nil {
		cancel = t.uiCalls[id]
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// cancelsLocked are the cancel functions of every running handler. (c.mu)
func (t *target) cancelsLocked() []context.CancelCauseFunc {
	var out []context.CancelCauseFunc
	for _, f := range t.toolCalls {
		out = append(out, f)
	}
	for _, f := range t.uiCalls {
		out = append(out, f)
	}
	return out
}

// answersLocked reports whether the client answers the session's
// requests: not as an observer (the server refuses its answers), not once
// the session has ended. (c.mu)
func (t *target) answersLocked() bool {
	return t.s == nil || (!t.s.ended && t.s.role != Observer)
}

// sidLocked is the sessionId the target's frames carry ("" for the own
// session). (c.mu)
func (t *target) sidLocked() string {
	if t.s == nil {
		return ""
	}
	return t.s.id
}

// replyNow writes a frame that answers a request of the agent on the
// reader goroutine, which must not wait: when it cannot be sent now (the
// connection failed) it is dropped, as the request goes with it.
func (t *target) replyNow(v any) {
	b, err := marshal(v)
	if err != nil {
		return
	}
	c := t.c
	c.mu.Lock()
	var l *link
	if !c.ended {
		l, _ = c.sendableLocked(request{typ: "reply", t: t, reply: true})
	}
	c.mu.Unlock()
	if l != nil {
		_ = c.writeOn(l, append(b, '\n'))
	}
}

// reply writes a frame that answers a request of the agent (host tool
// results and updates, dialog answers). On a session by id it waits, while
// ctx lasts, until the session is attached: an answer made while the
// client reconnects goes on the new connection.
func (t *target) reply(ctx context.Context, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	for {
		l, err := t.c.sendable(ctx, request{typ: "reply", t: t, reply: true}, nil)
		if err != nil {
			return err
		}
		if err := t.c.writeOn(l, append(b, '\n')); err == nil || !t.c.linkFailed(l) {
			return err
		}
	}
}
