package extkit

import "encoding/json"

// Typed handlers for the hooks most extensions use. Each registers with On
// and decodes the event for you; a nil result is "no change".

// ToolCallEvent is a tool call about to run.
type ToolCallEvent struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
}

// ToolCallResult blocks the call (with a reason the model sees) or
// rewrites its input.
type ToolCallResult struct {
	Block  bool            `json:"block,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// OnToolCall handles tool_call.
func (x *Extension) OnToolCall(fn func(c *Context, ev ToolCallEvent) (*ToolCallResult, error)) {
	x.On("tool_call", func(c *Context, ev Event) (any, error) {
		var e ToolCallEvent
		if err := ev.Decode(&e); err != nil {
			return nil, err
		}
		r, err := fn(c, e)
		if r == nil || err != nil {
			return nil, err
		}
		return r, nil
	})
}

// ToolResultEvent is a tool's result before the model sees it.
type ToolResultEvent struct {
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Content    []Content       `json:"content"`
	Details    json.RawMessage `json:"details"`
	IsError    bool            `json:"isError"`
}

// ToolResultPatch replaces the parts of a result that are set.
type ToolResultPatch struct {
	Content []Content `json:"content,omitempty"`
	Details any       `json:"details,omitempty"`
	IsError *bool     `json:"isError,omitempty"`
}

// OnToolResult handles tool_result.
func (x *Extension) OnToolResult(fn func(c *Context, ev ToolResultEvent) (*ToolResultPatch, error)) {
	x.On("tool_result", func(c *Context, ev Event) (any, error) {
		var e ToolResultEvent
		if err := ev.Decode(&e); err != nil {
			return nil, err
		}
		r, err := fn(c, e)
		if r == nil || err != nil {
			return nil, err
		}
		return r, nil
	})
}

// InputEvent is a prompt's text before anything is done with it.
type InputEvent struct {
	Text   string    `json:"text"`
	Images []Content `json:"images"`
	Source string    `json:"source"`
}

// InputResult: Action "continue" (or nil result), "transform" (with Text)
// or "handled".
type InputResult struct {
	Action string    `json:"action"`
	Text   string    `json:"text,omitempty"`
	Images []Content `json:"images,omitempty"`
}

// OnInput handles input.
func (x *Extension) OnInput(fn func(c *Context, ev InputEvent) (*InputResult, error)) {
	x.On("input", func(c *Context, ev Event) (any, error) {
		var e InputEvent
		if err := ev.Decode(&e); err != nil {
			return nil, err
		}
		r, err := fn(c, e)
		if r == nil || err != nil {
			return nil, err
		}
		return r, nil
	})
}

// AgentStartEvent is an accepted prompt before its run starts.
type AgentStartEvent struct {
	Prompt       string    `json:"prompt"`
	Images       []Content `json:"images"`
	SystemPrompt string    `json:"systemPrompt"`
}

// AgentStartResult adds a message after the prompt and/or replaces the
// system prompt for the run.
type AgentStartResult struct {
	Message      *Message `json:"message,omitempty"`
	SystemPrompt string   `json:"systemPrompt,omitempty"`
}

// OnBeforeAgentStart handles before_agent_start.
func (x *Extension) OnBeforeAgentStart(fn func(c *Context, ev AgentStartEvent) (*AgentStartResult, error)) {
	x.On("before_agent_start", func(c *Context, ev Event) (any, error) {
		var e AgentStartEvent
		if err := ev.Decode(&e); err != nil {
			return nil, err
		}
		r, err := fn(c, e)
		if r == nil || err != nil {
			return nil, err
		}
		return r, nil
	})
}
