package rpc

import (
	"encoding/json"
)

// boolArg decodes the command's required boolean field, answering the
// failure (with the id) when it is missing or not a boolean.
func (s *Server) boolArg(c *command, field string) (bool, bool) {
	raw := member(c.line, field)
	var v bool
	if raw == nil || json.Unmarshal(raw, &v) != nil || string(raw) == "null" {
		s.fail(c, errMustBe(c.typ, field, "a boolean"))
		return false, false
	}
	return v, true
}

// cmdSetAutoRetry turns automatic retry on or off for this session (never
// written to the user's settings, DECISIONS "Sessions").
func (s *Server) cmdSetAutoRetry(c *command) {
	on, ok := s.boolArg(c, "enabled")
	if !ok {
		return
	}
	s.sess.SetAutoRetry(on)
	s.ok(c, nil)
}

// cmdAbortRetry answers once the cancelled retry wait has emitted its
// auto_retry_end (the original's order); the wait was cancelled when the
// line was read (see preempt).
func (s *Server) cmdAbortRetry(c *command) {
	s.sess.AbortRetry(func() { s.ok(c, nil) })
}
