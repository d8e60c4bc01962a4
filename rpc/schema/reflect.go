package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// reflector derives schemas from Go types by their encoding/json tags:
// a struct is a closed object whose keys are its tagged fields, a key
// optional when its tag says omitempty (or `schema:"optional"`, for a key
// a handler leaves out by hand); a named struct becomes a definition of
// its own, described by its doc comment (docs_gen.go). Types whose
// encoding is hand-written (a MarshalJSON, an AppendJSON) have no tags
// to read: they must be given a shape (shapes), or reflection refuses
// them, so nothing hand-encoded is described by a guess.
type reflector struct {
	doc *document
	// shapes give the schema of a type encoded by hand: a definition's
	// name, or a function that builds its schema.
	shapes map[reflect.Type]string
	// enums are the closed sets of named string types.
	enums map[reflect.Type][]string
	// open are the structs whose objects may carry more keys than their
	// fields (the agent passes them on as they are).
	open map[reflect.Type]bool
	// seen maps a named struct to its definition's name.
	seen map[reflect.Type]string
	err  error
}

var (
	marshalerType = reflect.TypeFor[json.Marshaler]()
	rawType       = reflect.TypeFor[json.RawMessage]()
)

// defName is the definition name of a Go type: its name, exported.
func defName(t reflect.Type) string {
	n := t.Name()
	r := []rune(n)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// typeOf returns the schema of values of t.
func (r *reflector) typeOf(t reflect.Type) *Schema {
	if name, ok := r.shapes[t]; ok {
		return ref(name)
	}
	if t.Kind() == reflect.Pointer {
		return r.typeOf(t.Elem())
	}
	if vals, ok := r.enums[t]; ok {
		return enum("", vals...)
	}
	if t == rawType || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return anyValue("")
	}
	switch t.Kind() {
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.Slice, reflect.Array:
		return &Schema{Type: "array", Items: r.typeOf(t.Elem())}
	case reflect.Map:
		v, _ := marshal(r.typeOf(t.Elem()))
		return &Schema{Type: "object", Additional: v}
	case reflect.Struct:
		return r.structOf(t)
	case reflect.Interface:
		if t == reflect.TypeFor[any]() {
			return anyValue("")
		}
	}
	r.fail(fmt.Errorf("schema: no shape for %s (%s)", t, t.Kind()))
	return anyValue("")
}

func (r *reflector) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// structOf returns a reference to the definition of a named struct
// (made on first use), or the inline schema of an anonymous one.
func (r *reflector) structOf(t reflect.Type) *Schema {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		r.fail(fmt.Errorf("schema: %s encodes itself (MarshalJSON): give it a shape", t))
		return anyValue("")
	}
	if t.Name() == "" {
		return r.fields(t, "")
	}
	if name, ok := r.seen[t]; ok {
		return ref(name)
	}
	name := defName(t)
	if r.doc.has(name) {
		r.fail(fmt.Errorf("schema: two definitions named %s (%s)", name, t))
		return anyValue("")
	}
	r.seen[t] = name
	r.doc.reserve(name)
	s := r.fields(t, docOf(t))
	if r.open[t] {
		s.Additional = nil
	}
	r.doc.define(name, s)
	return ref(name)
}

// fields is the closed object of t's tagged fields.
func (r *reflector) fields(t reflect.Type, desc string) *Schema {
	var props Props
	var optional []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			r.fail(fmt.Errorf("schema: %s embeds %s: not supported", t, f.Type))
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := r.typeOf(f.Type)
		if d := docOfField(t, f.Name); d != "" {
			if s.Ref != "" {
				// A sibling of $ref is allowed in 2020-12; the field's words
				// are about this use of the type.
				s = &Schema{Ref: s.Ref}
			}
			s.Description = d
		}
		props = append(props, Prop{name, s})
		if strings.Contains(opts, "omitempty") || f.Tag.Get("schema") == "optional" {
			optional = append(optional, name)
		}
	}
	return object(desc, props, optional...)
}
