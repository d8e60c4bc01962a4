package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
)

// The reading rule. Hosts build commands in JavaScript and the original
// reads them with JSON.parse, so every field of every command, the envelope
// included, is read as JSON.parse sees it: a field name matches exactly
// (case-sensitive, after unescaping), and when a key occurs more than once
// in an object the last occurrence wins. encoding/json alone differs on both
// counts (it matches struct fields case-insensitively, and with a type error
// in one duplicate reports it though a later one is fine), and a gjson path
// lookup takes the first occurrence; so all command reading goes through
// this file. Lines reach it as valid UTF-8 and valid JSON objects.

// envelope returns the last "type" and "id" members of the command object
// root (a missing one does not exist). It looks at the top level only, so
// the hot path (get_state) parses nothing more.
func envelope(root gjson.Result) (typ, id gjson.Result) {
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			typ = v
		case "id":
			id = v
		}
		return true
	})
	return typ, id
}

// member returns the last member of the object obj named exactly name.
func member(obj gjson.Result, name string) gjson.Result {
	var last gjson.Result
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == name {
			last = v
		}
		return true
	})
	return last
}

// compactRawValue returns v's raw JSON compacted, with U+2028 and U+2029
// escaped as in everything we write (the id is echoed verbatim otherwise),
// or nil when v does not exist. It is on every command's path: a value with
// no white space at all (the usual id) costs one allocation.
func compactRawValue(v gjson.Result) []byte {
	if !v.Exists() {
		return nil
	}
	raw := v.Raw
	if strings.ContainsAny(raw, " \t\r\n") {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(raw)) == nil {
			raw = buf.String()
		}
	}
	return engine.AppendRawJSON(make([]byte, 0, len(raw)), []byte(raw))
}

// readExact decodes the JSON object line into v (a pointer) under the
// reading rule. It rewrites the input, guided by v's type, so that every
// object decoded into a struct keeps only the members whose names match a
// field exactly, each field once with its last value; encoding/json then
// decodes that. Its errors (and so the wire texts built from them) are the
// ones it gives for the same value without duplicates.
func readExact(line []byte, v any) error {
	t := reflect.TypeOf(v)
	return json.Unmarshal(appendExact(make([]byte, 0, len(line)), gjson.ParseBytes(line), t), v)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// appendExact appends the rule's reading of v for a Go value of type t.
// Values the rule does not concern (scalars, raw messages, a value of the
// wrong kind, which encoding/json then reports) are copied as they are.
// Maps and interfaces need no rewriting: encoding/json stores object
// members in them under their exact names, each in turn, so the last wins.
func appendExact(dst []byte, v gjson.Result, t reflect.Type) []byte {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
	case t.Kind() == reflect.Struct && v.IsObject():
		return appendStruct(dst, v, fieldsOf(t))
	case (t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 || t.Kind() == reflect.Array) && v.IsArray():
		dst = append(dst, '[')
		first := true
		v.ForEach(func(_, e gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendExact(dst, e, t.Elem())
			return true
		})
		return append(dst, ']')
	case t.Kind() == reflect.Map && v.IsObject():
		dst = append(dst, '{')
		first := true
		v.ForEach(func(k, e gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(append(dst, k.Raw...), ':')
			dst = appendExact(dst, e, t.Elem())
			return true
		})
		return append(dst, '}')
	}
	return append(dst, v.Raw...)
}

// member of an object kept for a struct field.
type kept struct {
	field    int
	key, val gjson.Result
	dead     bool // a later duplicate replaced it
}

// appendStruct keeps, for each field, the last member named exactly like
// it, at the position of that last member, so encoding/json meets the
// members in document order and reports the same first error it would
// for the object without the replaced duplicates.
func appendStruct(dst []byte, v gjson.Result, fs []field) []byte {
	var buf [8]kept
	ks := buf[:0]
	v.ForEach(func(k, e gjson.Result) bool {
		for i := range fs {
			if fs[i].name != k.Str {
				continue
			}
			for j := range ks {
				if ks[j].field == i {
					ks[j].dead = true
				}
			}
			ks = append(ks, kept{field: i, key: k, val: e})
			break
		}
		return true
	})
	dst = append(dst, '{')
	first := true
	for _, m := range ks {
		if m.dead {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(append(dst, m.key.Raw...), ':')
		dst = appendExact(dst, m.val, fs[m.field].typ)
	}
	return append(dst, '}')
}

// field is a struct field as encoding/json names it.
type field struct {
	name string
	typ  reflect.Type
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists the fields encoding/json decodes into for struct type t:
// exported (or embedded) fields not tagged "-", named by their tag or their
// Go name, embedded untagged structs' fields promoted. A name claimed twice
// goes to the first field that claims it; encoding/json's depth rules could
// differ, but no command type has such a clash.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	collectFields(t, &fs, map[reflect.Type]bool{})
	fieldCache.Store(t, fs)
	return fs
}

func collectFields(t reflect.Type, fs *[]field, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, fs, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		*fs = append(*fs, field{name: name, typ: f.Type})
	}
}
