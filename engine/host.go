package engine

import (
	"context"
	"sync"
)

// HostLink is how the engine asks the host something (a host tool call, a
// UI dialog) and waits for the answer. The engine emits the request as an
// event (HostToolCall, a dialog's extension_ui_request) through the Sink,
// so it keeps its place among the events; the front that owns the wire
// decodes the host's reply into the engine's types and delivers it. rpc
// resolves replies on its reader goroutine through a pending-request
// table, so a reply arrives even while the executor is busy or stdout is
// blocked; another front (ACP) maps the same requests onto its own.
//
// Each Await method registers id, calls send (which emits the request
// through the executor), and waits for the host's final reply to id. It
// returns context.Cause(ctx) when ctx ends first, and ErrHostGone when the
// host has gone (or there is no host).
//
// The methods block: only run and tool goroutines may call them, never a
// function running on the executor (whose reply could then never be
// handled).
type HostLink interface {
	// AwaitTool waits for a host tool's result. update, if not nil,
	// receives each intermediate result the host streams (called on the
	// front's reader goroutine; it must not block).
	AwaitTool(ctx context.Context, id string, send func(), update func(ToolResult)) (ToolResult, error)
	// AwaitDialog waits for the user's answer to a dialog.
	AwaitDialog(ctx context.Context, id string, send func()) (DialogReply, error)
}

// UI is how a tool, or the tool-call gate, asks the host's user something.
// The session gives every tool call its own (ToolCall.UI), built on the
// session's HostLink, so nothing has to be bound after construction.
type UI interface {
	Dialog(ctx context.Context, req DialogRequest) (DialogReply, error)
}

// sendOrder orders the requests that the parallel calls of one tool batch
// send to the host, in the deterministic mode only (Config.OrderedResults):
// the calls of a batch start together, and which one's request is written
// first would otherwise be a race that a golden transcript must not
// record. A call waits for the one before it to have sent (or finished)
// before it sends; a call that sends nothing passes its turn on when it
// ends. The zero of *sendOrder (nil) orders nothing. It travels with the
// call (ToolCall.order), never in a context.
type sendOrder struct {
	wait <-chan struct{}
	mine chan struct{}
	once sync.Once
}

// newSendOrder returns the turn that follows prev (nil: the first).
func newSendOrder(prev *sendOrder) *sendOrder {
	o := &sendOrder{mine: make(chan struct{})}
	if prev != nil {
		o.wait = prev.mine
	}
	return o
}

// await waits for the previous call's turn to pass (or ctx to end).
func (o *sendOrder) await(ctx context.Context) {
	if o == nil || o.wait == nil {
		return
	}
	select {
	case <-o.wait:
	case <-ctx.Done():
	}
}

// done passes the turn on (idempotent).
func (o *sendOrder) done() {
	if o != nil {
		o.once.Do(func() { close(o.mine) })
	}
}

// askHost sends the request built for a fresh id of the given kind
// ("host", "ui") and waits for the reply through await, registered as a
// cancellable activity of act. It must be called from a run or tool
// goroutine. cancelFrame, if not nil, builds the frame that tells the host
// a request was withdrawn (on cancellation); it is emitted before askHost
// returns. order, when not nil, is the call's turn to send (sendOrder).
func askHost[T any](s *Session, ctx context.Context, order *sendOrder, act ActivityKind, kind string,
	frame func(id string) Event, cancelFrame func(id string) Event,
	await func(ctx context.Context, id string, send func()) (T, error)) (T, error) {
	if s.cfg.Host == nil {
		var zero T
		return zero, ErrHostGone
	}
	defer order.done()
	order.await(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer s.acts.add(act, cancel)()
	id := s.cfg.IDs.NewID(kind)
	reply, err := await(ctx, id, func() {
		s.Call(func() { s.emit(frame(id)) })
		order.done()
	})
	if err != nil && ctx.Err() != nil && cancelFrame != nil {
		s.Call(func() { s.emit(cancelFrame(id)) })
	}
	return reply, err
}

// callUI is the UI of one tool call: the session's dialogs, sent in the
// call's turn and tied to the call.
type callUI struct {
	s     *Session
	order *sendOrder
	id    string // the call's id
}

// Dialog implements UI.
func (u callUI) Dialog(ctx context.Context, req DialogRequest) (DialogReply, error) {
	if req.ToolCallID == "" {
		req.ToolCallID = u.id
	}
	return u.s.dialog(ctx, u.order, req)
}
