package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a request whose context has no deadline, and the
// wait for the ready frame, when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// DefaultCloseGrace is how long Close waits for the agent to finish its
// running work after stdin is closed, when Options.CloseGrace is zero.
const DefaultCloseGrace = 5 * time.Second

// bashTimeout is the default bound of a bash request: the agent itself ends
// a command after 300 s and kills its group 2 s later, so a shorter default
// would give up on commands the agent still answers.
const bashTimeout = 310 * time.Second

// Options configures a Client.
type Options struct {
	// Path is the xcsh binary; "xcsh" (looked up in PATH) when empty. Start only.
	Path string
	// Args follow "--mode rpc" on the command line. Start only.
	Args []string
	// Env is added to the current environment (later entries win); nil
	// inherits it unchanged. Start only.
	Env []string
	// Dir is the agent's working directory; the current one when empty.
	// Start only.
	Dir string
	// Stderr receives the agent's stderr. The last 32 KiB are kept in any
	// case for error messages. Start only.
	Stderr io.Writer
	// Timeout bounds each request whose ctx has no deadline, and Start's
	// wait for the ready frame. Default DefaultTimeout.
	Timeout time.Duration
	// CloseGrace is how long Close lets the agent finish its work after
	// closing stdin before it stops the process (SIGTERM, then SIGKILL).
	// Default DefaultCloseGrace.
	CloseGrace time.Duration
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) grace() time.Duration {
	if o.CloseGrace > 0 {
		return o.CloseGrace
	}
	return DefaultCloseGrace
}

// Client is a connection to one xcsh agent in RPC mode. Its methods are safe
// for concurrent use.
type Client struct {
	opts Options
	r    io.Reader
	w    io.Writer
	proc *process // nil for New

	// wmu serialises writes so every frame goes out in one Write.
	wmu sync.Mutex

	// root is cancelled when the connection ends; host tool and dialog
	// handlers derive their contexts from it (the documented exception to
	// "no ctx in a struct": it is the lifetime of the connection).
	root       context.Context
	cancelRoot context.CancelFunc

	// mu guards everything below. The reader goroutine takes it briefly per
	// frame and never blocks while holding it.
	mu        sync.Mutex
	seq       uint64
	pending   map[string]*call
	subs      map[*subscription]struct{}
	tools     map[string]HostTool
	toolCalls map[string]context.CancelCauseFunc
	ui        UIHandler
	uiCalls   map[string]context.CancelCauseFunc
	closed    bool // no new requests; set by Close or at the end of the stream
	ended     bool // end has run: no more events reach subscribers
	endErr    error
	version   string

	handlers sync.WaitGroup // host tool and dialog goroutines
	ready    chan struct{}  // closed on the ready frame
	done     chan struct{}  // closed when the connection has ended (end)
	readDone chan struct{}  // closed when readLoop has returned

	endOnce   sync.Once
	closeOnce sync.Once
	closeErr  error
}

// call is a request waiting for its response. A prompt stays in the table
// after its acknowledgement (acked) until its late failure or settlement.
type call struct {
	id   string
	typ  string
	seq  uint64
	resp chan result // capacity 1: the first response, or the end of the connection

	prompt bool
	acked  bool
	late   chan error // prompts only: capacity 1, closed when settled
}

type result struct {
	f   *frame
	err error
}

// frame is the envelope of anything the agent writes.
type frame struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id"`
	Command json.RawMessage `json:"command"`
	Success *bool           `json:"success"`
	Error   string          `json:"error"`
	Code    string          `json:"code"`
	Data    json.RawMessage `json:"data"`
}

// New returns a Client speaking the protocol over existing streams: r is
// the agent's stdout, w its stdin. It does not wait for the ready frame
// (WaitReady does). Close closes w, and r too when it is an io.Closer and
// the agent has not ended the stream within the close grace.
func New(r io.Reader, w io.Writer, opts Options) *Client {
	c := &Client{
		opts:      opts,
		r:         r,
		w:         w,
		pending:   map[string]*call{},
		subs:      map[*subscription]struct{}{},
		toolCalls: map[string]context.CancelCauseFunc{},
		uiCalls:   map[string]context.CancelCauseFunc{},
		ready:     make(chan struct{}),
		done:      make(chan struct{}),
		readDone:  make(chan struct{}),
	}
	c.root, c.cancelRoot = context.WithCancel(context.Background())
	go c.readLoop()
	return c
}

// WaitReady waits for the agent's ready frame, bounded by ctx or, without
// a deadline, by Options.Timeout.
func (c *Client) WaitReady(ctx context.Context) error {
	ctx, cancel := c.bound(ctx, c.opts.timeout())
	defer cancel()
	select {
	case <-c.ready:
		return nil
	case <-c.done:
		select {
		case <-c.ready:
			return nil
		default:
		}
		return fmt.Errorf("%w: the stream ended before the ready frame", ErrNotReady)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotReady, ctx.Err())
	}
}

