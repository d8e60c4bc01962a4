package engine

// Notify is a fire-and-forget extension UI request (rpc-protocol §6.3):
// a message for the host to show its user. The engine sends one when
// something the user would want to know happens without a frame of its
// own kind (a retry waiting, for instance).
type Notify struct {
	ID         string
	Message    string
	NotifyType string // "info", "warning" or "error"; omitted when empty
}

// EventType implements Event.
func (Notify) EventType() string { return "extension_ui_request" }

// AppendJSON implements Event: the frame in the original's key order.
func (e Notify) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "extension_ui_request"), "id", e.ID)
	dst = appendStringField(dst, "method", "notify")
	dst = appendStringField(dst, "message", e.Message)
	if e.NotifyType != "" {
		dst = appendStringField(dst, "notifyType", e.NotifyType)
	}
	return append(dst, '}')
}

// notify emits a Notify with a fresh UI id. (actor)
func (s *Session) notify(kind, message string) {
	s.emit(Notify{ID: s.cfg.IDs.NewID("ui"), Message: message, NotifyType: kind})
}
