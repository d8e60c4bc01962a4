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

// SetHostTools sends set_host_tools with bare definitions and returns the
// registered names. It leaves the client's handlers alone: a call of a tool
// without a handler is answered with the error result
// `Host tool "<name>" is not registered`. Use RegisterHostTools to serve calls.
func (c *Client) SetHostTools(ctx context.Context, defs []HostToolDef) ([]string, error) {
	if defs == nil {
		defs = []HostToolDef{}
	}
	var out struct {
		ToolNames []string `json:"toolNames"`
	}
	err := c.call(ctx, "set_host_tools", struct {
		Tools []HostToolDef `json:"tools"`
	}{defs}, &out)
	return out.ToolNames, err
}

// RegisterHostTools replaces the host tools: it installs the handlers,
// then sends set_host_tools; each host_tool_call then runs its handler on
// its own goroutine. On failure the previous handlers are restored. An
// empty list removes every host tool.
func (c *Client) RegisterHostTools(ctx context.Context, tools []HostTool) ([]string, error) {
	defs := make([]HostToolDef, 0, len(tools))
	table := make(map[string]HostTool, len(tools))
	for _, t := range tools {
		defs = append(defs, HostToolDef{Name: t.Name, Label: t.Label, Description: t.Description, Parameters: t.Parameters, Hidden: t.Hidden})
		table[t.Name] = t
	}
	// Installed before sending: the agent may call a tool as soon as it
	// has answered, and the reader handles that call before anything else.
	c.mu.Lock()
	prev := c.tools
	c.tools = table
	c.mu.Unlock()
	names, err := c.SetHostTools(ctx, defs)
	if err != nil {
		c.mu.Lock()
		c.tools = prev
		c.mu.Unlock()
	}
	return names, err
}

// hostToolCall starts the handler of a host_tool_call frame (reader goroutine).
func (c *Client) hostToolCall(line []byte) {
	var f struct {
		ID         string          `json:"id"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Arguments  json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(line, &f) != nil || f.ID == "" {
		return
	}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	tool, ok := c.tools[f.ToolName]
	ctx, cancel := context.WithCancelCause(c.root)
	c.toolCalls[f.ID] = cancel
	c.handlers.Add(1)
	c.mu.Unlock()

	go func() {
		defer c.handlers.Done()
		defer func() {
			c.mu.Lock()
			delete(c.toolCalls, f.ID)
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
				_ = c.send(struct {
					Type          string          `json:"type"`
					ID            string          `json:"id"`
					PartialResult json.RawMessage `json:"partialResult"`
				}{"host_tool_update", f.ID, partial})
			}
			res, err = tool.Handler(ctx, f.Arguments, update)
		}
		if ctx.Err() != nil {
			// Withdrawn or disconnected: the agent has already failed the
			// call and ignores a result.
			return
		}
		frame := struct {
			Type    string     `json:"type"`
			ID      string     `json:"id"`
			Result  wireResult `json:"result"`
			IsError bool       `json:"isError,omitempty"`
		}{Type: "host_tool_result", ID: f.ID}
		if err != nil {
			frame.Result = TextResult(err.Error()).wire()
			frame.IsError = true
		} else {
			frame.Result = res.wire()
		}
		_ = c.send(frame)
	}()
}

// hostToolCancel cancels the handler a host_tool_cancel frame names.
func (c *Client) hostToolCancel(line []byte) {
	var f struct {
		TargetID string `json:"targetId"`
	}
	if json.Unmarshal(line, &f) != nil {
		return
	}
	c.mu.Lock()
	cancel := c.toolCalls[f.TargetID]
	c.mu.Unlock()
	if cancel != nil {
		cancel(errHostCancel)
	}
}
