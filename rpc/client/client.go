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
	// and Dial's wait for the ready frame. Default DefaultTimeout.
	Timeout time.Duration
	// CloseGrace is how long Close lets the agent finish its work after
	// closing stdin (or the connection's sending side) before it stops the
	// process (SIGTERM, then SIGKILL) or drops the connection. Default
	// DefaultCloseGrace.
	CloseGrace time.Duration
	// Token is the token a WebSocket server asks for (sent as
	// "Authorization: Bearer <token>"). Dial only.
	Token string
	// Reconnect says how a Dial client connects again when its connection
	// drops. Dial only.
	Reconnect Reconnect
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

// Client is a connection to an xcsh agent: a process in RPC mode (Start,
// New) or an agent server (Dial). Its typed command methods drive the
// connection's own session (the session of --mode rpc); a server's
// sessions by id are Sessions (OpenSession, Attach), with the same
// methods. Its methods are safe for concurrent use.
type Client struct {
	// target is the connection's own session: the commands without a
	// sessionId, and its host tool and dialog handlers.
	target

	opts Options
	proc *process // nil unless Start
	// dial makes a new connection to the same server (Dial); nil when the
	// client ends with its connection (Start, New).
	dial func(ctx context.Context) (*link, error)
	addr string // what dial reaches, for errors

	// root is cancelled when the client ends; host tool and dialog
	// handlers derive their contexts from it (the documented exception to
	// "no ctx in a struct": it is the lifetime of the client).
	root       context.Context
	cancelRoot context.CancelFunc

	// mu guards everything below, and the state of every target and
	// Session of the client. The reader goroutine takes it briefly per
	// frame and never blocks while holding it.
	mu sync.Mutex
	// link is the connection frames are written to; nil while the client
	// reconnects.
	link *link
	// changed is closed and replaced whenever link or a session's
	// attachment changes: requests waiting to be sent look again.
	changed  chan struct{}
	seq      uint64
	pending  map[string]*call
	subs     map[*subscription]struct{}
	sessions map[string]*Session // sessions by id, by id
	// ownUsed: a command went to the connection's own session on this
	// connection; ownLost: such a connection dropped, and the own session
	// with it (it was the connection's).
	ownUsed, ownLost bool
	closed           bool // no new requests; set by Close or at the end
	ended            bool // end has run: no more events reach subscribers
	endErr           error
	version          string

	handlers sync.WaitGroup // host tool and dialog goroutines
	ready    chan struct{}  // closed on the first ready frame
	done     chan struct{}  // closed when the client has ended (end)
	wake     chan struct{}  // cap 1: the supervisor has work
	superviz chan struct{}  // closed when the supervisor has returned

	// stopCtx ends when Close starts: a reconnection stops (its dials and
	// waits derive from it).
	stopCtx context.Context
	stop    context.CancelFunc

	endOnce   sync.Once
	closeOnce sync.Once
	closeErr  error
}

// call is a request waiting for its response. A prompt stays in the table
// after its acknowledgement (acked) until its late failure or settlement.
type call struct {
	id      string
	typ     string
	seq     uint64
	session string      // the session by id it was sent to; "" for the own session and the server's commands
	gen     int         // the session's attachment it was sent under
	resp    chan result // capacity 1: the first response, or the end of the connection

	prompt bool
	acked  bool
	late   chan error // prompts only: capacity 1, closed when settled

	// onAnswer runs on the reader with a successful answer, before the
	// next frame is routed (an attach's cursor must be in place before
	// the events that follow it).
	onAnswer func(l *link, f *frame)
}

type result struct {
	f   *frame
	err error
}

// frame is the envelope of anything the agent writes.
type frame struct {
	Type      string          `json:"type"`
	ID        json.RawMessage `json:"id"`
	Command   json.RawMessage `json:"command"`
	Success   *bool           `json:"success"`
	Error     string          `json:"error"`
	Code      string          `json:"code"`
	Data      json.RawMessage `json:"data"`
	SessionID string          `json:"sessionId"`
	Seq       uint64          `json:"seq"`
	// Reason is session_closed's: "shutdown" when the server is stopping
	// (the session goes on after its restart), "closed" otherwise.
	Reason string `json:"reason"`
}

// New returns a Client speaking the protocol over existing streams: r is
// the agent's stdout, w its stdin (or a connection to `xcsh serve
// --stdio`). It does not wait for the ready frame (WaitReady does). Close
// closes w, and r too when it is an io.Closer and the agent has not ended
// the stream within the close grace.
func New(r io.Reader, w io.Writer, opts Options) *Client {
	l := &link{r: r, w: w, readDone: make(chan struct{})}
	if wc, ok := w.(io.Closer); ok {
		l.half = wc.Close
	}
	if rc, ok := r.(io.Closer); ok {
		l.hard = rc.Close
	}
	return newClient(l, nil, opts)
}

