// Package jsonscan is the lexer of the engine's fast decoding path
// (engine/decode_fast.go): it reads one JSON text in place, validating as
// it goes, with no reflection and no intermediate values, and gives up on
// anything its caller does not expect. Failure is sticky, so a caller
// reads a whole object and checks once at the end; the caller then takes
// its general path (encoding/json), which decodes the text or says why it
// cannot. Its string and number readers agree with encoding/json on what
// they accept and what they give (escapes, surrogates, bad UTF-8, integer
// overflow), and Skip accepts exactly what json.Valid does.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner reads one JSON text in place. Failure is sticky: Failed turns
// true, the position jumps to the end, and every later read returns a
// zero value, so callers check once at the end. The zero value reads an
// empty text; New starts one.
type Scanner struct {
	b     []byte
	i     int
	depth int
	fail  bool
	// strs interns short strings that repeat across a session (api,
	// provider, model, stop reason, tool name); nil interns nothing.
	strs map[string]string
}

// maxDepth bounds the nesting of the values Skip and Raw read; a deeper
// value fails (the caller's general path has its own limit).
const maxDepth = 512

// New returns a Scanner of b. strs, if not nil, interns the short strings
// IStr reads (a caller keeps one map across the lines of a file); the
// Scanner adds to it, up to 256 strings.
func New(b []byte, strs map[string]string) Scanner { return Scanner{b: b, strs: strs} }

// Failed reports whether a read failed.
func (s *Scanner) Failed() bool { return s.fail }

// Fail makes the scan fail: what the caller read is not what it takes.
func (s *Scanner) Fail() {
	s.fail = true
	s.i = len(s.b)
}

// Pos is the position of the next read; SetPos goes back to one (a caller
// that tried one reading and takes another).
func (s *Scanner) Pos() int { return s.i }

// SetPos moves to i, a position Pos gave.
func (s *Scanner) SetPos(i int) { s.i = i }

// Since returns the text from start (a position Pos gave) to here.
func (s *Scanner) Since(start int) []byte { return s.b[start:s.i] }

// Consume moves past lit if the text goes on with it here (no whitespace
// skipped) and reports whether it did; it never fails.
func (s *Scanner) Consume(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// HasPrefix reports whether the text goes on with lit here, without
// moving.
func (s *Scanner) HasPrefix(lit string) bool {
	return len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit
}

// End skips trailing whitespace and reports whether the whole text was
// read with no failure.
func (s *Scanner) End() bool {
	s.WS()
	return !s.fail && s.i == len(s.b)
}

// WS skips whitespace and reports whether there was any.
func (s *Scanner) WS() bool {
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

// Peek returns the next byte, 0 at the end.
func (s *Scanner) Peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Open consumes c (after whitespace) and reports whether it was there; it
// fails when c is not there.
func (s *Scanner) Open(c byte) bool {
	s.WS()
	if s.Peek() != c {
		s.Fail()
		return false
	}
	s.i++
	return true
}

// Close consumes c (after whitespace) if it is there, without failing
// when it is not.
func (s *Scanner) Close(c byte) bool {
	s.WS()
	if s.Peek() == c {
		s.i++
		return true
	}
	return false
}

// Next reads the separator after a member: true after a comma (another
// member follows), false after the closing c or on failure.
func (s *Scanner) Next(c byte) bool {
	s.WS()
	switch s.Peek() {
	case ',':
		s.i++
		return true
	case c:
		s.i++
		return false
	}
	s.Fail()
	return false
}

// Key reads `"key":`. A key with escapes or non-ASCII bytes fails: a
// general path matches keys as encoding/json does (case-insensitively,
// after unescaping).
func (s *Scanner) Key() []byte {
	body, esc, hi := s.StrBody()
	if esc || hi {
		s.Fail()
		return nil
	}
	if !s.Open(':') {
		return nil
	}
	return body
}

// Once fails when bit is already in seen, and adds it: a duplicated key
// takes the general path (encoding/json merges some duplicates rather than
// replacing).
func (s *Scanner) Once(seen *uint32, bit uint32) {
	if *seen&bit != 0 {
		s.Fail()
	}
	*seen |= bit
}

// strPlain marks the bytes a string body holds as they are: printable
// ASCII but the quote and the backslash. StrBody skips runs of them in a
// tight loop; string bodies are most of the bytes of a session file.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// StrBody reads a string and returns the bytes between its quotes,
// validated; esc reports a backslash and hi a byte >= 0x80.
func (s *Scanner) StrBody() (body []byte, esc, hi bool) {
	s.WS()
	if s.Peek() != '"' {
		s.Fail()
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
				s.Fail()
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					s.Fail()
					return nil, false, false
				}
				i += 6
			default:
				s.Fail()
				return nil, false, false
			}
		case c < 0x20:
			s.Fail()
			return nil, false, false
		default: // >= 0x80; checked as UTF-8 when converted
			hi = true
			i++
		}
	}
	s.Fail()
	return nil, false, false
}

