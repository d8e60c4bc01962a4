package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

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

// envelope returns the raw values of the last "type" and "id" members of
// the command object line (nil when missing). It looks at the top level
// only and copies nothing, so the hot path (get_state) and a 60 MiB prompt
// alike pay one fast scan.
func envelope(line []byte) (typ, id []byte) {
	members(line, func(key, _, val []byte) {
		switch string(key) {
		case "type":
			typ = val
		case "id":
			id = val
		}
	})
	return typ, id
}

// commandName returns the command type a raw JSON string names, without
// allocating for the protocol's own names.
func commandName(raw []byte) string {
	name := unquote(raw)
	if h, ok := handlerNames()[string(name)]; ok {
		return h
	}
	return string(name)
}

// handlerNames interns the names of the handlers (built on first use: a
// package variable built from handlers would be an initialisation cycle
// through the handlers that read commands).
var handlerNames = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, len(handlers))
	for name := range handlers {
		m[name] = name
	}
	return m
})

// member returns the raw value of the last member of the object obj named
// exactly name, or nil.
func member(obj []byte, name string) []byte {
	var last []byte
	members(obj, func(key, _, val []byte) {
		if string(key) == name {
			last = val
		}
	})
	return last
}

// compactRawValue returns the raw JSON value raw compacted, with U+2028
// and U+2029 escaped as in everything we write (an echoed id would carry
// them verbatim otherwise), or nil when raw is nil. It is on every
// command's path: a value with no white space (the usual id) costs one
// allocation.
func compactRawValue(raw []byte) []byte {
	if raw == nil {
		return nil
	}
	if bytes.ContainsAny(raw, " \t\r\n") {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			raw = buf.Bytes()
		}
	}
	return engine.AppendRawJSON(make([]byte, 0, len(raw)), raw)
}

// readExact decodes the JSON object line into v (a pointer) under the
// reading rule. encoding/json already reads most commands that way: then
// the line is decoded as it is. Otherwise (a duplicate of a field's name, a
// name that matches a field only case-insensitively, at any depth that v's
// type reaches) the line is first rewritten, guided by v's type, so that
// every object decoded into a struct keeps only the members whose names
// match a field exactly, each field once with its last value. Either way
// the errors (and so the wire texts built from them) are those
// encoding/json gives for the same value without the dropped members.
func readExact(line []byte, v any) error {
	t := reflect.TypeOf(v)
	line = line[skipSpace(line, 0):] // values are told apart by their first byte
	if !readsExactly(line, t) {
		line = appendExact(make([]byte, 0, len(line)), line, t)
	}
	return json.Unmarshal(line, v)
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// opaque reports whether values of t are read as written: a raw message,
// or a type with a decoder of its own (an engine.ContentBlock in a host's
// reply), which applies its own reading of names.
func opaque(t reflect.Type) bool {
	return t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType)
}

// deref strips pointers; the reading rule looks through them.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isList reports whether encoding/json decodes a JSON array into t
// element by element (a []byte is a base64 string instead).
func isList(t reflect.Type) bool {
	return t.Kind() == reflect.Array || t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8
}

// readsExactly reports whether encoding/json reads the JSON value v into
// type t just as the rule does: no object decoded into a struct has a
// duplicate of a field's name or a name equal to a field's only under case
// folding (encoding/json's fold is bytes.EqualFold).
func readsExactly(v []byte, t reflect.Type) bool {
	t = deref(t)
	if len(v) == 0 || opaque(t) {
		return true
	}
	ok := true
	switch {
	case t.Kind() == reflect.Struct && v[0] == '{':
		fs := fieldsOf(t)
		var seen uint64 // fields met so far; beyond 64 fields any repeat counts
		members(v, func(key, _, val []byte) {
			for i := range fs {
				if string(key) == fs[i].name {
					bit := uint64(1) << min(i, 63)
					if seen&bit != 0 || !readsExactly(val, fs[i].typ) {
						ok = false
					}
					seen |= bit
					return
				}
			}
			for i := range fs {
				if bytes.EqualFold(key, []byte(fs[i].name)) {
					ok = false
				}
			}
		})
	case isList(t) && v[0] == '[':
		elements(v, func(e []byte) { ok = ok && readsExactly(e, t.Elem()) })
	case t.Kind() == reflect.Map && v[0] == '{':
		members(v, func(_, _, e []byte) { ok = ok && readsExactly(e, t.Elem()) })
	}
	return ok
}

