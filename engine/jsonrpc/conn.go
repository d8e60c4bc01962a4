package jsonrpc

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/xcsh-go/xcsh/engine/lineio"
)

// Conn is one JSON-RPC 2.0 connection over lines, calls both ways, after
// the shape of x/tools' internal/jsonrpc2_v2: our calls wait in one table
// and are retired by the reader when their answer comes; the peer's
// messages go to a Preempt handler on the reader, in the wire's order,
// and what it does not take is queued for Handle, which runs on a
// goroutine of the connection's, one message at a time. A handler returns
// its answer (result, error), or ErrAsync and answers later with Respond.
//
// The reader is the caller's goroutine in Read. It never waits for a
// queued handler, so answers to our calls are read while one runs; what
// Preempt waits for, the reader waits for. The fronts keep their own
// order downstream (a session's executor), so ACP and the extension host
// take everything on the reader (a cancellation must never overtake the
// request it cancels) and wait there only for what keeps the wire's
// order; extkit queues its events for its handlers.
//
// Lines go out through a LineWriter, one Send per line, whole: the ACP
// front's is its stdout writer (lineio.Writer: backpressure and the
// backlog probe), an extension's is its bounded, non-blocking input queue.
type Conn struct {
	out  LineWriter
	opts Options

	mu     sync.Mutex
	closed error           // guarded by mu: set by Close; new calls fail with it
	nextID int64           // guarded by mu
	calls  map[int64]*Call // guarded by mu: our calls waiting for their answer
	// incoming are the peer's calls being handled, by id as sent (a
	// reused id: the latest), for Cancel; guarded by mu.
	incoming map[string]*Request
	queue    []*Request // guarded by mu: waiting for Handle
	handling bool       // guarded by mu: the Handle goroutine runs
	wg       sync.WaitGroup
}

// LineWriter sends whole lines. Buf gives an empty buffer to encode one
// line into; Send sends it, ending in '\n', and owns it from then on.
// lineio.Writer is one.
type LineWriter interface {
	Buf() *[]byte
	Send(bp *[]byte)
}

// Handler handles a request or a notification: it returns the call's
// answer (a nil result is null; an *Error is answered as it is, any other
// error CodeFailed with its text), ErrAsync to answer later with Respond,
// or, as Preempt, ErrNotHandled to queue it for Handle. A notification's
// result is ignored. ctx ends when the call is answered, or cancelled
// (Cancel: the peer's cancellation notification).
type Handler func(ctx context.Context, req *Request) (result any, err error)

// Options configure a Conn; all are optional.
type Options struct {
	// Decode reads one line into a *Request or a *Response (nil: Decode,
	// the extension protocol's rules). A front with its own rules for a
	// line (ACP answers -32700 or -32600) brings its own.
	Decode func(line []byte) (Message, error)
	// Preempt sees every request and notification first, on the reader,
	// in the wire's order.
	Preempt Handler
	// Handle gets what Preempt left (ErrNotHandled), in order, one at a
	// time, on the connection's goroutine. Unset, a call nobody took is
	// answered CodeMethodNotFound.
	Handle Handler
	// BadLine hears of a line that was not read: one over the reader's cap
	// (line nil, lineio.ErrLineTooLong) or one Decode refused (its error).
	BadLine func(line []byte, err error)
	// OnError hears of the connection's own faults: a value that cannot be
	// encoded (sent as null), a call answered twice.
	OnError func(error)
}

// New returns a connection that sends through out.
func New(out LineWriter, opts Options) *Conn {
	if opts.Decode == nil {
		opts.Decode = Decode
	}
	return &Conn{out: out, opts: opts}
}

// Read reads messages from r until its end (nil) or a read error (the
// error), on the caller's goroutine: answers retire our calls, requests
// and notifications go to Preempt, then to the queue. Our calls still
// waiting are the caller's to fail (Close) when it knows nothing more will
// answer them.
func (c *Conn) Read(r *lineio.Reader) error {
	for {
		line, err := r.Next()
		switch {
		case err == io.EOF:
			return nil
		case err == lineio.ErrLineTooLong:
			c.bad(nil, err)
			continue
		case err != nil:
			return err
		}
		m, err := c.opts.Decode(line)
		if err != nil {
			c.bad(line, err)
			continue
		}
		switch m := m.(type) {
		case *Response:
			c.retire(m)
		case *Request:
			c.accept(m)
		}
	}
}

func (c *Conn) bad(line []byte, err error) {
	if c.opts.BadLine != nil {
		c.opts.BadLine(line, err)
	}
}

func (c *Conn) fault(err error) {
	if c.opts.OnError != nil {
		c.opts.OnError(err)
	}
}

