// Package jsonrpc is JSON-RPC 2.0 over lines, as xcsh speaks it: one
// message per line on a process's standard streams. Conn (conn.go) is the
// one connection both ways, shared by the ACP front (rpc/acp, with its
// editor), the extension host (engine/extension, with each extension
// process) and extkit (an extension written in Go, with the agent). Each
// keeps its own policy (how a bad line is answered, its error codes and
// texts, its cancellation notification's name, deadlines, bounds) and
// hands the rest to Conn: the table of our calls waiting for their
// answers, the peer's calls being handled, the encoding of what is sent.
//
// This file holds the messages, Decode (the extension protocol's rules for
// a line) and the notification encoder the extension host uses to send one
// event to several extensions; errors.go the error codes, both JSON-RPC's
// and the extension protocol's. docs/extensions.md is that protocol for
// implementers in any language; lines are framed by
// engine/lineio's Reader (LF ends a line, a trailing CR is stripped, blank
// lines are skipped, a line over the cap is discarded without being held
// whole).
package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Version is the protocol version the agent sends in initialize.
const Version = 1

// MaxLine is the default cap on one line of the extension wire (16 MiB).
const MaxLine = 16 << 20

// Message is a decoded line: a *Request or a *Response.
type Message interface{ message() }

// Request is a message from the peer with a method: a call, which is
// answered (ID set, raw as sent, echoed in the answer), or a notification
// (ID nil).
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage

	// Set by the Conn that reads a call. ctx is the call's context (the
	// one exception to "no context in a struct", as x/tools jsonrpc2_v2's
	// incomingRequest: the call carries it from the reader to whoever
	// answers it); it ends when the call is answered or the peer cancels
	// it (Conn.Cancel).
	ctx      context.Context
	cancel   context.CancelFunc
	answered bool // guarded by the Conn's mu
}

// IsCall reports whether the request is answered (it has an id).
func (r *Request) IsCall() bool { return r.ID != nil }

// Response answers one of our calls: Result, or Error.
type Response struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *Error
}

func (*Request) message()  {}
func (*Response) message() {}

// wire is a line as the extension protocol reads it.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
}

// wires recycles the decoding scratch: the message built from it takes its
// fields, so a decoded line costs what its own contents cost.
var wires = sync.Pool{New: func() any { return new(wire) }}

// Decode reads one line by the extension protocol's rules: a JSON object
// with "jsonrpc":"2.0"; a method makes it a request (a call with an id, a
// notification without; an id of null is none), no method a response to
// the id it names. Anything else is an error: the line is noise.
func Decode(line []byte) (Message, error) {
	w := wires.Get().(*wire)
	defer func() { *w = wire{}; wires.Put(w) }()
	if err := json.Unmarshal(line, w); err != nil {
		return nil, err
	}
	if w.JSONRPC != "2.0" {
		return nil, errors.New(`jsonrpc: not "2.0"`)
	}
	if bytes.Equal(w.ID, []byte("null")) {
		w.ID = nil
	}
	switch {
	case w.Method != "":
		return &Request{ID: w.ID, Method: w.Method, Params: w.Params}, nil
	case w.ID != nil:
		return &Response{ID: w.ID, Result: w.Result, Error: w.Error}, nil
	}
	return nil, errors.New("jsonrpc: neither a method nor an id")
}

// AppendNotification appends a notification line (with its newline);
// params is raw JSON (nil: none). The extension host encodes an event once
// this way and queues the same line for every extension subscribed to it.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = appendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}', '\n')
}

// appendString appends s as a JSON string. Method names are plain ASCII,
// written as they are; anything else goes through encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
