package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The TypeScript and Python types of a protocol, written from its JSON
// Schema (not from the Go types again): what a client generated from the
// schema would see. Every definition becomes a named type (an interface or
// TypedDict for an object, an alias for a union or an enum); an object
// nested without a name takes its parent's name and its key's.

// lang writes the types of one language.
type lang interface {
	header(b *bytes.Buffer, title, version, hash string)
	// object declares an object type; props in order, opt the optional
	// ones.
	object(b *bytes.Buffer, name, desc string, props []field)
	alias(b *bytes.Buffer, name, desc, expr string)
	// the type expressions
	any() string
	null() string
	prim(t string) string // string, integer, number, boolean
	literal(raw json.RawMessage) string
	array(item string) string
	dict(val string) string
	union(items []string) string
	ref(name string) string
}

type field struct {
	name, desc, typ string
	optional        bool
}

// typesGen walks a schema's definitions for a language; nested objects
// are declared after the definition that holds them.
type typesGen struct {
	l     lang
	defs  *Props
	out   bytes.Buffer
	later []func()
}

func (g *typesGen) expr(s *Schema, owner string) string {
	switch {
	case s.Ref != "":
		return g.l.ref(strings.TrimPrefix(s.Ref, "#/$defs/"))
	case len(s.Const) > 0:
		return g.l.literal(s.Const)
	case len(s.Enum) > 0:
		var items []string
		for _, e := range s.Enum {
			items = append(items, g.l.literal(constOf(e)))
		}
		return g.l.union(items)
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		var items []string
		for i, o := range append(s.OneOf, s.AnyOf...) {
			items = append(items, g.expr(o, fmt.Sprintf("%s%d", owner, i+1)))
		}
		return g.l.union(items)
	}
	switch s.Type {
	case "":
		return g.l.any()
	case "null":
		return g.l.null()
	case "array":
		if s.Items == nil {
			return g.l.array(g.l.any())
		}
		return g.l.array(g.expr(s.Items, owner+"Item"))
	case "object":
		if s.Properties == nil {
			if len(s.Additional) > 0 && string(s.Additional) != "false" {
				var v Schema
				if json.Unmarshal(s.Additional, &v) == nil {
					return g.l.dict(g.expr(&v, owner+"Value"))
				}
			}
			if string(s.Additional) == "false" {
				// A closed object with no keys: an object type of its own.
				g.later = append(g.later, func() { g.decl(owner, s) })
				return g.l.ref(owner)
			}
			return g.l.dict(g.l.any())
		}
		g.later = append(g.later, func() { g.decl(owner, s) })
		return g.l.ref(owner)
	}
	return g.l.prim(s.Type)
}

// decl declares the definition name.
func (g *typesGen) decl(name string, s *Schema) {
	if s.Type == "object" && (s.Properties != nil || string(s.Additional) == "false") && len(s.OneOf) == 0 && len(s.AnyOf) == 0 {
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		var fs []field
		if s.Properties != nil {
			for _, p := range *s.Properties {
				fs = append(fs, field{name: p.Name, desc: p.Schema.Description, typ: g.expr(p.Schema, name+pascal(p.Name)), optional: !req[p.Name]})
			}
		}
		g.l.object(&g.out, name, s.Description, fs)
	} else {
		g.l.alias(&g.out, name, s.Description, g.expr(s, name))
	}
	for len(g.later) > 0 {
		f := g.later[0]
		g.later = g.later[1:]
		f()
	}
}

// Types writes the types of protocol in the language format
// ("typescript" or "python").
func Types(protocol, format string) ([]byte, error) {
	s, err := Generate(protocol)
	if err != nil {
		return nil, err
	}
	h, err := hashOf(s) // the schema just generated: not a second generation
	if err != nil {
		return nil, err
	}
	var l lang
	switch format {
	case "typescript":
		l = tsLang{}
	case "python":
		l = pyLang{}
	default:
		return nil, fmt.Errorf("unknown format %q", format)
	}
	g := &typesGen{l: l, defs: s.Defs}
	l.header(&g.out, s.Title, Version, h)
	for _, d := range *s.Defs {
		g.decl(d.Name, d.Schema)
	}
	return g.out.Bytes(), nil
}