// appendExact appends the rule's reading of the JSON value v for a Go
// value of type t. Values the rule does not concern (scalars, raw
// messages, a value of the wrong kind, which encoding/json then reports)
// are copied as they are. Maps need no rewriting of their own: encoding/json
// stores object members in them under their exact names, each in turn, so
// the last wins; the same holds for interface values.
func appendExact(dst, v []byte, t reflect.Type) []byte {
	t = deref(t)
	if len(v) == 0 || opaque(t) {
		return append(dst, v...)
	}
	switch {
	case t.Kind() == reflect.Struct && v[0] == '{':
		return appendStruct(dst, v, fieldsOf(t))
	case isList(t) && v[0] == '[':
		dst = append(dst, '[')
		first := true
		elements(v, func(e []byte) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendExact(dst, e, t.Elem())
		})
		return append(dst, ']')
	case t.Kind() == reflect.Map && v[0] == '{':
		dst = append(dst, '{')
		first := true
		members(v, func(_, keyRaw, e []byte) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(append(dst, keyRaw...), ':')
			dst = appendExact(dst, e, t.Elem())
		})
		return append(dst, '}')
	}
	return append(dst, v...)
}

// kept is a member of an object kept for a struct field.
type kept struct {
	field       int
	keyRaw, val []byte
	dead        bool // a later duplicate replaced it
}

// appendStruct keeps, for each field, the last member named exactly like
// it, at the position of that last member, so encoding/json meets the
// members in document order and reports the same first error it would
// for the object without the replaced duplicates.
func appendStruct(dst, v []byte, fs []field) []byte {
	var ks []kept
	members(v, func(key, keyRaw, val []byte) {
		for i := range fs {
			if string(key) != fs[i].name {
				continue
			}
			for j := range ks {
				if ks[j].field == i {
					ks[j].dead = true
				}
			}
			ks = append(ks, kept{field: i, keyRaw: keyRaw, val: val})
			return
		}
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
		dst = append(append(dst, m.keyRaw...), ':')
		dst = appendExact(dst, m.val, fs[m.field].typ)
	}
	return append(dst, '}')
}

// A small scanner over JSON the caller has validated (dispatch checks
// every line with utf8.Valid and json.Valid): it finds members and
// elements without decoding the values, where gjson's iteration unescapes
// every string value it passes (a copy of a prompt's whole text just to
// skip it).

// members calls fn for each member of the object obj, in order, with the
// key unescaped, the key as written (with its quotes) and the value as
// written. Anything but an object has no members.
func members(obj []byte, fn func(key, keyRaw, val []byte)) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	for i++; ; {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return
		}
		if obj[i] == ',' {
			i++
			continue
		}
		end := skipString(obj, i)
		keyRaw := obj[i:end]
		i = skipSpace(obj, skipSpace(obj, end)+1) // past the ':'
		vend := skipValue(obj, i)
		fn(unquote(keyRaw), keyRaw, obj[i:vend])
		i = vend
	}
}

// elements calls fn for each element of the array arr, in order.
func elements(arr []byte, fn func(val []byte)) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	for i++; ; {
		i = skipSpace(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		if arr[i] == ',' {
			i++
			continue
		}
		end := skipValue(arr, i)
		fn(arr[i:end])
		i = end
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// unquote returns the content of the JSON string literal raw, unescaped
// (allocating only when it has escapes).
func unquote(raw []byte) []byte {
	if len(raw) < 2 {
		return nil
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	var s string
	json.Unmarshal(raw, &s)
	return []byte(s)
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

// ReadFields reads a command line's members into v by the protocol's
// reading rule (readExact): for the agent server's own commands.
func ReadFields(line []byte, v any) error { return readExact(line, v) }
