package client

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// UIRequest is an extension_ui_request frame. Dialog methods (select,
// confirm, input, editor) expect an answer; the others (notify, setStatus,
// setWidget, setTitle, set_editor_text) do not.
type UIRequest struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Title  string `json:"title,omitempty"`
	// Message is confirm's question and notify's text.
	Message     string   `json:"message,omitempty"`
	Options     []string `json:"options,omitempty"`     // select
	Placeholder string   `json:"placeholder,omitempty"` // input
	Prefill     string   `json:"prefill,omitempty"`     // editor
	PromptStyle string   `json:"promptStyle,omitempty"` // editor
	// TimeoutMs is the dialog's timeout in milliseconds; 0 when it has none.
	TimeoutMs       float64  `json:"timeout,omitempty"`
	NotifyType      string   `json:"notifyType,omitempty"` // info, warning, error
	StatusKey       string   `json:"statusKey,omitempty"`
	StatusText      *string  `json:"statusText,omitempty"` // nil clears the status
	WidgetKey       string   `json:"widgetKey,omitempty"`
	WidgetLines     []string `json:"widgetLines,omitempty"` // nil removes the widget
	WidgetPlacement string   `json:"widgetPlacement,omitempty"`
	Text            string   `json:"text,omitempty"` // set_editor_text
	// Raw is the whole frame.
	Raw json.RawMessage `json:"-"`
}

// Timeout is the dialog's timeout (0: none).
func (r UIRequest) Timeout() time.Duration {
	return time.Duration(r.TimeoutMs * float64(time.Millisecond))
}

// IsDialog reports whether the request expects an answer.
func (r UIRequest) IsDialog() bool {
	switch r.Method {
	case "select", "confirm", "input", "editor":
		return true
	}
	return false
}

// UIResponse answers a dialog: Value for select, input and editor,
// Confirmed for confirm; Cancelled for any (the extension then gets its
// default).
type UIResponse struct {
	Value     string
	Confirmed bool
	Cancelled bool
}

// UIHandler serves the extension UI sub-protocol.
type UIHandler interface {
	// Dialog answers a select, confirm, input or editor request. It runs on
	// its own goroutine. ctx ends when the request's timeout passes (the
	// client then answers cancelled with timedOut), when the agent sends a
	// cancel frame for it (nothing is answered: the agent has moved on),
	// when another client of a served session answered it first (the
	// resolved notice; nothing is answered) or when the client ends (or
	// the connection of the own session drops). An error answers
	// cancelled.
	Dialog(ctx context.Context, req UIRequest) (UIResponse, error)
	// Notify receives the fire-and-forget requests, in order, on the
	// reader goroutine: it must return quickly.
	Notify(req UIRequest)
}

// UIFuncs adapts two functions to UIHandler; a nil DialogFunc cancels every
// dialog, a nil NotifyFunc ignores notices.
type UIFuncs struct {
	DialogFunc func(ctx context.Context, req UIRequest) (UIResponse, error)
	NotifyFunc func(req UIRequest)
}

// Dialog calls DialogFunc, or cancels.
func (f UIFuncs) Dialog(ctx context.Context, req UIRequest) (UIResponse, error) {
	if f.DialogFunc == nil {
		return UIResponse{Cancelled: true}, nil
	}
	return f.DialogFunc(ctx, req)
}

// Notify calls NotifyFunc if set.
func (f UIFuncs) Notify(req UIRequest) {
	if f.NotifyFunc != nil {
		f.NotifyFunc(req)
	}
}

// OnUI sets the handler of extension UI requests (nil restores the
// default). Without a handler, on the connection's own session every
// dialog is answered cancelled at once, so an extension never waits on a
// host that has no UI; on a session by id the client leaves dialogs to
// the clients that have a handler (the first answer wins), and an
// observer answers none. Notices are dropped (they still reach
// subscribers as events).
func (t *target) OnUI(h UIHandler) {
	t.c.mu.Lock()
	t.ui = h
	t.c.mu.Unlock()
}

var errUICancel = errors.New("xcsh client: dialog cancelled by the agent")

type uiReply struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Value     *string `json:"value,omitempty"`
	Confirmed *bool   `json:"confirmed,omitempty"`
	Cancelled bool    `json:"cancelled,omitempty"`
	TimedOut  bool    `json:"timedOut,omitempty"`
	SessionID string  `json:"sessionId,omitempty"`
}

// uiRequest routes an extension_ui_request frame (reader goroutine).
func (t *target) uiRequest(line []byte) {
	var req UIRequest
	if json.Unmarshal(line, &req) != nil {
		return
	}
	req.Raw = json.RawMessage(line)
	var target struct {
		TargetID string `json:"targetId"`
	}
	c := t.c
	c.mu.Lock()
	h := t.ui
	ended := c.ended || (t.s != nil && t.s.ended)
	answers := t.answersLocked()
	sid := t.sidLocked()
	c.mu.Unlock()
	if ended {
		return
	}
	switch {
	case req.Method == "cancel":
		if json.Unmarshal(line, &target) == nil {
			t.cancelCall(target.TargetID, errUICancel)
		}
	case !req.IsDialog():
		if h != nil {
			h.Notify(req)
		}
	case !answers:
	case h == nil:
		if t.s == nil {
			t.replyNow(uiReply{Type: "extension_ui_response", ID: req.ID, Cancelled: true})
		}
	default:
		t.startDialog(h, req, sid)
	}
}

func (t *target) startDialog(h UIHandler, req UIRequest, sid string) {
	c := t.c
	c.mu.Lock()
	if c.ended { // Close is waiting for the handlers: start none
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancelCause(c.root)
	t.uiCalls[req.ID] = cancel
	c.handlers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.handlers.Done()
		defer func() {
			c.mu.Lock()
			delete(t.uiCalls, req.ID)
			c.mu.Unlock()
			cancel(nil)
		}()
		dctx := ctx
		if d := req.Timeout(); d > 0 {
			var stop context.CancelFunc
			dctx, stop = context.WithTimeout(ctx, d)
			defer stop()
		}
		resp, err := h.Dialog(dctx, req)
		reply := uiReply{Type: "extension_ui_response", ID: req.ID, SessionID: sid}
		switch {
		case ctx.Err() != nil:
			return // cancelled by the agent, answered by another client, or disconnected: nobody waits
		case dctx.Err() != nil:
			reply.Cancelled, reply.TimedOut = true, true
		case err != nil || resp.Cancelled:
			reply.Cancelled = true
		case req.Method == "confirm":
			reply.Confirmed = &resp.Confirmed
		default:
			reply.Value = &resp.Value
		}
		_ = t.reply(ctx, reply)
	}()
}
