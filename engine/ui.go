package engine

import (
	"context"
	"errors"
	"time"
)

// Notify is a fire-and-forget extension UI request (rpc-protocol §6.3):
// a message for the host to show its user. The engine sends one when
// something the user would want to know happens without a frame of its
// own kind (a retry waiting, for instance).
type Notify struct {
	ID         string
	Message    string
	NotifyType string // "info", "warning" or "error"; omitted when empty
}

// EventType implements Event.
func (Notify) EventType() string { return "extension_ui_request" }

// AppendJSON implements Event: the frame in the original's key order.
func (e Notify) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", e.ID)
	dst = appendStringField(dst, "method", "notify")
	dst = appendStringField(dst, "message", e.Message)
	if e.NotifyType != "" {
		dst = appendStringField(dst, "notifyType", e.NotifyType)
	}
	return append(dst, '}')
}

// notify emits a Notify with a fresh UI id. (actor)
func (s *Session) notify(kind, message string) {
	s.emit(Notify{ID: s.cfg.IDs.NewID("ui"), Message: message, NotifyType: kind})
}

// Dialogs (rpc-protocol.md §6.1): the engine asks the host's user
// something and waits, through the HostLink, on a run or tool goroutine.

// The dialog methods.
const (
	DialogSelect  = "select"
	DialogConfirm = "confirm"
	DialogInput   = "input"
	DialogEditor  = "editor"
)

// DialogRequest is one question for the host's user.
type DialogRequest struct {
	Method      string // DialogSelect, DialogConfirm, DialogInput or DialogEditor
	Title       string
	Message     string   // confirm
	Options     []string // select
	Placeholder string   // input
	Prefill     string   // editor
	// Timeout, when positive, resolves the dialog to its default once it
	// passes (on the session's clock); the host is told to close it.
	// Editors have none, as in the original.
	Timeout time.Duration
	// ToolCallID is the tool call that asks (its UI sets it), "" for a
	// dialog of no call. The RPC wire does not carry it; ACP ties its
	// permission requests to the call.
	ToolCallID string
	// Scope is what an "always allow" answer to a confirm covers, in
	// words a user reads ("commands matching \"echo *\""): a front that
	// offers such an answer remembers it for later confirms of the same
	// tool, title and scope only. "" covers every later confirm of the
	// tool and title.
	Scope string
}

// DialogReply is the user's answer. A dismissed, timed-out or withdrawn
// dialog is Cancelled, with the default (no value, not confirmed).
type DialogReply struct {
	Value     string
	HasValue  bool
	Confirmed bool
	Cancelled bool
	TimedOut  bool
}

// DialogOpen is the event that puts a dialog to the host: the RPC front
// writes it as an extension_ui_request, the ACP front turns it into a
// permission or elicitation request. ID is the dialog's (the one its
// HostLink.AwaitDialog waits on).
type DialogOpen struct {
	ID      string
	Request DialogRequest
}

// EventType implements Event.
func (DialogOpen) EventType() string { return "extension_ui_request" }

// AppendJSON implements Event.
func (f DialogOpen) AppendJSON(dst []byte) []byte {
	r := f.Request
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", f.ID)
	dst = appendStringField(dst, "method", r.Method)
	dst = appendStringField(dst, "title", r.Title)
	switch r.Method {
	case DialogSelect:
		dst = append(appendKey(dst, "options"), '[')
		for i, o := range r.Options {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, o)
		}
		dst = append(dst, ']')
	case DialogConfirm:
		dst = appendStringField(dst, "message", r.Message)
	case DialogInput:
		if r.Placeholder != "" {
			dst = appendStringField(dst, "placeholder", r.Placeholder)
		}
	case DialogEditor:
		if r.Prefill != "" {
			dst = appendStringField(dst, "prefill", r.Prefill)
		}
	}
	if r.Timeout > 0 && r.Method != DialogEditor {
		dst = appendIntField(dst, "timeout", r.Timeout.Milliseconds())
	}
	return append(dst, '}')
}

// DialogCancel tells the host that dialog Target was withdrawn (timed
// out, or its call was cancelled) and resolved to its default.
type DialogCancel struct{ ID, Target string }

// EventType implements Event.
func (DialogCancel) EventType() string { return "extension_ui_request" }

// AppendJSON implements Event.
func (f DialogCancel) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", f.ID)
	dst = appendStringField(dst, "method", "cancel")
	dst = appendStringField(dst, "targetId", f.Target)
	return append(dst, '}')
}

var errDialogTimeout = errors.New("dialog timed out")

// Dialog asks the host's user and waits for the answer, a timeout or ctx.
// On a timeout or a cancellation the dialog resolves to its default and a
// cancel frame tells the host to close it; when the host has gone it
// resolves to its default too. The error is ctx's when ctx ended the
// dialog. Call it from a run or tool goroutine only (a tool uses its
// call's UI, which keeps the call's turn in deterministic mode).
func (s *Session) Dialog(ctx context.Context, req DialogRequest) (DialogReply, error) {
	return s.dialog(ctx, nil, req)
}

