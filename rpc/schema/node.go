package schema

import (
	"bytes"
	"encoding/json"
)

// Schema is one JSON Schema (2020-12) node. Its fields are its keywords
// in the order they are written, so the printed schema is stable and
// reads top-down; only what the generator needs is here.
type Schema struct {
	Schema      string          `json:"$schema,omitempty"`
	ID          string          `json:"$id,omitempty"`
	Ref         string          `json:"$ref,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Version     string          `json:"version,omitempty"`
	Type        string          `json:"type,omitempty"`
	Const       json.RawMessage `json:"const,omitempty"`
	Enum        []string        `json:"enum,omitempty"`
	Properties  *Props          `json:"properties,omitempty"`
	Required    []string        `json:"required,omitempty"`
	// Additional is additionalProperties: false (Closed), or the schema of
	// a map's values.
	Additional json.RawMessage `json:"additionalProperties,omitempty"`
	Items      *Schema         `json:"items,omitempty"`
	OneOf      []*Schema       `json:"oneOf,omitempty"`
	AnyOf      []*Schema       `json:"anyOf,omitempty"`
	Defs       *Props          `json:"$defs,omitempty"`
}

// Prop is one named schema of an ordered object (properties, $defs).
type Prop struct {
	Name   string
	Schema *Schema
}

// Props are the members of properties or $defs, in order.
type Props []Prop

// MarshalJSON writes the members as an object, in order.
func (p Props) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Name)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m.Schema)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Get returns the member named name, nil when there is none.
func (p Props) Get(name string) *Schema {
	for _, m := range p {
		if m.Name == name {
			return m.Schema
		}
	}
	return nil
}

// closed is additionalProperties:false.
var closed = json.RawMessage("false")

// marshal encodes v without HTML escaping (descriptions hold < and >).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func constOf(s string) json.RawMessage {
	b, _ := marshal(s)
	return b
}

// ref is a reference to the definition name.
func ref(name string) *Schema { return &Schema{Ref: "#/$defs/" + name} }

// object is a closed object of the given properties, the ones not in
// optional required, in order.
func object(desc string, props Props, optional ...string) *Schema {
	s := &Schema{Description: desc, Type: "object", Additional: closed}
	if len(props) > 0 {
		s.Properties = &props
	}
	opt := map[string]bool{}
	for _, o := range optional {
		opt[o] = true
	}
	for _, p := range props {
		if !opt[p.Name] {
			s.Required = append(s.Required, p.Name)
		}
	}
	return s
}

func str(desc string) *Schema { return &Schema{Type: "string", Description: desc} }

func constant(v string) *Schema { return &Schema{Const: constOf(v)} }

func enum(desc string, values ...string) *Schema {
	return &Schema{Type: "string", Description: desc, Enum: values}
}

// any is a schema every value matches.
func anyValue(desc string) *Schema { return &Schema{Description: desc} }