// newClient starts a client on its first connection; dial, when not nil,
// makes the next ones.
func newClient(l *link, dial func(context.Context) (*link, error), opts Options) *Client {
	c := &Client{
		opts:     opts,
		dial:     dial,
		link:     l,
		changed:  make(chan struct{}),
		pending:  map[string]*call{},
		subs:     map[*subscription]struct{}{},
		sessions: map[string]*Session{},
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
		wake:     make(chan struct{}, 1),
		superviz: make(chan struct{}),
	}
	c.target = newTarget(c, nil)
	c.root, c.cancelRoot = context.WithCancel(context.Background())
	c.stopCtx, c.stop = context.WithCancel(context.Background())
	go c.readLoop(l)
	go c.supervise()
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

// Done is closed when the client has ended: the agent's stdout reached
// EOF, a Dial client's connection dropped and could not be made again, or
// Close.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the client ended (nil while it has not).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

// bound gives ctx the default deadline d unless it already has one: a
// caller extends (or shortens) the bound of a long command through ctx.
func (c *Client) bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return bound(ctx, d)
}

func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// request is one command to send.
type request struct {
	typ    string
	fields any
	// t is the session it goes to; nil for the server's own commands
	// (open_session, attach, get_sessions), which need only a connection.
	t      *target
	prompt bool
	// on, when set, is the connection to send on now, without waiting
	// for the session to be attached (the supervisor's re-attach).
	on       *link
	onAnswer func(l *link, f *frame)
	// reply: an answer to the agent's request (no response comes).
	reply bool
}

// do sends one request and waits for its first response. For a prompt the
// entry stays pending after a successful acknowledgement, to receive the
// late failure. A request waits, within its bound, for a connection (and
// for its session to be attached) before it is sent: a Dial client that
// is reconnecting sends it once it can.
func (c *Client) do(ctx context.Context, rq request) (*frame, *call, error) {
	d := c.opts.timeout()
	if rq.typ == "bash" && d < bashTimeout {
		d = bashTimeout
	}
	ctx, cancel := c.bound(ctx, d)
	defer cancel()
	for {
		f, cl, err := c.doOnce(ctx, rq)
		if err != nil && rq.t != nil && rq.t.s != nil && cl != nil && rq.t.s.notAttachedSince(err, cl.gen) {
			// Sent while the server detached the session (lagged): the
			// command was refused unread and goes again once re-attached.
			continue
		}
		return f, cl, err
	}
}

func (c *Client) doOnce(ctx context.Context, rq request) (*frame, *call, error) {
	cl := &call{typ: rq.typ, resp: make(chan result, 1), prompt: rq.prompt, onAnswer: rq.onAnswer}
	if rq.prompt {
		cl.late = make(chan error, 1)
	}
	l, err := c.register(ctx, rq, cl)
	if err != nil {
		return nil, nil, err
	}
	line, err := encodeRequest(cl.id, rq.typ, cl.session, rq.fields)
	if err == nil {
		err = c.writeOn(l, line)
		if err != nil && c.linkFailed(l) && rq.on == nil {
			// Not sent: it goes on the next connection.
			c.forget(cl)
			return c.doOnce(ctx, rq)
		}
	}
	if err != nil {
		c.forget(cl)
		return nil, nil, fmt.Errorf("xcsh %s: %w", rq.typ, err)
	}

	select {
	case r := <-cl.resp:
		if r.err != nil {
			return nil, cl, r.err
		}
		if r.f.Success == nil || !*r.f.Success {
			return nil, cl, commandError(rq.typ, r.f)
		}
		return r.f, cl, nil
	case <-ctx.Done():
		c.forget(cl)
		return nil, nil, fmt.Errorf("xcsh %s: no response: %w", rq.typ, context.Cause(ctx))
	}
}

// register waits until rq can be sent (a connection, its session
// attached on it) and enters cl in the pending table; it returns the
// connection to write on.
func (c *Client) register(ctx context.Context, rq request, cl *call) (*link, error) {
	return c.sendable(ctx, rq, func() {
		c.seq++
		cl.id, cl.seq = fmt.Sprintf("c%d", c.seq), c.seq
		if t := rq.t; t != nil {
			if t.s != nil {
				cl.session, cl.gen = t.s.id, t.s.gen
			} else if !serverCommands[rq.typ] {
				c.ownUsed = true
			}
		}
		c.pending[cl.id] = cl
	})
}