// Str reads a string value.
func (s *Scanner) Str() string { return s.Text(s.StrBody()) }

// Text returns the value of a string body StrBody read.
func (s *Scanner) Text(body []byte, esc, hi bool) string {
	if s.fail {
		return ""
	}
	if !esc && (!hi || utf8.Valid(body)) {
		return string(body)
	}
	return unquote(body)
}

// IStr reads a string value that is likely to repeat, interned (New).
func (s *Scanner) IStr() string {
	body, esc, hi := s.StrBody()
	if s.fail {
		return ""
	}
	if esc || hi || s.strs == nil || len(body) > 64 {
		return s.Text(body, esc, hi)
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
func (s *Scanner) num() []byte {
	s.WS()
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
		s.Fail()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.Fail()
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
			s.Fail()
			return nil
		}
	}
	s.i = i
	return b[start:i]
}

// Int reads an integer as encoding/json does into an int64 (a fraction or
// exponent is an error there, so a failure here).
func (s *Scanner) Int() int64 {
	t := s.num()
	if s.fail {
		return 0
	}
	v, err := strconv.ParseInt(string(t), 10, 64)
	if err != nil {
		s.Fail()
	}
	return v
}

// Float reads a number as encoding/json does into a float64.
func (s *Scanner) Float() float64 {
	t := s.num()
	if s.fail {
		return 0
	}
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		s.Fail()
	}
	return v
}

// Bool reads true or false.
func (s *Scanner) Bool() bool {
	s.WS()
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		return true
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		return false
	}
	s.Fail()
	return false
}

// Raw reads any value and returns it compact, in its own memory (the text
// is not retained), as json.Compact would.
func (s *Scanner) Raw() []byte {
	s.WS()
	start := s.i
	if s.Skip() {
		if s.fail {
			return nil
		}
		var buf bytes.Buffer
		if json.Compact(&buf, s.b[start:s.i]) != nil {
			s.Fail()
			return nil
		}
		return buf.Bytes()
	}
	if s.fail {
		return nil
	}
	return bytes.Clone(s.b[start:s.i])
}

// Skip validates the value here (no leading whitespace) and moves past
// it; spaced reports whitespace inside it, which compacting removes.
func (s *Scanner) Skip() (spaced bool) {
	switch c := s.Peek(); c {
	case '"':
		s.StrBody()
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if s.depth++; s.depth > maxDepth {
			s.Fail()
			return false
		}
		s.i++
		spaced = s.WS()
		if s.Peek() == end {
			s.i++
		} else {
			for !s.fail {
				if c == '{' {
					if s.Peek() != '"' {
						s.Fail()
						break
					}
					s.StrBody()
					spaced = s.WS() || spaced
					if s.Peek() != ':' {
						s.Fail()
						break
					}
					s.i++
					spaced = s.WS() || spaced
				}
				spaced = s.Skip() || spaced
				spaced = s.WS() || spaced
				if s.Peek() == ',' {
					s.i++
					spaced = s.WS() || spaced
					continue
				}
				if s.Peek() == end {
					s.i++
					break
				}
				s.Fail()
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
			s.Fail()
			return false
		}
		s.i += len(lit)
	default:
		s.num()
	}
	return spaced
}
