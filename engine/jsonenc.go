package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// The hand-written encoders below produce exactly the bytes encoding/json
// produces with HTML escaping off. They exist so that the streaming partial
// message can be encoded incrementally (each delta escaped once and appended
// to cached bytes) while every other frame keeps using encoding/json; a test
// pins the two to the same output.

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string literal.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped appends the escaped body of a JSON string (no quotes).
func appendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// encoding/json always escapes U+2028 and U+2029 (they end lines in
		// JavaScript source); we match it byte for byte.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// appendFloat formats f as encoding/json does.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, '0')
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	dst = strconv.AppendFloat(dst, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

func appendKey(dst []byte, key string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendStringField(dst []byte, key, v string) []byte {
	return AppendJSONString(appendKey(dst, key), v)
}

func appendIntField(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(dst, key), v, 10)
}

func appendBoolField(dst []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(dst, key), v)
}

// appendRawField appends a key and a raw JSON value. Every raw value an
// encoder writes (tool-call arguments, details, cached fragments) passes
// here, so this is where U+2028 and U+2029 get escaped in them.
func appendRawField(dst []byte, key string, raw []byte) []byte {
	return AppendRawJSON(appendKey(dst, key), raw)
}

// AppendRawJSON appends raw, a valid JSON value, with U+2028 and U+2029
// written as \u2028 and \u2029, as every string we encode ourselves has
// them. Raw JSON reaches us verbatim from models (streamed tool-call
// arguments) and hosts (ids); a host that embeds a frame in JavaScript
// source would see a raw separator end the line. In valid JSON they can
// only occur inside strings, where the escape denotes the same value.
func AppendRawJSON(dst, raw []byte) []byte {
	for {
		i := bytes.Index(raw, lineSepPrefix)
		if i < 0 || i+2 >= len(raw) {
			return append(dst, raw...)
		}
		if c := raw[i+2]; c == 0xA8 || c == 0xA9 {
			dst = append(dst, raw[:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		} else {
			dst = append(dst, raw[:i+3]...)
		}
		raw = raw[i+3:]
	}
}

// lineSepPrefix is the UTF-8 prefix of U+2028 (E2 80 A8) and U+2029
// (E2 80 A9); other characters of U+2000..U+203F share it.
var lineSepPrefix = []byte{0xE2, 0x80}

// MarshalJSON encodes v with encoding/json, HTML escaping off and no
// trailing newline: the one encoder configuration the project uses.
// encoding/json escapes U+2028 and U+2029 in the strings it encodes, but
// with HTML escaping off it copies json.RawMessage and Marshaler output
// verbatim; the result is passed through AppendRawJSON so those are escaped
// too.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	b = b[:len(b)-1]
	if bytes.Index(b, lineSepPrefix) < 0 {
		return b, nil
	}
	return AppendRawJSON(make([]byte, 0, len(b)+12), b), nil
}

// compactRaw returns raw JSON in compact form (HTML escaping off), or nil when
// raw is not valid JSON.
func compactRaw(raw []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil
	}
	return buf.Bytes()
}
