package client

import (
	"errors"
	"fmt"
)

// ErrClosed fails requests that were pending when the connection ended
// (Close, or the agent's stdout reached EOF) and requests made after it.
var ErrClosed = errors.New("xcsh client: connection closed")

// ErrDisconnected fails the requests that were waiting for an answer when
// a Dial client's connection dropped: each may or may not have been
// carried out. The client connects again meanwhile; later requests wait
// for it.
var ErrDisconnected = errors.New("xcsh client: the connection dropped")

// ErrOwnSessionLost fails the commands to a Dial client's own session
// (the methods of Client) after its connection dropped: that session was
// the connection's, as --mode rpc's is its process's. Sessions by id
// (OpenSession, Attach) survive a reconnection.
var ErrOwnSessionLost = errors.New("xcsh client: the connection's own session was lost with its connection (sessions by id, from OpenSession or Attach, survive a reconnection)")

// ErrSessionClosed ends a Session whose session was closed (close_session,
// by this client or another) or could not be attached again.
var ErrSessionClosed = errors.New("xcsh client: session closed")

// ErrDetached ends a Session after Detach.
var ErrDetached = errors.New("xcsh client: detached from the session")

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
