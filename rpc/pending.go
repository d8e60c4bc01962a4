package rpc

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// pendingTable holds the requests the engine sent to the host and is
// waiting on (host tool calls, UI dialogs), keyed by request id. Replies
// are resolved on the reader goroutine, as x/tools' jsonrpc2 retires its
// outgoing calls: a reply never waits behind the executor queue or a
// blocked stdout, so a run waiting for the host always gets its answer.
type pendingTable struct {
	mu     sync.Mutex
	m      map[string]*pendingReply
	closed bool // the host has gone (stdin EOF): nothing more will arrive
}

type pendingReply struct {
	update func(raw []byte) // intermediate replies; nil ignores them
	done   chan []byte      // cap 1: the final reply
	gone   chan struct{}    // closed when the host has gone
}

// Await implements engine.HostLink.
func (s *Server) Await(ctx context.Context, id string, send func(), update func(raw []byte)) ([]byte, error) {
	p := &pendingReply{update: update, done: make(chan []byte, 1), gone: make(chan struct{})}
	t := &s.pending
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, engine.ErrHostGone
	}
	if t.m == nil {
		t.m = map[string]*pendingReply{}
	}
	t.m[id] = p
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		if t.m[id] == p {
			delete(t.m, id)
		}
		t.mu.Unlock()
	}()
	// Registered before the request is written: a host that answers at once
	// cannot outrun the table.
	send()
	select {
	case b := <-p.done:
		return b, nil
	case <-p.gone:
		return nil, engine.ErrHostGone
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// replyFrames are the frames that answer a request of ours. Each maps to
// whether it is final (resolves the request) or intermediate.
var replyFrames = map[string]bool{
	"host_tool_result":      true,
	"extension_ui_response": true,
	"host_tool_update":      false,
}

// resolve delivers a well-formed reply to its pending request, on the
// reader goroutine. It reports false when the frame is not a reply to a
// pending request, or is malformed: the frame then takes the ordinary path
// (malformed frames are answered there, late or unknown ids ignored).
func (t *pendingTable) resolve(c *command) bool {
	final, isReply := replyFrames[c.typ]
	if !isReply || !c.typeIsString {
		return false
	}
	var id string
	if json.Unmarshal(c.id, &id) != nil || !wellFormedReply(c) {
		return false
	}
	t.mu.Lock()
	p := t.m[id]
	if p != nil && final {
		delete(t.m, id)
	}
	t.mu.Unlock()
	if p == nil {
		return false
	}
	if final {
		p.done <- c.line
	} else if p.update != nil {
		p.update(c.line)
	}
	return true
}

// close fails every pending request: the host has gone.
func (t *pendingTable) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for id, p := range t.m {
		close(p.gone)
		delete(t.m, id)
	}
}

var _ engine.HostLink = (*Server)(nil)
