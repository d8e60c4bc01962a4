package rpc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// cmdSetHostTools registers the host's tools (rpc-protocol §7.2, in its
// order of checks, failing with the command's id): the previous host tools
// are replaced; an empty array removes them; hidden tools are registered
// but not offered; names of any case work (the original never activates
// names with capitals). The model is offered the new set from its next
// call, and get_state shows it at once.
func (s *Server) cmdSetHostTools(c *command) {
	raw := member(c.line, "tools")
	var items []json.RawMessage
	if raw == nil || json.Unmarshal(raw, &items) != nil || items == nil {
		s.fail(c, fmt.Errorf("Invalid %s command: \"tools\" must be an array", c.typ))
		return
	}
	defs := make([]engine.HostToolDef, 0, len(items))
	for i, it := range items {
		var d struct {
			Name        *string         `json:"name"`
			Label       *string         `json:"label"`
			Description *string         `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Hidden      json.RawMessage `json:"hidden"`
		}
		_ = readExact(it, &d)
		if d.Name == nil || strings.TrimSpace(*d.Name) == "" {
			s.fail(c, fmt.Errorf("Host tool at index %d must provide a non-empty name", i))
			return
		}
		name := strings.TrimSpace(*d.Name)
		if d.Description == nil || strings.TrimSpace(*d.Description) == "" {
			s.fail(c, fmt.Errorf("Host tool %q must provide a non-empty description", name))
			return
		}
		params := strings.TrimSpace(string(d.Parameters))
		if !strings.HasPrefix(params, "{") {
			s.fail(c, fmt.Errorf("Host tool %q must provide a JSON Schema object", name))
			return
		}
		label := name
		if d.Label != nil && strings.TrimSpace(*d.Label) != "" {
			label = strings.TrimSpace(*d.Label)
		}
		defs = append(defs, engine.HostToolDef{Name: name, Label: label, Description: *d.Description,
			Parameters: compactRawValue(d.Parameters), Hidden: string(d.Hidden) == "true"})
	}
	seen := map[string]bool{}
	for _, d := range defs {
		if seen[d.Name] {
			s.fail(c, errHostToolsNotUnique)
			return
		}
		seen[d.Name] = true
	}
	var base []engine.Tool
	for _, t := range s.sess.Tools() {
		if engine.IsHostTool(t) {
			continue
		}
		if seen[t.Name()] {
			s.fail(c, fmt.Errorf("RPC host tool %q conflicts with an existing tool", t.Name()))
			return
		}
		base = append(base, t)
	}
	names := make([]string, 0, len(defs))
	tools := base
	for _, d := range defs {
		names = append(names, d.Name)
		if !d.Hidden {
			tools = append(tools, s.sess.NewHostTool(d))
		}
	}
	s.sess.SetTools(tools)
	if s.opts.SystemPrompt != nil {
		s.sess.SetSystemPrompt(s.opts.SystemPrompt(tools))
	}
	s.okJSON(c, struct {
		ToolNames []string `json:"toolNames"`
	}{names})
}