// Version is the version the ready frame announced ("" before it).
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Done is closed when the connection has ended (the agent's stdout reached
// EOF, or Close).
func (c *Client) Done() <-chan struct{} { return c.done }

// bound gives ctx the default deadline d unless it already has one: a
// caller extends (or shortens) the bound of a long command through ctx.
func (c *Client) bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Call sends a command of any type with the fields of fields (a struct or
// map that encodes as a JSON object, or nil) and returns its data: nil when
// the response has none, "null" when it is null. A failure is a
// *CommandError, also when the agent answers without an id: an
// "Unknown command" frame or a "parse" frame is matched to a waiting
// request by rule (see resolve), so the caller does not wait out its
// timeout. The id and type are written after the fields, so a
// field named "id" or "type" cannot replace them (the agent reads a
// repeated key's last value).
func (c *Client) Call(ctx context.Context, typ string, fields any) (json.RawMessage, error) {
	f, _, err := c.do(ctx, typ, fields, false)
	if err != nil {
		return nil, err
	}
	return f.Data, nil
}

// call sends a typed command and decodes its data into out (when out is
// non-nil and data is present).
func (c *Client) call(ctx context.Context, typ string, fields any, out any) error {
	f, _, err := c.do(ctx, typ, fields, false)
	if err != nil {
		return err
	}
	if out == nil || len(f.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.Data, out); err != nil {
		return fmt.Errorf("xcsh %s: decoding data: %w", typ, err)
	}
	return nil
}

// do sends one request and waits for its first response. For a prompt
// (prompt=true) the entry stays pending after a successful
// acknowledgement, to receive the late failure.
func (c *Client) do(ctx context.Context, typ string, fields any, prompt bool) (*frame, *call, error) {
	d := c.opts.timeout()
	if typ == "bash" && d < bashTimeout {
		d = bashTimeout
	}
	ctx, cancel := c.bound(ctx, d)
	defer cancel()

	c.mu.Lock()
	if c.closed {
		err := c.closedErr(typ)
		c.mu.Unlock()
		return nil, nil, err
	}
	c.seq++
	cl := &call{id: fmt.Sprintf("c%d", c.seq), typ: typ, seq: c.seq, resp: make(chan result, 1), prompt: prompt}
	if prompt {
		cl.late = make(chan error, 1)
	}
	c.pending[cl.id] = cl
	c.mu.Unlock()

	line, err := encodeRequest(cl.id, typ, fields)
	if err == nil {
		err = c.writeLine(line)
	}
	if err != nil {
		c.forget(cl)
		return nil, nil, fmt.Errorf("xcsh %s: %w", typ, err)
	}

	select {
	case r := <-cl.resp:
		if r.err != nil {
			return nil, nil, r.err
		}
		if r.f.Success == nil || !*r.f.Success {
			return nil, nil, commandError(typ, r.f)
		}
		return r.f, cl, nil
	case <-ctx.Done():
		c.forget(cl)
		return nil, nil, fmt.Errorf("xcsh %s: no response: %w", typ, context.Cause(ctx))
	}
}

// closedErr is the error of a request made after the end; c.mu is held.
func (c *Client) closedErr(typ string) error {
	if c.endErr != nil {
		return fmt.Errorf("xcsh %s: %w", typ, c.endErr)
	}
	return fmt.Errorf("xcsh %s: %w", typ, ErrClosed)
}

// forget drops a request nobody waits for any more; a response that comes
// later is delivered to subscribers as an uncorrelated frame.
func (c *Client) forget(cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[cl.id] == cl {
		delete(c.pending, cl.id)
		if cl.late != nil && !cl.acked {
			close(cl.late)
		}
	}
}

func commandError(typ string, f *frame) *CommandError {
	cmd := typ
	if s, ok := stringOf(f.Command); ok && s != "" {
		cmd = s
	}
	msg := f.Error
	if msg == "" {
		msg = "failed without an error text"
	}
	return &CommandError{Command: cmd, Message: msg, Code: f.Code}
}

// encodeRequest builds one request line: the fields, then type and id.
func encodeRequest(id, typ string, fields any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	if fields != nil {
		b, err := marshal(fields)
		if err != nil {
			return nil, err
		}
		b = bytes.TrimSpace(b)
		if !bytes.Equal(b, []byte("null")) {
			if len(b) < 2 || b[0] != '{' {
				return nil, fmt.Errorf("fields must encode as a JSON object, not %.40s", b)
			}
			if inner := bytes.TrimSpace(b[1 : len(b)-1]); len(inner) > 0 {
				buf.Write(inner)
				buf.WriteByte(',')
			}
		}
	}
	t, err := marshal(typ)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`"type":`)
	buf.Write(t)
	buf.WriteString(`,"id":"`)
	buf.WriteString(id)
	buf.WriteString("\"}\n")
	return buf.Bytes(), nil
}

// marshal encodes v without HTML escaping, so the agent's logs and session
// files read like what the host sent.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// send writes a frame that expects no response (host tool and UI replies).
func (c *Client) send(v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	return c.writeLine(append(b, '\n'))
}

func (c *Client) writeLine(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(line)
	return err
}

func stringOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// readLoop is the only reader of the agent's stdout. It decodes each frame
// and routes it; it never waits for a caller or a subscriber.
func (c *Client) readLoop() {
	defer close(c.readDone)
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		// ReadBytes, not a Scanner: a frame may be far larger than 64 KiB.
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.route(line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrClosed
			}
			c.end(err)
			return
		}
	}
}

