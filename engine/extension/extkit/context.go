package extkit

import (
	"context"
	"encoding/json"
	"time"
)

// Context is what a handler works with: the session it was called for,
// the cancellation of the work it handles, and the calls an extension may
// make. Calls made through it carry that session (a call for a session
// that has been switched away fails, IsStale) and the request being
// handled (an abort of that work cancels them).
type Context struct {
	ctx        context.Context
	c          *conn
	SessionID  string
	during     int64  // the agent's request being handled (0: an event)
	toolCallID string // set for a tool call (Update)
}

// Context is the handler's context: it ends when the agent withdraws the
// request (abort, deadline) or the extension is shutting down.
func (c *Context) Context() context.Context { return c.ctx }

// Call makes any call of the protocol: params is an object (a struct or a
// map) to which sessionId and during are added; result, if not nil,
// receives the answer.
func (c *Context) Call(method string, params map[string]any, result any) error {
	if params == nil {
		params = map[string]any{}
	}
	if c.SessionID != "" {
		params["sessionId"] = c.SessionID
	}
	if c.during != 0 {
		params["during"] = c.during
	}
	return c.c.call(c.ctx, method, params, result)
}

// DialogResult is the user's answer to a dialog.
type DialogResult struct {
	Value     string `json:"value"`
	Confirmed bool   `json:"confirmed"`
	Cancelled bool   `json:"cancelled"`
	TimedOut  bool   `json:"timedOut"`
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// Confirm asks a yes/no question; timeout 0 waits for the answer. A
// dismissed or timed-out dialog is false.
func (c *Context) Confirm(title, message string, timeout time.Duration) (bool, error) {
	var r DialogResult
	err := c.Call("ui.confirm", map[string]any{"title": title, "message": message, "timeout": ms(timeout)}, &r)
	return r.Confirmed, err
}

// Select asks the user to pick one of options; ok is false when dismissed.
func (c *Context) Select(title string, options []string, timeout time.Duration) (choice string, ok bool, err error) {
	var r DialogResult
	err = c.Call("ui.select", map[string]any{"title": title, "options": options, "timeout": ms(timeout)}, &r)
	return r.Value, err == nil && !r.Cancelled, err
}

// Input asks for a line of text; ok is false when dismissed.
func (c *Context) Input(title, placeholder string, timeout time.Duration) (text string, ok bool, err error) {
	var r DialogResult
	err = c.Call("ui.input", map[string]any{"title": title, "placeholder": placeholder, "timeout": ms(timeout)}, &r)
	return r.Value, err == nil && !r.Cancelled, err
}

// Editor asks for a longer text, starting from prefill.
func (c *Context) Editor(title, prefill string) (text string, ok bool, err error) {
	var r DialogResult
	err = c.Call("ui.editor", map[string]any{"title": title, "prefill": prefill}, &r)
	return r.Value, err == nil && !r.Cancelled, err
}

// Notify shows a message; kind is "info", "warning", "error" or "".
func (c *Context) Notify(message, kind string) error {
	return c.Call("ui.notify", map[string]any{"message": message, "type": kind}, nil)
}

// SetStatus sets a keyed status line ("" clears it).
func (c *Context) SetStatus(key, text string) error {
	return c.Call("ui.setStatus", map[string]any{"key": key, "text": text}, nil)
}

// SetWidget shows lines above ("aboveEditor") or below ("belowEditor")
// the host's editor; nil lines remove the widget.
func (c *Context) SetWidget(key string, lines []string, placement string) error {
	p := map[string]any{"key": key}
	if lines != nil {
		p["lines"] = lines
	}
	if placement != "" {
		p["placement"] = placement
	}
	return c.Call("ui.setWidget", p, nil)
}

// SetTitle names the host's window (only shown when the host asked for
// titles).
func (c *Context) SetTitle(title string) error {
	return c.Call("ui.setTitle", map[string]any{"title": title}, nil)
}

// SetEditorText puts text in the host's input box.
func (c *Context) SetEditorText(text string) error {
	return c.Call("ui.setEditorText", map[string]any{"text": text}, nil)
}

// Message is a custom message for sendMessage.
type Message struct {
	CustomType string    `json:"customType"`
	Content    []Content `json:"content"`
	Display    bool      `json:"display"`
	Details    any       `json:"details,omitempty"`
}

// SendOptions say how SendMessage delivers a message: TriggerTurn starts
// a run when idle; DeliverAs is "steer" (default during a run),
// "followUp" or "nextTurn".
type SendOptions struct {
	TriggerTurn bool
	DeliverAs   string
}

// SendMessage injects a custom message (the model sees it as user text).
func (c *Context) SendMessage(m Message, opts SendOptions) error {
	p := map[string]any{"customType": m.CustomType, "content": m.Content, "display": m.Display}
	if m.Details != nil {
		p["details"] = m.Details
	}
	if opts.TriggerTurn {
		p["triggerTurn"] = true
	}
	if opts.DeliverAs != "" {
		p["deliverAs"] = opts.DeliverAs
	}
	return c.Call("sendMessage", p, nil)
}

// SendUserMessage sends text as the user's prompt; during a run deliverAs
// ("steer" or "followUp") says how it is queued.
func (c *Context) SendUserMessage(text, deliverAs string) error {
	p := map[string]any{"content": text}
	if deliverAs != "" {
		p["deliverAs"] = deliverAs
	}
	return c.Call("sendUserMessage", p, nil)
}

// AppendEntry keeps data in the session (a custom entry, never sent to the
// model).
func (c *Context) AppendEntry(customType string, data any) error {
	return c.Call("appendEntry", map[string]any{"customType": customType, "data": data}, nil)
}

// SetSessionName names the session.
func (c *Context) SetSessionName(name string) error {
	return c.Call("setSessionName", map[string]any{"name": name}, nil)
}

// SetLabel labels an entry ("" clears the label).
func (c *Context) SetLabel(entryID, label string) error {
	return c.Call("setLabel", map[string]any{"entryId": entryID, "label": label}, nil)
}

// ActiveTools lists the tools offered to the model.
func (c *Context) ActiveTools() ([]string, error) {
	var r struct {
		Tools []string `json:"tools"`
	}
	err := c.Call("getActiveTools", nil, &r)
	return r.Tools, err
}

// SetActiveTools offers the named tools (unknown names are ignored) and
// returns those now active.
func (c *Context) SetActiveTools(names []string) ([]string, error) {
	var r struct {
		Tools []string `json:"tools"`
	}
	err := c.Call("setActiveTools", map[string]any{"tools": names}, &r)
	return r.Tools, err
}

// SetModel selects a model by provider and id.
func (c *Context) SetModel(provider, modelID string) error {
	return c.Call("setModel", map[string]any{"provider": provider, "modelId": modelID}, nil)
}

// SetThinkingLevel sets the thinking level and returns the level in force
// (clamped to the model).
func (c *Context) SetThinkingLevel(level string) (string, error) {
	var r struct {
		Level string `json:"level"`
	}
	err := c.Call("setThinkingLevel", map[string]any{"level": level}, &r)
	return r.Level, err
}

// ContextUsage is how full the model's context window is.
type ContextUsage struct {
	Tokens        int64   `json:"tokens"`
	ContextWindow int64   `json:"contextWindow"`
	Percent       float64 `json:"percent"`
}

// ContextUsage reports the context usage (nil when unknown).
func (c *Context) ContextUsage() (*ContextUsage, error) {
	var raw json.RawMessage
	if err := c.Call("getContextUsage", nil, &raw); err != nil || raw == nil {
		return nil, err
	}
	var u ContextUsage
	return &u, json.Unmarshal(raw, &u)
}

// Abort aborts the agent's run and returns once it has wound down.
func (c *Context) Abort() error { return c.Call("abort", nil, nil) }

// IsIdle reports whether the agent is doing nothing.
func (c *Context) IsIdle() (bool, error) {
	var r struct {
		Idle bool `json:"idle"`
	}
	err := c.Call("isIdle", nil, &r)
	return r.Idle, err
}

// ExecResult is what a command run by Exec produced.
type ExecResult struct {
	Output    string `json:"output"`
	ExitCode  *int   `json:"exitCode"`
	Cancelled bool   `json:"cancelled"`
	Truncated bool   `json:"truncated"`
}

// Exec runs command with args (quoted for the shell) under the agent's
// shell rules; timeout 0 uses the agent's.
func (c *Context) Exec(command string, args []string, timeout time.Duration) (ExecResult, error) {
	var r ExecResult
	err := c.Call("exec", map[string]any{"command": command, "args": args, "timeout": ms(timeout)}, &r)
	return r, err
}

// Update streams a partial result of the tool call being handled.
func (c *Context) Update(partial ToolResult) error {
	if partial.Content == nil {
		partial.Content = []Content{}
	}
	body, err := json.Marshal(map[string]any{"toolCallId": c.toolCallID, "partialResult": partial})
	if err != nil {
		return err
	}
	return c.c.notify("tool/update", body)
}

// Log writes a line to the agent's log (its stderr).
func (c *Context) Log(message string) {
	body, _ := json.Marshal(map[string]string{"message": message})
	_ = c.c.notify("log", body)
}
