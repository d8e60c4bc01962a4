package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/lineio"
)

// JSON-RPC 2.0 framing: one message per line, written whole by one Write.
// The connection is ours rather than the SDK's (docs/acp.md says why): the
// SDK's reader caps a line at 10 MiB and ends the connection past it, skips
// a malformed line without the -32700 the protocol asks for, and cancels a
// running prompt when another comes for the same session.

// envelope is an incoming message as read: requests, notifications and
// responses to our requests share it. id and params stay raw; id is echoed
// exactly as sent.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

// wireError is a JSON-RPC error object.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *wireError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// hasID reports whether a message carries an id (a request or a response):
// absent is a notification; JSON null is an id (of an unparsable request).
func (e *envelope) hasID() bool { return len(e.ID) > 0 }

// appendValue appends v's JSON with HTML escaping off (a model's "<"
// stays "<"). A value that cannot be encoded is a bug: it becomes null
// and the error is returned for the log.
func appendValue(dst []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return append(dst, raw...), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(dst, "null"...), err
	}
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...), nil
}

// notify writes a notification.
func (c *conn) notify(method string, params any) {
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","method":`...)
	b = engine.AppendJSONString(b, method)
	b = append(b, `,"params":`...)
	b, err := appendValue(b, params)
	c.logErr(method, err)
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
}

// respond writes a request's result.
func (c *conn) respond(id json.RawMessage, result any) {
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b, err := appendValue(b, result)
	c.logErr("result", err)
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
}

// fail writes a request's error; a nil id (a message too broken to have
// one) is written as null.
func (c *conn) fail(id json.RawMessage, e *wireError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b, err := appendValue(b, e)
	c.logErr("error", err)
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
}

func (c *conn) logErr(what string, err error) {
	if err != nil {
		fmt.Fprintf(c.log, "xcsh: acp: encoding %s: %v\n", what, err)
	}
}

// conn is the connection: the writer, and the table of our requests to
// the client waiting for their responses. Responses are delivered on the
// reader goroutine, as rpc's pending table does, so a tool waiting for
// the editor is never stuck behind its session's executor.
type conn struct {
	out *lineio.Writer
	log io.Writer

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan *envelope // guarded by mu
	gone    bool                     // guarded by mu: stdin closed, nothing more will arrive
}

// errClientGone fails a request to the client once its input has closed.
var errClientGone = errors.New("the client has gone")

// call sends a request to the client and waits for its response, the
// client's departure or ctx. When ctx ends first the request is
// forgotten (a late response is ignored); telling the client is the
// caller's business (a withdrawn question: $/cancel_request, sent in the
// session's order). The result is decoded into result (nil: ignored); a
// JSON-RPC error comes back as *wireError.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	id, ch, err := c.start(method, params)
	if err != nil {
		return err
	}
	return c.await(ctx, id, ch, result)
}

// start sends a request and returns its id and the channel its response
// comes on (registered before the write: an instant answer cannot outrun
// the table).
func (c *conn) start(method string, params any) (int64, chan *envelope, error) {
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return 0, nil, errClientGone
	}
	c.nextID++
	id := c.nextID
	ch := make(chan *envelope, 1)
	if c.waiting == nil {
		c.waiting = map[int64]chan *envelope{}
	}
	c.waiting[id] = ch
	c.mu.Unlock()

	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = engine.AppendJSONString(b, method)
	b = append(b, `,"params":`...)
	b, err := appendValue(b, params)
	c.logErr(method, err)
	*bp = append(b, '}', '\n')
	c.out.Send(bp)
	return id, ch, nil
}

// await waits for the response to request id (see call).
func (c *conn) await(ctx context.Context, id int64, ch chan *envelope, result any) error {
	select {
	case env, ok := <-ch:
		if !ok {
			return errClientGone
		}
		if env.Error != nil {
			return env.Error
		}
		if result != nil && len(env.Result) > 0 && !bytes.Equal(env.Result, []byte("null")) {
			if err := json.Unmarshal(env.Result, result); err != nil {
				return fmt.Errorf("the client's answer: %w", err)
			}
		}
		return nil
	case <-ctx.Done():
		c.withdraw(id)
		return context.Cause(ctx)
	}
}

// withdraw forgets request id.
func (c *conn) withdraw(id int64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// cancelRequest tells the client that request id is no longer wanted.
func (c *conn) cancelRequest(id int64) {
	c.notify("$/cancel_request", struct {
		RequestID int64 `json:"requestId"`
	}{id})
}

// resolve delivers a response to its request, on the reader goroutine; a
// response to nothing we wait for (late, or withdrawn) is ignored.
func (c *conn) resolve(env *envelope) {
	id, err := strconv.ParseInt(string(env.ID), 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- env
	}
}

// closeInput fails every request still waiting: the client has gone.
func (c *conn) closeInput() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = true
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
}
