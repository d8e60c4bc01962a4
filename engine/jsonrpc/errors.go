package jsonrpc

import (
	"errors"
	"strconv"
)

// The error codes: JSON-RPC's own, then the extension protocol's.
const (
	CodeParse          = -32700 // the line is not JSON
	CodeInvalidRequest = -32600 // not a request object
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // params of the wrong shape
	CodeFailed         = -32000 // the request failed (the message says why); a handler's plain error
	CodeStaleSession   = -32001 // the call names a session that is no longer current
	CodeTooMany        = -32002 // too many requests in flight from this extension
	CodeCancelled      = -32003 // the request was cancelled ($/cancelRequest, abort, shutdown)
)

// Error is a JSON-RPC error object. A handler that fails with one answers
// it as it is; any other error is answered CodeFailed with its text.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message + " (code " + strconv.Itoa(e.Code) + ")" }

var (
	// ErrAsync is a handler's word that it answers the call later, with
	// Respond.
	ErrAsync = errors.New("jsonrpc: answered later")
	// ErrNotHandled is Preempt's word that the message is for Handle (and
	// Handle's that no method by that name is served).
	ErrNotHandled = errors.New("jsonrpc: not handled")
	// ErrWithdrawn is the end of a call its caller withdrew.
	ErrWithdrawn = errors.New("jsonrpc: call withdrawn")
)
