package rpc

// cmdSetHostTools registers the host's tools (rpc-protocol §7.2): the
// session checks and installs them (engine.Session.SetHostTools); a
// refusal answers with the command's id.
func (s *Server) cmdSetHostTools(c *command) {
	defs, err := HostToolDefs(c.line)
	if err != nil {
		s.fail(c, err)
		return
	}
	names, err := s.sess.SetHostTools(defs)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.okJSON(c, toolNamesData{names})
}

// str is *p, or "" for an absent (nil) string.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
