package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/xcsh-go/xcsh/engine"
)

// elicit turns a server's elicitation request into UI dialogs, one per
// field of the requested form, in the order the schema lists as required
// then by name: an enum is a select, a boolean a confirm, anything else an
// input. A dialog the user dismisses (or that times out) cancels the whole
// request; a form without fields is one confirm. URL elicitation is
// declined (no browser in RPC mode).
func (m *Manager) elicit(ctx context.Context, s *server, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	if p == nil || p.Mode == "url" || p.URL != "" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	title := fmt.Sprintf("%s (MCP server %s)", p.Message, s.cfg.Name)
	fields := formFields(p.RequestedSchema)
	if len(fields) == 0 {
		r, err := m.host.Dialog(ctx, engine.DialogRequest{Method: engine.DialogConfirm, Title: title, Message: p.Message})
		if err != nil || r.Cancelled {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		if !r.Confirmed {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		dt := title
		if len(fields) > 1 || f.label != "" {
			dt = fmt.Sprintf("%s: %s", title, f.labelOr())
		}
		var r engine.DialogReply
		var err error
		switch {
		case len(f.enum) > 0:
			r, err = m.host.Dialog(ctx, engine.DialogRequest{Method: engine.DialogSelect, Title: dt, Options: f.enum})
		case f.typ == "boolean":
			r, err = m.host.Dialog(ctx, engine.DialogRequest{Method: engine.DialogConfirm, Title: dt, Message: f.description})
		default:
			r, err = m.host.Dialog(ctx, engine.DialogRequest{Method: engine.DialogInput, Title: dt, Placeholder: f.description})
		}
		if err != nil || r.Cancelled {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		v, ok := f.value(r)
		if !ok {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		content[f.name] = v
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// formField is one property of an elicitation form.
type formField struct {
	name, typ, label, description string
	enum                          []string
}

func (f formField) labelOr() string {
	if f.label != "" {
		return f.label
	}
	return f.name
}

// value converts the dialog's answer to the field's type; ok is false
// when it does not convert (the request is then declined).
func (f formField) value(r engine.DialogReply) (any, bool) {
	switch f.typ {
	case "boolean":
		return r.Confirmed, true
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(r.Value), 10, 64)
		return n, err == nil
	case "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(r.Value), 64)
		return n, err == nil
	}
	return r.Value, true
}

// formFields reads the flat object schema of an elicitation.
func formFields(schema any) []formField {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var sc struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			OneOf       []struct {
				Const any    `json:"const"`
				Title string `json:"title"`
			} `json:"oneOf"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(b, &sc) != nil {
		return nil
	}
	rank := map[string]int{}
	for i, n := range sc.Required {
		rank[n] = i + 1
	}
	names := make([]string, 0, len(sc.Properties))
	for n := range sc.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank[names[i]], rank[names[j]]
		if (ri > 0) != (rj > 0) {
			return ri > 0
		}
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	out := make([]formField, 0, len(names))
	for _, n := range names {
		p := sc.Properties[n]
		f := formField{name: n, typ: p.Type, label: p.Title, description: p.Description}
		for _, e := range p.Enum {
			f.enum = append(f.enum, fmt.Sprint(e))
		}
		for _, o := range p.OneOf {
			f.enum = append(f.enum, fmt.Sprint(o.Const))
		}
		out = append(out, f)
	}
	return out
}
