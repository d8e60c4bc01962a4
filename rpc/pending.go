package rpc

import (
	"context"
	"encoding/json"
	"strings"
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
	// resolved, if set, hears of each request answered, on the reader
	// (Options.Resolved).
	resolved func(id string)
}

type pendingReply struct {
	update func(line []byte) // intermediate replies; nil ignores them
	done   chan []byte       // cap 1: the final reply frame
	gone   chan struct{}     // closed when the host has gone
}

// AwaitTool implements engine.HostLink: the host_tool_result decoded by
// hostToolResult, host_tool_update frames by hostToolUpdate.
func (s *Server) AwaitTool(ctx context.Context, id string, send func(), update func(engine.ToolResult)) (engine.ToolResult, error) {
	var onUpdate func([]byte)
	if update != nil {
		onUpdate = func(line []byte) {
			if r, ok := hostToolUpdate(line); ok {
				update(r)
			}
		}
	}
	line, err := s.pending.await(ctx, id, send, onUpdate)
	if err != nil {
		return engine.ToolResult{}, err
	}
	return hostToolResult(line), nil
}

// AwaitDialog implements engine.HostLink: the extension_ui_response
// decoded by dialogReply.
func (s *Server) AwaitDialog(ctx context.Context, id string, send func()) (engine.DialogReply, error) {
	line, err := s.pending.await(ctx, id, send, nil)
	if err != nil {
		return engine.DialogReply{}, err
	}
	return dialogReply(line), nil
}

// await registers id, sends the request and waits for the final reply
// frame (returned as read), the host's departure or ctx.
func (t *pendingTable) await(ctx context.Context, id string, send func(), update func([]byte)) ([]byte, error) {
	p := &pendingReply{update: update, done: make(chan []byte, 1), gone: make(chan struct{})}
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
	if final && t.resolved != nil {
		t.resolved(id)
	}
	if final {
		p.done <- c.line
	} else if p.update != nil {
		p.update(c.line)
	}
	return true
}

// lateReply answers a final reply to a request of ours that waits no
// more (another client answered it first, or it was cancelled or timed
// out), on a served session, where several clients may answer: the
// client is told so, in order. It reports false for anything else. (reader)
func (s *Server) lateReply(c *command) bool {
	if final := replyFrames[c.typ]; !final {
		return false
	}
	var id string
	if json.Unmarshal(c.id, &id) != nil || !wellFormedReply(c) {
		return false
	}
	s.in.push(inboxItem{size: len(c.line), pass: true, fn: func(func()) { s.fail(c, &notWaitingError{id}) }})
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

// The replies are read here, by the reading rule (jsonread.go), into the
// engine's types: the engine never reads a frame of this protocol.

// hostToolResult reads a host_tool_result: a truthy isError makes an error
// result of its joined text (images and details dropped, as the original
// does); otherwise the host's result object passes through as is (Raw),
// its content and details feeding the tool result message.
func hostToolResult(line []byte) engine.ToolResult {
	var f struct {
		Result  json.RawMessage `json:"result"`
		IsError json.RawMessage `json:"isError"`
	}
	_ = readExact(line, &f)
	var r struct {
		Content   []engine.ContentBlock `json:"content"`
		Details   json.RawMessage       `json:"details"`
		IsWarning bool                  `json:"isWarning"`
	}
	if len(f.Result) > 0 {
		_ = readExact(f.Result, &r)
	}
	if truthy(f.IsError) {
		var parts []string
		for _, b := range r.Content {
			if b.Type == engine.BlockText {
				parts = append(parts, b.Text)
			}
		}
		text := strings.TrimSpace(strings.Join(parts, "\n"))
		if text == "" {
			text = hostToolFailedText
		}
		return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(text)}, Details: []byte("{}"), IsError: true}
	}
	return engine.ToolResult{Content: r.Content, Details: compactRawValue(r.Details), IsWarning: r.IsWarning, Raw: compactRawValue(f.Result)}
}

// hostToolUpdate reads a host_tool_update's partialResult, passed through
// verbatim; ok is false when it has none.
func hostToolUpdate(line []byte) (engine.ToolResult, bool) {
	raw := member(line, "partialResult")
	if len(raw) == 0 {
		return engine.ToolResult{}, false
	}
	return engine.ToolResult{Raw: compactRawValue(raw)}, true
}

// dialogReply reads an extension_ui_response by key presence, as the
// original does: a truthy cancelled wins; then value or confirmed. A value
// that is not a string (a number, an object) is taken as its JSON text.
func dialogReply(line []byte) engine.DialogReply {
	var f struct {
		Value     json.RawMessage `json:"value"`
		Confirmed json.RawMessage `json:"confirmed"`
		Cancelled json.RawMessage `json:"cancelled"`
		TimedOut  json.RawMessage `json:"timedOut"`
	}
	_ = readExact(line, &f)
	if truthy(f.Cancelled) {
		return engine.DialogReply{Cancelled: true, TimedOut: truthy(f.TimedOut)}
	}
	r := engine.DialogReply{Confirmed: truthy(f.Confirmed)}
	if len(f.Value) > 0 && string(f.Value) != "null" {
		r.HasValue = true
		if json.Unmarshal(f.Value, &r.Value) != nil {
			r.Value = string(f.Value)
		}
	}
	return r
}

// truthy is JavaScript's truthiness of a JSON value (absent is false).
func truthy(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "false", "null", "0", "-0", `""`:
		return false
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return f != 0
	}
	return true
}

var _ engine.HostLink = (*Server)(nil)