// sendable waits, while ctx lasts, until rq can be sent, and returns the
// connection to write on; enter, if set, runs under c.mu at that moment.
func (c *Client) sendable(ctx context.Context, rq request, enter func()) (*link, error) {
	for {
		c.mu.Lock()
		// Answers to the agent still go out while Close lets it finish.
		if c.ended || (c.closed && !rq.reply) {
			err := c.closedErr(rq.typ)
			c.mu.Unlock()
			return nil, err
		}
		l, err := c.sendableLocked(rq)
		if err != nil {
			c.mu.Unlock()
			return nil, fmt.Errorf("xcsh %s: %w", rq.typ, err)
		}
		if l != nil {
			if enter != nil {
				enter()
			}
			c.mu.Unlock()
			return l, nil
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("xcsh %s: not sent: %w (%s)", rq.typ, context.Cause(ctx), c.waitingFor())
		}
	}
}

// serverCommands are the server's own commands (docs/server.md): they do
// not open the connection's own session.
var serverCommands = map[string]bool{
	"get_sessions": true, "open_session": true, "attach": true, "detach": true, "close_session": true, "drain": true,
}

// linkFailed takes a failed write on l and reports whether the frame may
// go on the next connection: the client reconnects. l, if still the
// connection, is marked dead (nothing more is sent on it) and dropped, so
// that its reader ends and the supervisor connects again.
func (c *Client) linkFailed(l *link) bool {
	c.mu.Lock()
	again := c.dial != nil && !c.closed
	current := c.link == l
	if again && current {
		l.dead = true
	}
	c.mu.Unlock()
	if again && current && l.hard != nil {
		l.hard()
	}
	return again
}

// sendableLocked is the connection rq may be sent on now (nil: not yet),
// or why it never will be. (c.mu)
func (c *Client) sendableLocked(rq request) (*link, error) {
	if rq.on != nil {
		if c.link != rq.on || rq.on.dead {
			return nil, ErrDisconnected
		}
		return rq.on, nil
	}
	if c.link == nil || c.link.dead {
		if rq.t != nil && rq.t.s != nil && rq.t.s.ended {
			return nil, rq.t.s.err
		}
		return nil, nil
	}
	switch {
	case rq.t == nil:
	case rq.t.s != nil:
		s := rq.t.s
		if s.ended {
			return nil, s.err
		}
		if s.on == nil || s.on != c.link {
			return nil, nil
		}
	case c.ownLost:
		return nil, ErrOwnSessionLost
	}
	return c.link, nil
}

// waitingFor says what an unsent request waited for.
func (c *Client) waitingFor() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.link == nil {
		return "reconnecting to " + c.addr
	}
	return "the session is being attached again"
}

// closedErr is the error of a request made after the end; c.mu is held.
func (c *Client) closedErr(typ string) error {
	if c.endErr != nil {
		return fmt.Errorf("xcsh %s: %w", typ, c.endErr)
	}
	return fmt.Errorf("xcsh %s: %w", typ, ErrClosed)
}

// broadcastLocked wakes every request waiting to be sent. (c.mu)
func (c *Client) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
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

