package serve

import "github.com/xcsh-go/xcsh/rpc"

// This file describes the server's own commands for the protocol schema
// (rpc/schema, `xcsh schema --protocol server`); TestWireCoversCommands
// holds the list to serverCommands.

type getSessionsArgs struct {
	// Cwd lists the stored sessions of this directory (default: the
	// server's).
	Cwd string `json:"cwd,omitempty"`
}

type sessionsData struct {
	Sessions []sessionInfo `json:"sessions"`
}

type openSessionArgs struct {
	// Cwd is the new session's directory, absolute (default: the
	// server's).
	Cwd string `json:"cwd,omitempty"`
	// Updates is "full" (default) or "delta" (message_update without its
	// snapshots).
	Updates string `json:"updates,omitempty"`
	// Durable opens a durable session (a server started with --temporal):
	// its seq and epoch are the session's own, good on any server or
	// front of it.
	Durable bool `json:"durable,omitempty"`
	// SessionID, with durable, names the session: it is started when it
	// does not exist, joined when it does (a stdio front's --session).
	SessionID string `json:"sessionId,omitempty"`
}

type attachArgs struct {
	SessionID string `json:"sessionId"`
	// After is the cursor: the seq of the last event the client has; the
	// events after it are replayed.
	After *uint64 `json:"after,omitempty"`
	// Epoch is the server run the cursor is of.
	Epoch string `json:"epoch,omitempty"`
	// Role is "controller" (default) or "observer".
	Role    string `json:"role,omitempty"`
	Updates string `json:"updates,omitempty"`
}

// Commands lists the server's own commands; every other command of the
// rpc protocol goes to the session its sessionId names.
func Commands() []rpc.CommandWire {
	return []rpc.CommandWire{
		{Type: "get_sessions", Doc: "Lists the live and stored sessions.", Args: getSessionsArgs{}, Data: sessionsData{}},
		{Type: "open_session", Doc: "Starts a session and attaches the client to it as a controller.", Args: openSessionArgs{}, Data: attachData{}},
		{Type: "attach", Doc: "Attaches the client to a session, replaying what it missed after its cursor.", Args: attachArgs{}, Data: attachData{}},
		{Type: "detach", Doc: "Detaches the client from its session (sessionId)."},
		{Type: "close_session", Doc: "Closes the session (sessionId) for every client."},
	}
}