func (c *Client) route(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		// Not a frame; subscribers still see it (Type "").
		c.publish(Event{Raw: json.RawMessage(append([]byte(nil), line...))})
		return
	}
	if f.Type == "response" && c.resolve(&f) {
		return
	}
	// Published before acting on it, so whoever the frame unblocks (Start
	// waiting for ready, a settled prompt) and then subscribes does not
	// see it as a new event.
	c.publish(Event{Type: f.Type, Raw: json.RawMessage(line)})
	switch f.Type {
	case "ready":
		c.mu.Lock()
		select {
		case <-c.ready:
		default:
			_ = json.Unmarshal(line, &struct {
				Version *string `json:"version"`
			}{&c.version})
			close(c.ready)
		}
		c.mu.Unlock()
	case "agent_start", "agent_end":
		c.settlePrompts()
	case "host_tool_call":
		c.hostToolCall(line)
	case "host_tool_cancel":
		c.hostToolCancel(line)
	case "extension_ui_request":
		c.uiRequest(line)
	}
}

// resolve matches a response to its request and reports whether it did.
//
// A frame with a string id goes to that request; for an acknowledged
// prompt it is the late failure. The id-less frames cannot name their
// request, so they are matched by rule, which keeps a caller from waiting
// out its timeout: "Unknown command: <type>" goes to the oldest request of
// that type still waiting for its first response; a "parse" frame to the
// oldest request waiting for its first response, preferring one that is
// not of a command answered out of order (abort, abort_and_prompt, bash),
// since the agent answers those when their work ends.
func (c *Client) resolve(f *frame) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := stringOf(f.ID); ok {
		cl := c.pending[id]
		if cl == nil {
			return false
		}
		if cl.acked {
			delete(c.pending, id)
			if f.Success == nil || !*f.Success {
				cl.late <- commandError(cl.typ, f)
			}
			close(cl.late)
			return true
		}
		if cl.prompt && f.Success != nil && *f.Success {
			cl.acked = true
		} else {
			delete(c.pending, id)
			if cl.late != nil {
				close(cl.late)
			}
		}
		cl.resp <- result{f: f}
		return true
	}
	if len(f.ID) > 0 || (f.Success != nil && *f.Success) {
		return false
	}
	cmd, ok := stringOf(f.Command)
	if !ok {
		return false
	}
	var best *call
	switch {
	case cmd == "parse":
		var bestWaiting *call
		for _, cl := range c.pending {
			if cl.acked {
				continue
			}
			if answersLate(cl.typ) {
				if bestWaiting == nil || cl.seq < bestWaiting.seq {
					bestWaiting = cl
				}
			} else if best == nil || cl.seq < best.seq {
				best = cl
			}
		}
		if best == nil {
			best = bestWaiting
		}
	case strings.HasPrefix(f.Error, "Unknown command: "):
		for _, cl := range c.pending {
			if !cl.acked && cl.typ == cmd && (best == nil || cl.seq < best.seq) {
				best = cl
			}
		}
	}
	if best == nil {
		return false
	}
	delete(c.pending, best.id)
	if best.late != nil {
		close(best.late)
	}
	best.resp <- result{f: f}
	return true
}

// answersLate names the commands the agent answers when their work ends,
// so later commands may be answered first.
func answersLate(typ string) bool {
	switch typ {
	case "abort", "abort_and_prompt", "bash":
		return true
	}
	return false
}

// settlePrompts closes the late channel of every acknowledged prompt: once
// a run starts or ends after the acknowledgement, the prompt has started or
// been queued, and a failure to start can no longer come (the agent writes
// it right after the acknowledgement).
func (c *Client) settlePrompts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, cl := range c.pending {
		if cl.acked {
			delete(c.pending, id)
			close(cl.late)
		}
	}
}

// end runs once the stream is over (EOF, read error, or Close): pending
// requests fail, prompts settle, handlers are cancelled and subscriptions
// drain and close.
func (c *Client) end(cause error) {
	c.endOnce.Do(func() { c.endNow(cause) })
}

func (c *Client) endNow(cause error) {
	if !errors.Is(cause, ErrClosed) {
		cause = fmt.Errorf("%w: %v", ErrClosed, cause)
	}
	c.mu.Lock()
	c.endErr = cause
	c.closed = true
	c.ended = true
	pending := c.pending
	c.pending = map[string]*call{}
	subs := make([]*subscription, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for _, cl := range pending {
		if cl.acked {
			close(cl.late)
			continue
		}
		if cl.late != nil {
			close(cl.late)
		}
		cl.resp <- result{err: fmt.Errorf("xcsh %s: %w", cl.typ, cause)}
	}
	c.cancelRoot()
	for _, s := range subs {
		s.finish()
	}
	close(c.done)
}