// retire hands an answer to the call waiting for it; an answer to no call
// of ours (late, withdrawn, or never made) is dropped.
func (c *Conn) retire(resp *Response) {
	id, err := strconv.ParseInt(string(resp.ID), 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	cl := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if cl == nil {
		return
	}
	cl.result = resp.Result
	if resp.Error != nil {
		cl.err = resp.Error
	}
	close(cl.done)
}

// accept registers a call (for Cancel) and hands the message to Preempt,
// then to the queue.
func (c *Conn) accept(req *Request) {
	ctx := context.Background()
	if req.IsCall() {
		req.ctx, req.cancel = context.WithCancel(ctx)
		ctx = req.ctx
		c.mu.Lock()
		if c.incoming == nil {
			c.incoming = map[string]*Request{}
		}
		c.incoming[string(req.ID)] = req
		c.mu.Unlock()
	}
	if c.opts.Preempt != nil {
		res, err := c.opts.Preempt(ctx, req)
		if !errors.Is(err, ErrNotHandled) {
			c.finish(req, res, err)
			return
		}
	}
	if c.opts.Handle == nil {
		c.finish(req, nil, ErrNotHandled)
		return
	}
	c.mu.Lock()
	c.queue = append(c.queue, req)
	if !c.handling {
		// Started when there is work and ended when the queue is empty,
		// as jsonrpc2_v2's handleAsync; Wait waits for it.
		c.handling = true
		c.wg.Add(1)
		go c.handleQueue()
	}
	c.mu.Unlock()
}

func (c *Conn) handleQueue() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.handling = false
			c.mu.Unlock()
			return
		}
		req := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		ctx := req.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		res, err := c.opts.Handle(ctx, req)
		c.finish(req, res, err)
	}
}

// finish answers what a handler returned.
func (c *Conn) finish(req *Request, result any, err error) {
	switch {
	case errors.Is(err, ErrAsync):
		if !req.IsCall() {
			c.fault(fmt.Errorf("jsonrpc: %s: a notification is not answered, later or not", req.Method))
		}
		return
	case !req.IsCall():
		if err != nil && !errors.Is(err, ErrNotHandled) {
			c.fault(fmt.Errorf("jsonrpc: notification %s: %w", req.Method, err))
		}
		return
	case errors.Is(err, ErrNotHandled):
		err = &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
	}
	c.Respond(req, result, err)
}

// Wait waits until the messages queued for Handle have been handled. Call
// it once Read has returned.
func (c *Conn) Wait() { c.wg.Wait() }

// Respond answers the peer's call req: result (nil: null) or err. Each
// call is answered once; a notification is not answered. The call leaves
// the table before its answer is written (the peer may reuse its id once
// it has the answer), and its context ends after.
func (c *Conn) Respond(req *Request, result any, err error) {
	if !req.IsCall() {
		return
	}
	c.mu.Lock()
	if req.answered {
		c.mu.Unlock()
		c.fault(fmt.Errorf("jsonrpc: %s (id %s) answered twice", req.Method, req.ID))
		return
	}
	req.answered = true
	if c.incoming[string(req.ID)] == req {
		delete(c.incoming, string(req.ID))
	}
	c.mu.Unlock()
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","id":`...)
	b = append(b, req.ID...)
	if err != nil {
		b = append(b, `,"error":`...)
		b = c.appendValue(b, errorOf(err), "error")
	} else {
		b = append(b, `,"result":`...)
		b = c.appendValue(b, result, "result")
	}
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
	if req.cancel != nil {
		req.cancel()
	}
}

// errorOf is err as the wire says it.
func errorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return &Error{Code: CodeFailed, Message: err.Error()}
}

// Fail answers a message that is no call of the connection's (a line that
// did not decode) with e, under id as given (nil: null).
func (c *Conn) Fail(id json.RawMessage, e *Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = c.appendValue(b, e, "error")
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
}

// Cancel ends the context of the peer's call with this id (as sent), if it
// is being handled: its cancellation notification. The handler decides
// what a cancelled call answers.
func (c *Conn) Cancel(id json.RawMessage) {
	c.mu.Lock()
	req := c.incoming[string(id)]
	c.mu.Unlock()
	if req != nil {
		req.cancel()
	}
}

// Notify sends a notification (params nil: none). It is sent even after
// Close: the peer may still read what it has not answered.
func (c *Conn) Notify(method string, params any) {
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	b = c.appendParams(b, params, method)
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
}

// Call sends a call and returns it, waiting in the table for its answer
// (registered before it is written: an instant answer cannot outrun the
// table). After Close it sends nothing and fails with Close's error.
func (c *Conn) Call(method string, params any) (*Call, error) {
	return c.CallWith(method, params, nil)
}

