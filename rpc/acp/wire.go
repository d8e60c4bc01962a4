package acp

// This file describes our extensions of ACP for the protocol schema
// (rpc/schema, `xcsh schema --protocol acp-ext`).

// ExtMethod is one of our _xcsh methods or notifications.
type ExtMethod struct {
	Method string
	Doc    string
	// Params and Result are values of their types; Result nil for a
	// notification.
	Params, Result any
	// Notification: sent by the agent, never answered.
	Notification bool
}

// InitializeMeta is initialize's _meta.xcsh: the version and the hash of
// the schema of our extensions, for a client to check what it was built
// against.
type InitializeMeta struct {
	ProtocolVersion string `json:"protocolVersion"`
	SchemaHash      string `json:"schemaHash"`
}

// LiveMeta is session/list's _meta.xcsh on a session live in this
// process: who drives and who watches it (absent for a session this
// front did not open).
type LiveMeta struct {
	Controllers *int `json:"controllers,omitempty"`
	Live        bool `json:"live"`
	Observers   *int `json:"observers,omitempty"`
}

// sessionRef names a session.
type sessionRef struct {
	SessionID string `json:"sessionId"`
}

// Extensions lists our _xcsh methods and notifications.
func Extensions() []ExtMethod {
	return []ExtMethod{
		{Method: methodAttach, Doc: "Attaches this client to a live session, as a controller or an observer.", Params: attachParams{}, Result: attachResult{}},
		{Method: methodDetach, Doc: "Detaches this client from a session.", Params: sessionRef{}, Result: struct{}{}},
		{Method: notifyResolved, Doc: "Another client answered a permission request of the session.", Params: resolvedParams{}, Notification: true},
		{Method: notifyClosed, Doc: "The session has ended; this client is detached.", Params: sessionRef{}, Notification: true},
		{Method: notifyLagged, Doc: "This client fell behind the session's updates and was detached; attach again.", Params: sessionRef{}, Notification: true},
	}
}
