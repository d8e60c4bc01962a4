package models

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// fastJSON reads a valid JSON document into nodes in one pass over the
// bytes, counting lines as it goes. encoding/json's token API, which
// parseJSON otherwise uses, costs about a microsecond per token: seconds
// for a file of 40,000 models. fastJSON gives up (ok false) at the first
// thing it does not accept, and parseJSON then reads the file the slow way
// for the exact error text; so it only has to be right on valid input,
// where it gives the same nodes, lines included.
func fastJSON(data []byte) (n *node, ok bool) {
	p := &jsonParser{b: data, line: 1}
	p.ws()
	n = p.value(0)
	if p.bad {
		return nil, false
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, false
	}
	return n, true
}

type jsonParser struct {
	b    []byte
	i    int
	line int
	bad  bool
}

// maxJSONDepth is encoding/json's nesting limit: deeper input fails there.
const maxJSONDepth = 10000

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\n':
			p.line++
		case ' ', '\t', '\r':
		default:
			return
		}
		p.i++
	}
}

func (p *jsonParser) value(depth int) *node {
	if p.i >= len(p.b) || depth > maxJSONDepth {
		p.bad = true
		return nil
	}
	line := p.line
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		n := &node{kind: kindMap, line: line}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return n
		}
		for !p.bad {
			p.ws()
			kline := p.line
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				p.bad = true
				return nil
			}
			key := p.str()
			p.ws()
			if p.bad || p.i >= len(p.b) || p.b[p.i] != ':' {
				p.bad = true
				return nil
			}
			p.i++
			p.ws()
			v := p.value(depth + 1)
			if p.bad {
				return nil
			}
			n.set(key, kline, v)
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				return n
			}
			p.bad = true
		}
		return nil
	case c == '[':
		p.i++
		n := &node{kind: kindList, line: line}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return n
		}
		for !p.bad {
			p.ws()
			v := p.value(depth + 1)
			if p.bad {
				return nil
			}
			n.items = append(n.items, v)
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return n
			}
			p.bad = true
		}
		return nil
	case c == '"':
		return &node{kind: kindString, line: line, text: p.str()}
	case c == 't' && bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return &node{kind: kindBool, line: line, bool: true}
	case c == 'f' && bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return &node{kind: kindBool, line: line}
	case c == 'n' && bytes.HasPrefix(p.b[p.i:], []byte("null")):
		p.i += 4
		return &node{kind: kindNull, line: line}
	case c == '-' || '0' <= c && c <= '9':
		return &node{kind: kindNumber, line: line, text: p.num()}
	}
	p.bad = true
	return nil
}

// str reads a string literal at p.i.
func (p *jsonParser) str() string {
	start := p.i
	p.i++
	esc := false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			body := p.b[start+1 : p.i-1]
			if !esc && utf8.Valid(body) {
				return string(body)
			}
			var s string
			if json.Unmarshal(p.b[start:p.i], &s) != nil {
				p.bad = true
			}
			return s
		case c == '\\':
			esc = true
			p.i += 2
		case c < 0x20:
			p.bad = true
			return ""
		default:
			p.i++
		}
	}
	p.bad = true
	return ""
}

// num reads a number literal at p.i, checked against JSON's grammar.
func (p *jsonParser) num() string {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case digits() == 0:
		p.bad = true
		return ""
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.bad = true
			return ""
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.bad = true
			return ""
		}
	}
	return string(p.b[start:p.i])
}