// CallWith is Call with a value kept beside the call (Value), for whoever
// finds it by id (Pending): the extension host keeps there the work a
// call belongs to, which the extension's own calls made during it join.
func (c *Conn) CallWith(method string, params, value any) (*Call, error) {
	cl := &Call{conn: c, method: method, value: value, done: make(chan struct{})}
	c.mu.Lock()
	if c.closed != nil {
		err := c.closed
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	cl.id = c.nextID
	if c.calls == nil {
		c.calls = map[int64]*Call{}
	}
	c.calls[cl.id] = cl
	c.mu.Unlock()
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, cl.id, 10)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	b = c.appendParams(b, params, method)
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
	return cl, nil
}

// Pending is our call with this id still waiting for its answer (nil:
// none).
func (c *Conn) Pending(id int64) *Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

// Calls are our calls still waiting for their answer, oldest first.
func (c *Conn) Calls() []*Call {
	c.mu.Lock()
	out := make([]*Call, 0, len(c.calls))
	for _, cl := range c.calls {
		out = append(out, cl)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b *Call) int { return cmp.Compare(a.id, b.id) })
	return out
}

// Close says nothing more will answer our calls (the peer has gone, or its
// input has ended): every call still waiting fails with err, and so does
// every call made from now on, without being sent. Answers and
// notifications are still written. Only the first Close counts.
func (c *Conn) Close(err error) {
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return
	}
	c.closed = err
	calls := c.calls
	c.calls = nil
	c.mu.Unlock()
	for _, cl := range calls {
		cl.err = err
		close(cl.done)
	}
}

// appendParams appends `,"params":` and params, unless there are none.
func (c *Conn) appendParams(dst []byte, params any, method string) []byte {
	if raw, ok := params.(json.RawMessage); params == nil || ok && len(raw) == 0 {
		return dst
	}
	dst = append(dst, `,"params":`...)
	return c.appendValue(dst, params, "params of "+method)
}

// appendValue appends v's JSON with HTML escaping off (a model's "<" stays
// "<"); a json.RawMessage is appended as it is, nil is null. A value that
// cannot be encoded is a bug: it becomes null and OnError hears of it.
func (c *Conn) appendValue(dst []byte, v any, what string) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case json.RawMessage:
		if len(v) == 0 {
			return append(dst, "null"...)
		}
		return append(dst, v...)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		c.fault(fmt.Errorf("jsonrpc: encoding %s: %w", what, err))
		return append(dst, "null"...)
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// Call is one of our calls: sent, and waiting for its answer until the
// reader retires it, its caller withdraws it, or the connection closes.
type Call struct {
	conn   *Conn
	id     int64
	method string
	value  any
	done   chan struct{}
	// Written before done is closed, by whoever took the call out of the
	// table (the reader, Withdraw, Close); read after.
	result json.RawMessage
	err    error
}

// ID is the call's id on the wire (for the peer's cancellation
// notification).
func (cl *Call) ID() int64 { return cl.id }

// Method is the call's method.
func (cl *Call) Method() string { return cl.method }

// Value is what CallWith kept beside the call.
func (cl *Call) Value() any { return cl.value }

// Done is closed once the call has ended: answered, withdrawn or failed.
func (cl *Call) Done() <-chan struct{} { return cl.done }

// Result is the call's answer once Done: the raw result, or the error (an
// *Error from the peer, ErrWithdrawn, or Close's error).
func (cl *Call) Result() (json.RawMessage, error) {
	<-cl.done
	return cl.result, cl.err
}

// Await waits for the answer and decodes it into result (nil, or an answer
// of null: nothing is decoded). When ctx ends first the call is withdrawn
// and context.Cause(ctx) returned; telling the peer is the caller's
// business (the notification's name differs between protocols).
func (cl *Call) Await(ctx context.Context, result any) error {
	select {
	case <-cl.done:
	case <-ctx.Done():
		cl.Withdraw()
		return context.Cause(ctx)
	}
	if cl.err != nil {
		return cl.err
	}
	if result != nil && len(cl.result) > 0 && !bytes.Equal(cl.result, []byte("null")) {
		return json.Unmarshal(cl.result, result)
	}
	return nil
}

// Withdraw forgets the call: it ends with ErrWithdrawn, unless it has
// already ended, and a late answer is dropped.
func (cl *Call) Withdraw() {
	c := cl.conn
	c.mu.Lock()
	mine := c.calls[cl.id] == cl
	if mine {
		delete(c.calls, cl.id)
	}
	c.mu.Unlock()
	if mine {
		cl.err = ErrWithdrawn
		close(cl.done)
	}
}
