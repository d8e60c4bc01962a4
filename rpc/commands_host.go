package rpc

import (
	"encoding/json"

	"github.com/xcsh-go/xcsh/engine"
)

// cmdSetHostTools registers the host's tools (rpc-protocol §7.2): the
// session checks and installs them (engine.Session.SetHostTools); a
// refusal answers with the command's id.
func (s *Server) cmdSetHostTools(c *command) {
	raw := member(c.line, "tools")
	var items []json.RawMessage
	if raw == nil || json.Unmarshal(raw, &items) != nil || items == nil {
		s.fail(c, errMustBe(c.typ, "tools", "an array"))
		return
	}
	defs := make([]engine.HostToolDef, 0, len(items))
	for _, it := range items {
		var d struct {
			Name        *string         `json:"name"`
			Label       *string         `json:"label"`
			Description *string         `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Hidden      json.RawMessage `json:"hidden"`
		}
		_ = readExact(it, &d)
		defs = append(defs, engine.HostToolDef{Name: str(d.Name), Label: str(d.Label), Description: str(d.Description),
			Parameters: compactRawValue(d.Parameters), Hidden: string(d.Hidden) == "true"})
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
