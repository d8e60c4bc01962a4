package acp

import (
	"fmt"

	"github.com/xcsh-go/xcsh/engine/jsonrpc"
)

// JSON-RPC and ACP error codes (schema: ErrorCode).
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeResourceNotFound = -32002
)

// The wire texts, in one place.

func errParse(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeParseError, Message: "Parse error", Data: map[string]string{"error": reason}}
}

func errInvalidRequest(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeInvalidRequest, Message: "Invalid request", Data: map[string]string{"error": reason}}
}

func errMethodNotFound(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeMethodNotFound, Message: "Method not found", Data: map[string]string{"method": method}}
}

func errInvalidParams(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeInvalidParams, Message: "Invalid params", Data: map[string]string{"error": reason}}
}

func errSessionNotFound(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found", Data: map[string]string{"sessionId": id}}
}

func errInternal(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeInternalError, Message: "Internal error", Data: map[string]string{"error": err.Error()}}
}

// errTurnFailed is a prompt turn that ended in a failure (the provider's,
// after the retries): its text, which the client has also been shown as a
// message chunk, never a silent end_turn.
func errTurnFailed(text string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeInternalError, Message: text, Data: map[string]string{"stopReason": "error"}}
}

func errNotStarted(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeInternalError, Message: fmt.Sprintf("The prompt could not start: %v", err)}
}