func (s *Session) dialog(ctx context.Context, order *sendOrder, req DialogRequest) (DialogReply, error) {
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if req.Timeout > 0 && req.Method != DialogEditor {
		fired, stop := s.cfg.Clock.After(req.Timeout)
		defer stop()
		go func() {
			select {
			case <-fired:
				cancel(errDialogTimeout)
			case <-dctx.Done():
			}
		}()
	}
	reply, err := askHost(s, dctx, order, ActDialog, "ui",
		func(id string) Event { return DialogOpen{ID: id, Request: req} },
		func(id string) Event { return DialogCancel{ID: s.cfg.IDs.NewID("ui"), Target: id} },
		func(ctx context.Context, id string, send func()) (DialogReply, error) {
			return s.cfg.Host.AwaitDialog(ctx, id, send)
		})
	switch {
	case err == nil:
		return reply, nil
	case errors.Is(context.Cause(dctx), errDialogTimeout):
		return DialogReply{Cancelled: true, TimedOut: true}, nil
	case errors.Is(err, ErrHostGone):
		return DialogReply{Cancelled: true}, nil
	}
	return DialogReply{Cancelled: true}, err
}

// SetTitle is the fire-and-forget request that names the host's window or
// tab (sent on set_session_name when the host asked for it).
type SetTitle struct{ ID, Title string }

// EventType implements Event.
func (SetTitle) EventType() string { return "extension_ui_request" }

// AppendJSON implements Event.
func (e SetTitle) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", e.ID)
	dst = appendStringField(dst, "method", "setTitle")
	dst = appendStringField(dst, "title", e.Title)
	return append(dst, '}')
}

// emitSetTitle sends a setTitle request with a fresh UI id. (actor)
func (s *Session) emitSetTitle(title string) {
	s.emit(SetTitle{ID: s.cfg.IDs.NewID("ui"), Title: title})
}

// UIStatus is the fire-and-forget setStatus request: a keyed line of
// status; an empty Text clears it (statusText absent).
type UIStatus struct{ ID, Key, Text string }

// UIWidget is the fire-and-forget setWidget request: keyed lines shown
// above or below the host's editor; nil Lines removes the widget.
type UIWidget struct {
	ID, Key   string
	Lines     []string
	Placement string // "aboveEditor" or "belowEditor"; omitted when ""
}

// UIEditorText is the fire-and-forget set_editor_text request: text for
// the host's input box.
type UIEditorText struct{ ID, Text string }

// EventType implements Event.
func (UIStatus) EventType() string { return "extension_ui_request" }

// EventType implements Event.
func (UIWidget) EventType() string { return "extension_ui_request" }

// EventType implements Event.
func (UIEditorText) EventType() string { return "extension_ui_request" }

// AppendJSON implements Event.
func (e UIStatus) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", e.ID)
	dst = appendStringField(dst, "method", "setStatus")
	dst = appendStringField(dst, "statusKey", e.Key)
	if e.Text != "" {
		dst = appendStringField(dst, "statusText", e.Text)
	}
	return append(dst, '}')
}

// AppendJSON implements Event.
func (e UIWidget) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", e.ID)
	dst = appendStringField(dst, "method", "setWidget")
	dst = appendStringField(dst, "widgetKey", e.Key)
	if e.Lines != nil {
		dst = append(appendKey(dst, "widgetLines"), '[')
		for i, l := range e.Lines {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, l)
		}
		dst = append(dst, ']')
	}
	if e.Placement != "" {
		dst = appendStringField(dst, "widgetPlacement", e.Placement)
	}
	return append(dst, '}')
}

// AppendJSON implements Event.
func (e UIEditorText) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", e.ID)
	dst = appendStringField(dst, "method", "set_editor_text")
	dst = appendStringField(dst, "text", e.Text)
	return append(dst, '}')
}

// setStatus sends a setStatus request with a fresh UI id. (actor)
func (s *Session) setStatus(key, text string) {
	s.emit(UIStatus{ID: s.cfg.IDs.NewID("ui"), Key: key, Text: text})
}

// The fire-and-forget UI requests a front or the extension host asks for
// (an extension's ui.notify, setStatus, setWidget, setTitle,
// setEditorText). Each is emitted with a fresh UI id. (actor)

// UINotify shows a message to the host's user; kind is "info", "warning",
// "error" or "" (omitted).
func (s *Session) UINotify(kind, message string) { s.notify(kind, message) }

// UISetStatus sets (or, with text "", clears) a keyed status line.
func (s *Session) UISetStatus(key, text string) { s.setStatus(key, text) }

// UISetWidget shows keyed lines above or below the host's editor; nil
// lines remove the widget.
func (s *Session) UISetWidget(key string, lines []string, placement string) {
	s.emit(UIWidget{ID: s.cfg.IDs.NewID("ui"), Key: key, Lines: lines, Placement: placement})
}

// UISetTitle names the host's window, only when the host asked for titles
// (Config.AnnounceName, pi's PI_RPC_EMIT_TITLE); otherwise it is dropped,
// as the original drops an extension's setTitle.
func (s *Session) UISetTitle(title string) {
	if s.cfg.AnnounceName {
		s.emitSetTitle(title)
	}
}

// UISetEditorText puts text in the host's input box.
func (s *Session) UISetEditorText(text string) {
	s.emit(UIEditorText{ID: s.cfg.IDs.NewID("ui"), Text: text})
}

// ExtensionError is the extension_error frame (rpc-protocol §6.5): an
// extension failed while handling Event ("command" for a slash command).
type ExtensionError struct {
	ExtensionPath, Event, Error string
}

// EventType implements Event.
func (ExtensionError) EventType() string { return "extension_error" }

// AppendJSON implements Event.
func (e ExtensionError) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_error"), "extensionPath", e.ExtensionPath)
	dst = appendStringField(dst, "event", e.Event)
	dst = appendStringField(dst, "error", e.Error)
	return append(dst, '}')
}

// ReportExtensionError emits an extension_error frame. (actor)
func (s *Session) ReportExtensionError(e ExtensionError) { s.emit(e) }
