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

// ext is one running extension: its process, the line protocol on its
// standard streams, the requests we sent it and wait on, and the requests
// it sent us that are being handled.
//
// Goroutines: a reader (stdout: responses resolve our calls at once, on
// the reader, as rpc's pending table does; requests and notifications are
// handled there or on a handler goroutine), a writer (stdin: the outgoing
// queue), a stderr copier, and one goroutine per asynchronous request
// handler (bounded by maxAsync). The host's wait group counts them all.
type ext struct {
	h    *Host
	spec Spec
	proc process

	// Set by the handshake, read-only afterwards.
	name     string
	subs     uint64 // events and hooks it subscribed to (bit per name)
	tools    []toolDef
	commands []commandDef

	out outQueue

	// async bounds the asynchronous handlers running at once (a flood of
	// dialogs or execs is answered CodeTooMany, never queued).
	async chan struct{}

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*call // our requests waiting for an answer; guarded by mu
	// handling are its requests being handled asynchronously, by the id
	// it gave (raw JSON text), for $/cancelRequest; guarded by mu.
	handling map[string]context.CancelFunc
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

// call is one of our requests waiting for the extension's answer.
type call struct {
	id     int64
	method string
	ctx    context.Context // the work the request belongs to: calls it makes "during" it derive from it
	reply  chan *jsonrpc.Message
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
		pending: map[int64]*call{}, handling: map[string]context.CancelFunc{},
		updates: map[string]func(engine.ToolResult){}, dead: make(chan struct{}),
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.out.init(h.opts.QueueBytes)
	return e
}

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
	c := &call{method: method, ctx: ctx, reply: make(chan *jsonrpc.Message, 1), kick: make(chan struct{}, 1)}
	e.mu.Lock()
	if e.isDead() {
		e.mu.Unlock()
		return nil, e.goneErr()
	}
	e.nextID++
	c.id = e.nextID
	e.pending[c.id] = c
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.pending, c.id)
		e.mu.Unlock()
	}()
	if !e.send(jsonrpc.AppendRequest(nil, c.id, method, params)) {
		return nil, e.goneErr()
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
		e.send(jsonrpc.AppendNotification(nil, "$/cancelRequest", []byte(`{"id":`+strconv.FormatInt(c.id, 10)+`}`)))
	}
	for {
		select {
		case m := <-c.reply:
			if m.Error != nil {
				return nil, m.Error
			}
			return m.Result, nil
		case <-c.kick:
			arm()
		case <-timeout:
			withdraw()
			return nil, errDeadline{deadline}
		case <-ctx.Done():
			withdraw()
			return nil, context.Cause(ctx)
		case <-e.dead:
			return nil, e.goneErr()
		}
	}
}

// during finds our request the extension names in a call's "during"
// field, for the call to belong to it (nil: none, or already answered).
func (e *ext) during(id int64) *call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pending[id]
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

func (e *ext) isDead() bool {
	select {
	case <-e.dead:
		return true
	default:
		return false
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

// readLoop reads the extension's stdout until EOF. Lines that are not
// JSON-RPC are noise: logged (the first few) and dropped, never passed on.
func (e *ext) readLoop(stdout io.Reader) {
	r := lineio.NewReader(stdout, e.h.opts.MaxLine)
	noise := 0
	for {
		line, err := r.Next()
		if err == lineio.ErrLineTooLong {
			e.h.logf("extension %s: a line over %d bytes was dropped", e.spec.Path, e.h.opts.MaxLine)
			continue
		}
		if err != nil {
			return
		}
		m, derr := jsonrpc.Decode(line)
		if derr != nil {
			if noise++; noise <= maxNoiseLogged {
				e.h.logf("extension %s: not a JSON-RPC line on stdout (dropped): %.200s", e.spec.Path, line)
			} else if noise == maxNoiseLogged+1 {
				e.h.logf("extension %s: more stdout noise; no longer logged", e.spec.Path)
			}
			continue
		}
		switch {
		case m.IsResponse():
			e.resolve(m)
		case m.IsRequest():
			e.h.handleRequest(e, m)
		default:
			e.h.handleNotification(e, m)
		}
	}
}

// maxNoiseLogged bounds the noise lines logged per extension.
const maxNoiseLogged = 5

// resolve hands a response to the request waiting for it; unknown ids
// (late answers to withdrawn requests) are dropped.
func (e *ext) resolve(m *jsonrpc.Message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		return
	}
	e.mu.Lock()
	c := e.pending[id]
	e.mu.Unlock()
	if c != nil {
		select {
		case c.reply <- m:
		default:
		}
	}
}

// reply writes a response to one of the extension's requests.
func (e *ext) reply(id json.RawMessage, result []byte, err error) {
	if err == nil {
		e.send(jsonrpc.AppendResult(nil, id, result))
		return
	}
	code := jsonrpc.CodeFailed
	var ce *callError
	if errors.As(err, &ce) {
		code = ce.code
	}
	e.send(jsonrpc.AppendError(nil, id, code, err.Error()))
}

// callError is a failure of an extension's call with its code.
type callError struct {
	code int
	msg  string
}

func (c *callError) Error() string { return c.msg }

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
