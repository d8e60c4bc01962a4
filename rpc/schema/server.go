package schema

import (
	"reflect"

	"github.com/xcsh-go/xcsh/rpc/serve"
)

// The frames of the agent server (rpc/serve) that are its own, written by
// hand in hub.go: their shapes.

// LaggedFrame: the client fell too far behind the session's events and
// was detached from it; attach again from lastSeq.
type lagged struct {
	SessionID string `json:"sessionId"`
	LastSeq   uint64 `json:"lastSeq"`
}

// ResolvedFrame: another client answered the request id (a dialog, a host
// tool call): close it.
type resolved struct {
	ID string `json:"id"`
}

// ClientsChangedFrame says who watches the session now.
type clientsChanged struct {
	Controllers int `json:"controllers"`
	Observers   int `json:"observers"`
}

// SessionClosedFrame: the session has ended for this client.
type sessionClosed struct {
	SessionID string `json:"sessionId"`
	// Reason is "closed" (close_session) or "shutdown" (the server is
	// stopping; the session goes on from its file after a restart).
	Reason string `json:"reason"`
}

var serverFrames = []struct {
	Name, Type string
	Shape      any
}{
	{"LaggedFrame", "lagged", lagged{}},
	{"ResolvedFrame", "resolved", resolved{}},
	{"ClientsChangedFrame", "clients_changed", clientsChanged{}},
	{"SessionClosedFrame", "session_closed", sessionClosed{}},
}

func serverSchema() (*Schema, error) {
	b := newBuilder()
	envelope := Props{
		{"sessionId", str("The session the frame is of (the server's envelope).")},
		{"seq", &Schema{Type: "integer", Description: "The event's number in its session, for attach's cursor (the server's envelope)."}},
	}
	inputs, replies, responses, others := b.frames(envelope, "sessionId", "seq")
	addExtra := b.extra(envelope, "sessionId", "seq")
	own, _, ownResponses := b.commands(serve.Commands(), addExtra)
	inputs = append(own, inputs...)
	responses = append(ownResponses, responses...)
	for _, f := range serverFrames {
		t := reflect.TypeOf(f.Shape)
		s := withType(b.r.fields(t, docOf(t)), Prop{"type", constant(f.Type)})
		if s.Properties.Get("sessionId") == nil {
			s = addExtra(s)
		}
		b.define(f.Name, s)
		others = append(others, f.Name)
	}
	b.unions(inputs, replies, responses, others)
	return b.root("server.json", "xcsh agent server protocol",
		"The frames of xcsh serve: the rpc protocol's, each with the server's envelope (sessionId, and seq on a session's events), its own commands (get_sessions, open_session, attach, detach, close_session) and frames (lagged, resolved, clients_changed, session_closed).",
		&Schema{AnyOf: []*Schema{ref("RpcInput"), ref("RpcOutput")}})
}
