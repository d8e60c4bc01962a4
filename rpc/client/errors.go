package client

import (
	"errors"
	"fmt"
)

// ErrClosed fails requests that were pending when the connection ended
// (Close, or the agent's stdout reached EOF) and requests made after it.
var ErrClosed = errors.New("xcsh client: connection closed")

// ErrNotReady is returned by Start when the agent exits or the bound passes
// before its ready frame.
var ErrNotReady = errors.New("xcsh client: agent not ready")

// CommandError is a failure answered by the agent: a known command that
// failed (with its id), an unknown command (the id-less "Unknown command"
// frame), a "parse" frame, or a prompt's late failure to start.
type CommandError struct {
	// Command is the command type the failure answers ("parse" for the
	// uncorrelated parse frame matched to this request).
	Command string
	// Message is the agent's error text, verbatim.
	Message string
	// Code is the machine-readable code some failures carry
	// (get_messages_page: "session_busy", "stale_cursor", "invalid_cursor").
	Code string
}

func (e *CommandError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("xcsh %s: %s (%s)", e.Command, e.Message, e.Code)
	}
	return fmt.Sprintf("xcsh %s: %s", e.Command, e.Message)
}
