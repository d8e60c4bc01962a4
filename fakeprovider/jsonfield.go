package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// field is one key of a JSON object, in document order.
type field struct {
	key string
	val json.RawMessage
}

// objectFields splits a JSON object into its fields, in document order, so
// that the first unknown key is reported deterministically and duplicate keys
// are refused. raw must be syntactically valid (Parse checks the whole
// document first).
func objectFields(raw json.RawMessage, what string) ([]field, error) {
	if kind := jsonKind(raw); kind != "an object" {
		return nil, fmt.Errorf("%s must be a JSON object, got %s", what, kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, err
	}
	var fields []field
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q in %s", key, what)
		}
		seen[key] = true
		if jsonKind(val) == "null" {
			return nil, fmt.Errorf("%q must not be null", key)
		}
		fields = append(fields, field{key, val})
	}
	return fields, nil
}

// jsonKind names the kind of a JSON value for error messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func (f field) str() (string, error) {
	var s string
	if jsonKind(f.val) != "a string" {
		return "", fmt.Errorf("%q must be a string, got %s", f.key, jsonKind(f.val))
	}
	err := json.Unmarshal(f.val, &s)
	return s, err
}

// strs accepts a string or an array of strings.
func (f field) strs() ([]string, error) {
	switch jsonKind(f.val) {
	case "a string":
		s, err := f.str()
		return []string{s}, err
	case "an array":
		var raws []json.RawMessage
		if err := json.Unmarshal(f.val, &raws); err != nil {
			return nil, err
		}
		out := make([]string, 0, len(raws))
		for i, r := range raws {
			s, err := field{fmt.Sprintf("%s[%d]", f.key, i), r}.str()
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%q must be a string or an array of strings, got %s", f.key, jsonKind(f.val))
}

func (f field) boolean() (bool, error) {
	if jsonKind(f.val) != "a boolean" {
		return false, fmt.Errorf("%q must be a boolean, got %s", f.key, jsonKind(f.val))
	}
	var b bool
	err := json.Unmarshal(f.val, &b)
	return b, err
}

// count accepts a non-negative integer that fits an int.
func (f field) count() (int, error) {
	if jsonKind(f.val) != "a number" {
		return 0, fmt.Errorf("%q must be a non-negative integer, got %s", f.key, jsonKind(f.val))
	}
	var n int64
	if err := json.Unmarshal(f.val, &n); err != nil || n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%q must be a non-negative integer, got %s", f.key, f.val)
	}
	return int(n), nil
}

// price accepts a non-negative number.
func (f field) price() (float64, error) {
	if jsonKind(f.val) != "a number" {
		return 0, fmt.Errorf("%q must be a non-negative number, got %s", f.key, jsonKind(f.val))
	}
	var v float64
	if err := json.Unmarshal(f.val, &v); err != nil || v < 0 {
		return 0, fmt.Errorf("%q must be a non-negative number, got %s", f.key, f.val)
	}
	return v, nil
}

// object returns the compact encoding of a JSON object value, keeping the
// script's key order.
func (f field) object() ([]byte, error) {
	if jsonKind(f.val) != "an object" {
		return nil, fmt.Errorf("%q must be a JSON object, got %s", f.key, jsonKind(f.val))
	}
	return compact(f.val)
}

func compact(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// syntaxError describes a JSON syntax error with its line and column.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	// Offset counts the bytes read, the offending one included; at the end
	// of the input the position is just past the last byte.
	off := min(int(se.Offset), len(data))
	if off > 0 && !strings.HasPrefix(se.Error(), "unexpected end") {
		off--
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
}
