package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/lineio"
)

// ext is one running extension: its process and the JSON-RPC connection
// on its standard streams (jsonrpc.Conn: our requests waiting for their
// answers, its requests being handled).
//
// Goroutines: a reader (stdout, through the connection: answers retire
// our requests at once, on the reader, as rpc's pending table does;
// requests and notifications are handled there or on a handler
// goroutine), a writer (stdin: the outgoing queue), a stderr copier, and
// one goroutine per asynchronous request handler (bounded by maxAsync).
// The host's wait group counts them all.
type ext struct {
	h    *Host
	spec Spec
	proc process

	// Set by the handshake, read-only afterwards.
	name     string
	subs     uint64 // events and hooks it subscribed to (bit per name)
	tools    []toolDef
	commands []commandDef

	out  outQueue
	conn *jsonrpc.Conn

	// async bounds the asynchronous handlers running at once (a flood of
	// dialogs or execs is answered CodeTooMany, never queued).
	async chan struct{}

	// noise counts its stdout lines that were not JSON-RPC (only the
	// reader touches it).
	noise int

	mu sync.Mutex
	// updates route tool/update notifications to the running call's
	// update function, by tool call id; guarded by mu.
	updates map[string]func(engine.ToolResult)

	dead    chan struct{} // closed once it has failed or been stopped
	deadErr error         // why; written before dead is closed
	once    sync.Once
	// stopping: the host is shutting it down; its exit is no fault.
	stopping bool // guarded by mu
	// ctx ends when it is dead: the context of what it asked for on its own
	// (a dialog not tied to one of our requests).
	ctx    context.Context
	cancel context.CancelFunc
}

// maxAsync bounds an extension's requests handled at once.
const maxAsync = 32

// call is what one of our requests belongs to, kept beside it in the
// connection's table (jsonrpc.Conn.CallWith) for the extension's calls
// made "during" it.
type call struct {
	ctx context.Context // the work the request belongs to: calls it makes "during" it derive from it
	// paused counts dialogs opened during the call: the deadline does not
	// run while the user is being asked; guarded by ext.mu.
	paused int
	kick   chan struct{} // cap 1: paused changed
}

// errGone is what a request to a dead extension fails with.
var errGone = errors.New("the extension is not running")

// errDeadline is the failure of a hook that did not answer in time.
type errDeadline struct{ d time.Duration }

func (e errDeadline) Error() string { return "no answer within " + e.d.String() }

