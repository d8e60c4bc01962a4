package engine

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jscan is the lexer of the fast decoding path (decode_fast.go): it reads
// one JSON text in place, validating as it goes, and gives up on anything
// the readers do not expect. Failure is sticky: fail is set, the position
// jumps to the end, and every later read returns a zero value, so callers
// check once at the end.
type jscan struct {
	b     []byte
	i     int
	depth int
	fail  bool
	// strs interns short strings that repeat across a session (api,
	// provider, model, stop reason, tool name); nil interns nothing.
	strs map[string]string
}

// scanMaxDepth bounds the nesting of raw values the fast path skips; a
// deeper value takes the general path, which has its own limit.
const scanMaxDepth = 512

func (s *jscan) bad() {
	s.fail = true
	s.i = len(s.b)
}

// ws skips whitespace and reports whether there was any.
func (s *jscan) ws() bool {
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return s.i > start
		}
	}
	return s.i > start
}

func (s *jscan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// open consumes c (after whitespace) and reports whether it was there;
// close does the same without failing when it is not.
func (s *jscan) open(c byte) bool {
	s.ws()
	if s.peek() != c {
		s.bad()
		return false
	}
	s.i++
	return true
}

func (s *jscan) close(c byte) bool {
	s.ws()
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// next reads the separator after a member: true after a comma (another
// member follows), false after the closing c or on failure.
func (s *jscan) next(c byte) bool {
	s.ws()
	switch s.peek() {
	case ',':
		s.i++
		return true
	case c:
		s.i++
		return false
	}
	s.bad()
	return false
}

// key reads `"key":`. A key with escapes or non-ASCII bytes fails: the
// general path matches keys as encoding/json does.
func (s *jscan) key() []byte {
	body, esc, hi := s.strBody()
	if esc || hi {
		s.bad()
		return nil
	}
	if !s.open(':') {
		return nil
	}
	return body
}

// once fails when bit is already in seen: a duplicated key takes the
// general path (encoding/json merges some duplicates rather than replacing).
func (s *jscan) once(seen *uint32, bit uint32) {
	if *seen&bit != 0 {
		s.bad()
	}
	*seen |= bit
}

// strPlain marks the bytes a string body holds as they are: printable
// ASCII but the quote and the backslash. strBody skips runs of them in a
// tight loop; string bodies are most of a session's bytes.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strBody reads a string and returns the bytes between its quotes,
// validated; esc reports a backslash and hi a byte >= 0x80.
func (s *jscan) strBody() (body []byte, esc, hi bool) {
	s.ws()
	if s.peek() != '"' {
		s.bad()
		return nil, false, false
	}
	s.i++
	start := s.i
	b := s.b
	for i := s.i; ; {
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], esc, hi
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				s.bad()
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					s.bad()
					return nil, false, false
				}
				i += 6
			default:
				s.bad()
				return nil, false, false
			}
		case c < 0x20:
			s.bad()
			return nil, false, false
		default: // >= 0x80; checked as UTF-8 when converted
			hi = true
			i++
		}
	}
	s.bad()
	return nil, false, false
}

// str reads a string value.
func (s *jscan) str() string { return s.text(s.strBody()) }

// text returns the value of a string body strBody read.
func (s *jscan) text(body []byte, esc, hi bool) string {
	if s.fail {
		return ""
	}
	if !esc && (!hi || utf8.Valid(body)) {
		return string(body)
	}
	return unquote(body)
}

// istr reads a string value that is likely to repeat, interned.
func (s *jscan) istr() string {
	body, esc, hi := s.strBody()
	if s.fail {
		return ""
	}
	if esc || hi || s.strs == nil || len(body) > 64 {
		return s.text(body, esc, hi)
	}
	if v, ok := s.strs[string(body)]; ok {
		return v
	}
	v := string(body)
	if len(s.strs) < 256 {
		s.strs[v] = v
	}
	return v
}

// hex4 returns the value of four hex digits, -1 if they are not.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquote decodes a validated string body as encoding/json does: escapes
// resolved, a lone or broken surrogate and invalid UTF-8 become U+FFFD.
func unquote(b []byte) string {
	out := make([]byte, 0, len(b)+utf8.UTFMax)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			switch b[i+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(b[i+2:])); d != unicode.ReplacementChar {
							out = utf8.AppendRune(out, d)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // '"', '\\', '/'
				out = append(out, b[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

// num reads a number and returns its text.
func (s *jscan) num() []byte {
	s.ws()
	b, i := s.b, s.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		s.bad()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.bad()
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.bad()
			return nil
		}
	}
	s.i = i
	return b[start:i]
}

// int reads an integer as encoding/json does into an int64 (a fraction or
// exponent is an error there, so a failure here).
func (s *jscan) int() int64 {
	t := s.num()
	if s.fail {
		return 0
	}
	v, err := strconv.ParseInt(string(t), 10, 64)
	if err != nil {
		s.bad()
	}
	return v
}

func (s *jscan) float() float64 {
	t := s.num()
	if s.fail {
		return 0
	}
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		s.bad()
	}
	return v
}

func (s *jscan) bool() bool {
	s.ws()
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		return true
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		return false
	}
	s.bad()
	return false
}

// raw reads any value and returns it compact, in its own memory (the line
// is not retained), as rawValue(compactRaw(...)) would.
func (s *jscan) raw() []byte {
	s.ws()
	start := s.i
	if s.skip() {
		if s.fail {
			return nil
		}
		v := compactRaw(s.b[start:s.i])
		if v == nil {
			s.bad()
		}
		return v
	}
	if s.fail {
		return nil
	}
	return bytes.Clone(s.b[start:s.i])
}

// skip validates the value at s.i (no leading whitespace) and moves past
// it; spaced reports whitespace inside it, which compacting removes.
func (s *jscan) skip() (spaced bool) {
	switch c := s.peek(); c {
	case '"':
		s.strBody()
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if s.depth++; s.depth > scanMaxDepth {
			s.bad()
			return false
		}
		s.i++
		spaced = s.ws()
		if s.peek() == end {
			s.i++
		} else {
			for !s.fail {
				if c == '{' {
					if s.peek() != '"' {
						s.bad()
						break
					}
					s.strBody()
					spaced = s.ws() || spaced
					if s.peek() != ':' {
						s.bad()
						break
					}
					s.i++
					spaced = s.ws() || spaced
				}
				spaced = s.skip() || spaced
				spaced = s.ws() || spaced
				if s.peek() == ',' {
					s.i++
					spaced = s.ws() || spaced
					continue
				}
				if s.peek() == end {
					s.i++
					break
				}
				s.bad()
			}
		}
		s.depth--
	case 't', 'f', 'n':
		lit := "null"
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.bad()
			return false
		}
		s.i += len(lit)
	default:
		s.num()
	}
	return spaced
}
