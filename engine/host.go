package engine

import (
	"context"
)

// HostLink is how the engine asks the host something (a host tool call,
// an extension UI dialog) and waits for the answer. rpc implements it with
// a pending-request table resolved on the reader goroutine, so a reply is
// delivered even while the executor is busy or stdout is blocked.
//
// Await registers id, calls send (which emits the request frame through
// the executor, so it keeps its place among the events), and waits for
// the host's final reply to id, returning the raw reply frame. update, if
// not nil, receives each intermediate reply (host_tool_update) on the
// reader goroutine and must not block. Await returns context.Cause(ctx)
// when ctx ends first, and ErrHostGone when the host has gone.
//
// Await blocks: only run and tool goroutines may call it, never a function
// running on the executor (whose reply could then never be handled).
type HostLink interface {
	Await(ctx context.Context, id string, send func(), update func(raw []byte)) ([]byte, error)
}

// AskHost sends the frame built for a fresh id of the given kind ("host",
// "ui") and waits for the reply, registered as a cancellable activity of
// act. It must be called from a run or tool goroutine. cancelFrame, if not
// nil, builds the frame that tells the host a request was withdrawn (on
// cancellation); it is emitted before AskHost returns.
func (s *Session) AskHost(ctx context.Context, act ActivityKind, kind string, frame func(id string) Event, cancelFrame func(id string) Event, update func(raw []byte)) ([]byte, error) {
	if s.cfg.Host == nil {
		return nil, ErrHostGone
	}
	turn, _ := ctx.Value(sendTurnKey{}).(*sendTurn)
	if turn != nil {
		defer turn.done()
		select {
		case <-turn.wait:
		case <-ctx.Done():
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer s.acts.add(act, cancel)()
	id := s.cfg.IDs.NewID(kind)
	reply, err := s.cfg.Host.Await(ctx, id, func() {
		s.Call(func() { s.emit(frame(id)) })
		if turn != nil {
			turn.done()
		}
	}, update)
	if err != nil && ctx.Err() != nil && cancelFrame != nil {
		s.Call(func() { s.emit(cancelFrame(id)) })
	}
	return reply, err
}