func newExt(h *Host, spec Spec) *ext {
	e := &ext{
		h: h, spec: spec, async: make(chan struct{}, maxAsync),
		updates: map[string]func(engine.ToolResult){}, dead: make(chan struct{}),
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.out.init(h.opts.QueueBytes)
	e.conn = jsonrpc.New(queueWriter{e}, jsonrpc.Options{
		Preempt: e.serve,
		BadLine: e.badLine,
	})
	return e
}

// queueWriter sends the connection's lines through the extension's
// queue: each line is a new buffer, which the queue keeps until written.
type queueWriter struct{ e *ext }

func (w queueWriter) Buf() *[]byte    { b := make([]byte, 0, 256); return &b }
func (w queueWriter) Send(bp *[]byte) { w.e.send(*bp) }

// send queues a line for the extension. A full queue means it has stopped
// reading: it is failed (off this goroutine, which may be the executor's).
func (e *ext) send(line []byte) bool {
	switch e.out.push(line) {
	case pushOK:
		return true
	case pushFull:
		e.h.goFail(e, "input", errors.New("it stopped reading its input (over "+strconv.Itoa(e.out.max>>20)+" MiB queued)"))
	}
	return false
}

// request sends method with params and waits for the answer, ctx, the
// extension's death or the deadline (0: none; paused while a dialog the
// call opened is waiting for the user). A cancelled or timed-out request
// is withdrawn with $/cancelRequest.
func (e *ext) request(ctx context.Context, method string, params []byte, deadline time.Duration) (json.RawMessage, error) {
	c := &call{ctx: ctx, kick: make(chan struct{}, 1)}
	cl, err := e.conn.CallWith(method, json.RawMessage(params), c)
	if err != nil {
		return nil, err
	}
	var timeout <-chan struct{}
	stop := func() {}
	arm := func() {
		stop()
		timeout, stop = nil, func() {}
		e.mu.Lock()
		paused := c.paused > 0
		e.mu.Unlock()
		if deadline > 0 && !paused {
			timeout, stop = e.h.opts.Clock.After(deadline)
		}
	}
	arm()
	defer func() { stop() }()
	withdraw := func() {
		cl.Withdraw()
		e.conn.Notify("$/cancelRequest", json.RawMessage(`{"id":`+strconv.FormatInt(cl.ID(), 10)+`}`))
	}
	for {
		select {
		case <-cl.Done():
			return cl.Result()
		case <-c.kick:
			arm()
		case <-timeout:
			withdraw()
			return nil, errDeadline{deadline}
		case <-ctx.Done():
			withdraw()
			return nil, context.Cause(ctx)
		}
	}
}

// during finds our request the extension names in a call's "during"
// field, for the call to belong to it (nil: none, or already answered).
func (e *ext) during(id int64) *call {
	if cl := e.conn.Pending(id); cl != nil {
		return cl.Value().(*call)
	}
	return nil
}

// pause stops c's deadline while a dialog it opened waits; the returned
// function starts it again, in full.
func (e *ext) pause(c *call) func() {
	if c == nil {
		return func() {}
	}
	kick := func() {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	e.mu.Lock()
	c.paused++
	e.mu.Unlock()
	kick()
	return func() {
		e.mu.Lock()
		c.paused--
		e.mu.Unlock()
		kick()
	}
}

func (e *ext) goneErr() error {
	<-e.dead
	if e.deadErr != nil {
		return fmt.Errorf("%w: %v", errGone, e.deadErr)
	}
	return errGone
}

// claim reports whether this is the first end of the extension (each ends
// once); the caller then calls die.
func (e *ext) claim() bool {
	did := false
	e.once.Do(func() { did = true })
	return did
}

// die marks the extension dead with err, fails what waits on it and ends
// its process group. Call it once, after claim.
func (e *ext) die(err error) {
	e.deadErr = err
	close(e.dead)
	e.conn.Close(e.goneErr())
	e.cancel()
	e.out.close()
	e.proc.kill()
}

// kill ends the extension with err if nothing has yet; it reports whether
// this call did it.
func (e *ext) kill(err error) bool {
	if !e.claim() {
		return false
	}
	e.die(err)
	return true
}

// readLoop reads the extension's stdout until EOF, through the
// connection. Our requests still waiting stay so until the extension is
// known to be dead (die): the exit's report names them.
func (e *ext) readLoop(stdout io.Reader) {
	_ = e.conn.Read(lineio.NewReader(stdout, e.h.opts.MaxLine))
}

// badLine logs a line that was dropped: over the cap, or not JSON-RPC
// (noise: the first few are logged, never passed on). On the reader.
func (e *ext) badLine(line []byte, err error) {
	if errors.Is(err, lineio.ErrLineTooLong) {
		e.h.logf("extension %s: a line over %d bytes was dropped", e.spec.Path, e.h.opts.MaxLine)
		return
	}
	if e.noise++; e.noise <= maxNoiseLogged {
		e.h.logf("extension %s: not a JSON-RPC line on stdout (dropped): %.200s", e.spec.Path, line)
	} else if e.noise == maxNoiseLogged+1 {
		e.h.logf("extension %s: more stdout noise; no longer logged", e.spec.Path)
	}
}

// maxNoiseLogged bounds the noise lines logged per extension.
const maxNoiseLogged = 5

// serve takes every request and notification of the extension on its
// reader, in the order it sent them (calls.go): the quick calls are
// answered there, the waiting ones on goroutines of their own.
func (e *ext) serve(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.IsCall() {
		return e.h.handleRequest(ctx, e, req)
	}
	e.h.handleNotification(e, req)
	return nil, nil
}

// outQueue is an extension's outgoing lines: pushed by anyone (the
// executor's tap among them) without blocking, written by the writer
// goroutine. It is bounded in bytes; over the bound the extension is taken
// to have stopped reading.
type outQueue struct {
	mu     sync.Mutex
	lines  [][]byte
	bytes  int
	max    int
	closed bool
	wake   chan struct{} // cap 1
}

type pushResult int

const (
	pushOK pushResult = iota
	pushFull
	pushClosed
)

func (q *outQueue) init(max int) {
	q.max = max
	q.wake = make(chan struct{}, 1)
}

func (q *outQueue) push(line []byte) pushResult {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return pushClosed
	}
	if q.bytes+len(line) > q.max {
		q.mu.Unlock()
		return pushFull
	}
	q.lines = append(q.lines, line)
	q.bytes += len(line)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return pushOK
}

// take returns the queued lines (nil and false once closed and empty).
func (q *outQueue) take() ([][]byte, bool) {
	for {
		q.mu.Lock()
		if len(q.lines) > 0 {
			lines := q.lines
			q.lines, q.bytes = nil, 0
			q.mu.Unlock()
			return lines, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued lines to the extension's stdin until the queue
// is closed, then closes stdin (the extension reads EOF: time to exit). A
// write error means it has gone; the reader sees that too.
func (e *ext) writeLoop(stdin io.WriteCloser) {
	defer stdin.Close()
	for {
		lines, ok := e.out.take()
		if !ok {
			return
		}
		for _, l := range lines {
			if _, err := stdin.Write(l); err != nil {
				e.out.close()
				// Keep draining so pushers never wait on us.
				for {
					if _, ok := e.out.take(); !ok {
						return
					}
				}
			}
		}
	}
}
