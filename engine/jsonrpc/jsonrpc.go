// Package jsonrpc is the wire of xcsh extensions: JSON-RPC 2.0 messages,
// one per line, over a process's standard input and output. The extension
// host (package extension) and the helper library for extensions written
// in Go (package extkit) share it, and both frame lines with lineio's
// Reader: LF ends a line, a trailing CR is stripped, blank lines are
// skipped, a line over the cap is discarded without being held whole.
//
// docs/extensions.md is the protocol for implementers in any language.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Version is the protocol version the agent sends in initialize.
const Version = 1

// MaxLine is the default cap on one line (16 MiB).
const MaxLine = 16 << 20

// The error codes: JSON-RPC's own, then the extension protocol's.
const (
	CodeParse          = -32700 // the line is not JSON
	CodeInvalidRequest = -32600 // not a request object
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // params of the wrong shape
	CodeFailed         = -32000 // the agent could not do it (the message says why)
	CodeStaleSession   = -32001 // the call names a session that is no longer current
	CodeTooMany        = -32002 // too many requests in flight from this extension
	CodeCancelled      = -32003 // the request was cancelled ($/cancelRequest, abort, shutdown)
)

// Message is any JSON-RPC message: a request (Method and ID), a
// notification (Method, no ID), or a response (ID with Result or Error).
// ID, Params and Result stay raw JSON.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest, IsNotification and IsResponse classify a decoded message.
func (m *Message) IsRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }
func (m *Message) IsResponse() bool     { return m.Method == "" && m.ID != nil }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message + " (code " + strconv.Itoa(e.Code) + ")" }

// Decode reads one line as a Message. A line that is not a JSON object, or
// an object that is neither a request, a notification nor a response, is
// an error.
func Decode(line []byte) (*Message, error) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	if m.JSONRPC != "2.0" {
		return nil, errors.New(`jsonrpc: not "2.0"`)
	}
	if bytes.Equal(m.ID, []byte("null")) {
		m.ID = nil
	}
	if m.Method == "" && m.ID == nil {
		return nil, errors.New("jsonrpc: neither a method nor an id")
	}
	return &m, nil
}

// AppendRequest appends a request line (with its newline); params is raw
// JSON (nil: none).
func AppendRequest(dst []byte, id int64, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	return appendCall(dst, method, params)
}

// AppendNotification appends a notification line (with its newline).
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	return appendCall(dst, method, params)
}

func appendCall(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `,"method":`...)
	dst = strconv.AppendQuote(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}', '\n')
}

// AppendResult appends a success response line; result nil is null.
func AppendResult(dst []byte, id json.RawMessage, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	if result == nil {
		result = []byte("null")
	}
	dst = append(dst, result...)
	return append(dst, '}', '\n')
}

// AppendError appends an error response line.
func AppendError(dst []byte, id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	msg, _ := json.Marshal(message)
	dst = append(dst, `,"message":`...)
	dst = append(dst, msg...)
	return append(dst, '}', '}', '\n')
}