// encodeRequest builds one request line: the fields, then sessionId (when
// not empty), type and id.
func encodeRequest(id, typ, sessionID string, fields any) ([]byte, error) {
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
	if sessionID != "" {
		s, err := marshal(sessionID)
		if err != nil {
			return nil, err
		}
		buf.WriteString(`"sessionId":`)
		buf.Write(s)
		buf.WriteByte(',')
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

// writeOn writes one frame on l, in one Write.
func (c *Client) writeOn(l *link, line []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err := l.w.Write(line)
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

// readLoop is the only reader of a connection. It decodes each frame and
// routes it; it never waits for a caller or a subscriber.
func (c *Client) readLoop(l *link) {
	br := bufio.NewReaderSize(l.r, 64<<10)
	var err error
	for {
		// ReadBytes, not a Scanner: a frame may be far larger than 64 KiB.
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			c.route(l, line)
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = ErrClosed
	}
	c.linkEnded(l, err)
	close(l.readDone)
}

func (c *Client) route(l *link, line []byte) {
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
	if f.Type == "response" && c.resolve(l, &f) {
		return
	}
	if f.SessionID != "" {
		c.mu.Lock()
		s := c.sessions[f.SessionID]
		c.mu.Unlock()
		if s != nil {
			s.route(l, &f, line)
			return
		}
	}
	// Published before acting on it, so whoever the frame unblocks (Start
	// waiting for ready, a settled prompt) and then subscribes does not
	// see it as a new event.
	c.publish(Event{Type: f.Type, SessionID: f.SessionID, Seq: f.Seq, Raw: json.RawMessage(line)})
	if f.SessionID != "" {
		return // of a session this client no longer has
	}
	switch f.Type {
	case "ready":
		c.mu.Lock()
		_ = json.Unmarshal(line, &struct {
			Version *string `json:"version"`
		}{&c.version})
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
		c.mu.Unlock()
	case "agent_start", "agent_end":
		c.mu.Lock()
		c.settleLocked("")
		c.mu.Unlock()
	default:
		c.target.hostRequest(f.Type, line)
	}
}

// resolve matches a response to its request and reports whether it did.
//
// A frame with a string id goes to that request; for an acknowledged
// prompt it is the late failure. The id-less frames cannot name their
// request, so they are matched by rule, which keeps a caller from waiting
// out its timeout: "Unknown command: <type>" goes to the oldest request of
// that type (and session) still waiting for its first response; a "parse"
// frame to the oldest request waiting for its first response, preferring
// one that is not of a command answered out of order (abort,
// abort_and_prompt, bash), since the agent answers those when their work
// ends.
func (c *Client) resolve(l *link, f *frame) bool {
	c.mu.Lock()
	cl, consumed := c.matchLocked(f)
	c.mu.Unlock()
	if cl == nil {
		return consumed
	}
	if cl.onAnswer != nil && f.Success != nil && *f.Success {
		cl.onAnswer(l, f)
	}
	cl.resp <- result{f: f}
	return true
}

// matchLocked finds (and retires, or marks acknowledged) the request f
// answers; nil when none. A prompt's late failure is delivered here
// (consumed). (c.mu)
func (c *Client) matchLocked(f *frame) (cl *call, consumed bool) {
	if id, ok := stringOf(f.ID); ok {
		cl := c.pending[id]
		if cl == nil {
			return nil, false
		}
		if cl.acked {
			delete(c.pending, id)
			if f.Success == nil || !*f.Success {
				cl.late <- commandError(cl.typ, f)
			}
			close(cl.late)
			return nil, true
		}
		if cl.prompt && f.Success != nil && *f.Success {
			cl.acked = true
		} else {
			delete(c.pending, id)
			if cl.late != nil {
				close(cl.late)
			}
		}
		return cl, false
	}
	if len(f.ID) > 0 || (f.Success != nil && *f.Success) {
		return nil, false
	}
	cmd, ok := stringOf(f.Command)
	if !ok {
		return nil, false
	}
	var best *call
	switch {
	case cmd == "parse":
		var bestWaiting *call
		for _, cl := range c.pending {
			if cl.acked || cl.session != f.SessionID {
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
			if !cl.acked && cl.typ == cmd && cl.session == f.SessionID && (best == nil || cl.seq < best.seq) {
				best = cl
			}
		}
	}
	if best == nil {
		return nil, false
	}
	delete(c.pending, best.id)
	if best.late != nil {
		close(best.late)
	}
	return best, false
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

// settleLocked closes the late channel of every acknowledged prompt of a
// session ("" the own one): once a run starts or ends after the
// acknowledgement, the prompt has started or been queued, and a failure
// to start can no longer come (the agent writes it right after the
// acknowledgement). (c.mu)
func (c *Client) settleLocked(session string) {
	for id, cl := range c.pending {
		if cl.acked && cl.session == session {
			delete(c.pending, id)
			close(cl.late)
		}
	}
}

// linkEnded runs on l's reader when l has ended: a client that can
// reconnect fails the requests l carried and has the supervisor connect
// again; any other ends.
func (c *Client) linkEnded(l *link, cause error) {
	c.mu.Lock()
	if c.dial == nil || c.closed || c.ended || c.link != l {
		c.mu.Unlock()
		c.end(cause)
		return
	}
	c.link = nil
	l.dead = true
	pending := c.pending
	c.pending = map[string]*call{}
	if c.ownUsed {
		c.ownLost = true
	}
	own := c.target.cancelsLocked()
	for _, s := range c.sessions {
		s.on = nil
	}
	c.broadcastLocked()
	c.mu.Unlock()
	// Closed for good: a write blocked on it returns, and its socket is
	// released.
	if l.hard != nil {
		l.hard()
	}
	failCalls(pending, fmt.Errorf("%w: %v", ErrDisconnected, cause))
	for _, cancel := range own {
		cancel(ErrDisconnected)
	}
	c.poke()
}

// failCalls fails requests that will get no answer.
func failCalls(calls map[string]*call, cause error) {
	for _, cl := range calls {
		if cl.acked {
			close(cl.late)
			continue
		}
		if cl.late != nil {
			close(cl.late)
		}
		cl.resp <- result{err: fmt.Errorf("xcsh %s: %w", cl.typ, cause)}
	}
}

// end runs once the client is over (EOF, a read error, reconnection given
// up, or Close): pending requests fail, prompts settle, sessions end,
// handlers are cancelled and subscriptions drain and close.
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
	sessions := make([]*Session, 0, len(c.sessions))
	for _, s := range c.sessions {
		sessions = append(sessions, s)
	}
	c.broadcastLocked()
	c.mu.Unlock()
	failCalls(pending, cause)
	for _, s := range sessions {
		s.end(cause)
	}
	c.cancelRoot()
	for _, s := range subs {
		s.finish()
	}
	close(c.done)
}
