package sessionfile

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// maxPersistChars is the original's limit on any string written to a
// session file, in JavaScript characters (UTF-16 code units).
const maxPersistChars = 500_000

// truncationNotice ends a string cut to the limit.
const truncationNotice = "\n\n[Session persistence truncated large content]"

// truncateLongStrings returns the JSON line with every string value longer
// than maxPersistChars cut to the limit, notice included, as the original
// does before writing; signature values are blanked instead (a cut
// signature is rejected by the provider), and a "data" value in the base64
// alphabet (an image, a redacted thinking block) is kept whole: a cut one
// is invalid base64, which a provider refuses on every later request of a
// resumed session. A string of n UTF-16 units takes
// at least n bytes of JSON, so a line that is not longer than the limit
// never gets here: the common case costs a length check.
func truncateLongStrings(line []byte) []byte {
	out := make([]byte, 0, len(line))
	var lastKey []byte
	for i := 0; i < len(line); {
		c := line[i]
		if c != '"' {
			out = append(out, c)
			i++
			continue
		}
		end := stringEnd(line, i)
		lit := line[i:end]
		isKey := end < len(line) && line[end] == ':'
		switch {
		case isKey:
			lastKey = lit
			out = append(out, lit...)
		case len(lit) > maxPersistChars:
			out = appendCut(out, lit, string(lastKey))
		default:
			out = append(out, lit...)
		}
		i = end
	}
	return out
}

// stringEnd returns the index just past the JSON string literal starting
// at line[i] (a quote). It jumps from quote to quote: a quote preceded by
// an odd number of backslashes is escaped.
func stringEnd(line []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(line[j:], '"')
		if k < 0 {
			return len(line)
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && line[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// appendCut appends the string literal lit, cut to the limit if it is
// longer in UTF-16 units.
func appendCut(dst, lit []byte, key string) []byte {
	if key == `"data"` && isBase64(lit[1:len(lit)-1]) {
		return append(dst, lit...)
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return append(dst, lit...)
	}
	if utf16Len(s) <= maxPersistChars {
		return append(dst, lit...)
	}
	switch key {
	case `"thinkingSignature"`, `"thoughtSignature"`, `"textSignature"`:
		return append(dst, `""`...)
	}
	limit := maxPersistChars - utf16Len(truncationNotice)
	n, units := 0, 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		u := 1
		if r >= 0x10000 {
			u = 2 // a pair is never split: the original drops a lone high surrogate
		}
		if units+u > limit {
			break
		}
		units += u
		n += size
	}
	return engine.AppendJSONString(dst, s[:n]+truncationNotice)
}

// isBase64 reports whether b (a string literal's body) holds only the
// base64 alphabet, padding and line breaks written as escapes: the body of
// encoded binary data, never prose.
func isBase64(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=', c == '-', c == '_':
		case c == '\\' && i+1 < len(b) && (b[i+1] == 'n' || b[i+1] == 'r' || b[i+1] == '/'):
			i++
		default:
			return false
		}
	}
	return true
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
