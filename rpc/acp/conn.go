package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/lineio"
)

// JSON-RPC 2.0 framing: one message per line, written whole by one Write.
// The connection is ours rather than the SDK's (docs/acp.md says why): the
// SDK's reader caps a line at 10 MiB and ends the connection past it, skips
// a malformed line without the -32700 the protocol asks for, and cancels a
// running prompt when another comes for the same session. It is the one
// JSON-RPC connection of the project (engine/jsonrpc, which the extension
// host speaks too); what is ACP's stays here: how a line is read (decode),
// the answers to a bad one, $/cancel_request, the error texts (errors.go).

// conn is the connection to the client: a jsonrpc.Conn writing through
// stdout's writer, whose table holds our requests to the client (waited
// for by run and tool goroutines only; answers are resolved on the
// reader, so a tool waiting for the editor is never stuck behind its
// session's executor).
type conn struct {
	*jsonrpc.Conn
	out *lineio.Writer
}

// errClientGone fails a request to the client once its input has closed.
var errClientGone = errors.New("the client has gone")

// respond answers a request with its result.
func (c *conn) respond(req *jsonrpc.Request, result any) { c.Respond(req, result, nil) }

// fail answers a request with an error.
func (c *conn) fail(req *jsonrpc.Request, e *jsonrpc.Error) { c.Respond(req, nil, e) }

// notify writes a notification.
func (c *conn) notify(method string, params any) { c.Notify(method, params) }

// call sends a request to the client and waits for its response, the
// client's departure or ctx. When ctx ends first the request is
// forgotten (a late response is ignored); telling the client is the
// caller's business (a withdrawn question: $/cancel_request, sent in the
// session's order). The result is decoded into result (nil: ignored); a
// JSON-RPC error comes back as *jsonrpc.Error.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	cl, err := c.Call(method, params)
	if err != nil {
		return err
	}
	return await(ctx, cl, result)
}

// await waits for the response to a request of ours (see call).
func await(ctx context.Context, cl *jsonrpc.Call, result any) error {
	if err := cl.Await(ctx, nil); err != nil {
		return err
	}
	raw, _ := cl.Result()
	if result != nil && len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("the client's answer: %w", err)
		}
	}
	return nil
}

// cancelRequest tells the client that request id is no longer wanted.
func (c *conn) cancelRequest(id int64) {
	c.notify("$/cancel_request", struct {
		RequestID int64 `json:"requestId"`
	}{id})
}

// envelope is an incoming message as ACP reads it: requests,
// notifications and responses to our requests share it. id and params
// stay raw; id is echoed exactly as sent. "jsonrpc" is not checked.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// badMessage is a line that is no message: answered with err under id
// (nil: null).
type badMessage struct {
	id  json.RawMessage
	err *jsonrpc.Error
}

func (b *badMessage) Error() string { return b.err.Message }

// decode reads one line by ACP's rules: valid UTF-8 and JSON, else -32700;
// a JSON object, else -32600. A method makes it a request (a call with an
// id, null included; a notification without); no method, an id and a
// result or an error make it a response; anything else is -32600 under
// its id.
func decode(line []byte) (jsonrpc.Message, error) {
	if !utf8.Valid(line) {
		return nil, &badMessage{err: errParse("invalid UTF-8")}
	}
	if !json.Valid(line) {
		var v any
		reason := "invalid JSON"
		if err := json.Unmarshal(line, &v); err != nil {
			reason = err.Error()
		}
		return nil, &badMessage{err: errParse(reason)}
	}
	if first := bytes.TrimLeft(line, " \t\r\n"); len(first) == 0 || first[0] != '{' {
		return nil, &badMessage{err: errInvalidRequest("a message is a JSON object")}
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, &badMessage{id: idOf(line), err: errInvalidRequest(err.Error())}
	}
	if env.Method == nil {
		if len(env.ID) > 0 && (env.Result != nil || env.Error != nil) {
			return &jsonrpc.Response{ID: env.ID, Result: env.Result, Error: env.Error}, nil
		}
		return nil, &badMessage{id: env.ID, err: errInvalidRequest("no method")}
	}
	return &jsonrpc.Request{ID: env.ID, Method: *env.Method, Params: env.Params}, nil
}

// idOf is the id of a message that did not decode, when it has a usable
// one.
func idOf(line []byte) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &v) == nil && len(v.ID) > 0 && (v.ID[0] == '"' || v.ID[0] == '-' || (v.ID[0] >= '0' && v.ID[0] <= '9')) {
		return v.ID
	}
	return nil
}

// badLine answers a line that is no message (-32700 or -32600, the id
// echoed when it had one) and one over the length limit (-32700, id
// null); the connection lives on.
func (c *conn) badLine(line []byte, err error) {
	var bad *badMessage
	switch {
	case errors.As(err, &bad):
		c.Fail(bad.id, bad.err)
	case errors.Is(err, lineio.ErrLineTooLong):
		c.Fail(nil, errParse("the line is over the length limit"))
	default:
		c.Fail(nil, errParse(err.Error()))
	}
}
