package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// node is one value of a configuration file with the line it starts on.
// models.json and models.yml are both read into nodes, so one validator
// serves the two formats and every error can name its line. Mappings keep
// their keys in file order: the registry lists providers and models in the
// order the user wrote them.
type node struct {
	kind  nodeKind
	line  int
	text  string // string value, or the literal text of a number
	bool  bool
	keys  []string // kindMap, in file order
	klns  []int    // the line of each key
	vals  []*node  // kindMap values, parallel to keys
	items []*node  // kindList
	// index finds a key's position once a mapping has more than a few
	// keys, so a file with thousands of providers or overrides is read in
	// linear time.
	index map[string]int
}

// indexAt is the number of keys from which a mapping keeps an index.
const indexAt = 16

// find returns the position of key, or -1.
func (n *node) find(key string) int {
	if n.index != nil {
		if i, ok := n.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range n.keys {
		if k == key {
			return i
		}
	}
	return -1
}

type nodeKind int

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindMap
	kindList
)

func (k nodeKind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "a mapping", "a list"}[k]
}

// set adds key or, for a key seen before, replaces its value: JSON.parse
// keeps the last duplicate, and so do we.
func (n *node) set(key string, line int, v *node) {
	if i := n.find(key); i >= 0 {
		n.klns[i], n.vals[i] = line, v
		return
	}
	n.keys = append(n.keys, key)
	n.klns = append(n.klns, line)
	n.vals = append(n.vals, v)
	switch {
	case n.index != nil:
		n.index[key] = len(n.keys) - 1
	case len(n.keys) >= indexAt:
		n.index = make(map[string]int, 2*len(n.keys))
		for i, k := range n.keys {
			n.index[k] = i
		}
	}
}

// get returns the value of key, or nil.
func (n *node) get(key string) *node {
	if i := n.find(key); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// toJSON renders n as compact JSON, keys in file order. Compat blocks are
// kept this way (raw, for the adapter of the model's API to read).
func (n *node) toJSON() json.RawMessage {
	var b bytes.Buffer
	n.writeJSON(&b)
	return b.Bytes()
}

func (n *node) writeJSON(b *bytes.Buffer) {
	switch n.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(n.bool))
	case kindNumber:
		if f, err := parseNumber(n.text); err == nil {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.WriteString("null")
		}
	case kindString:
		writeJSONString(b, n.text)
	case kindMap:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			n.vals[i].writeJSON(b)
		}
		b.WriteByte('}')
	case kindList:
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}

// parseNumber reads a number as JSON or YAML writes it (YAML allows 128_000).
func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		f, err = strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	}
	return f, err
}

// parseJSON reads a whole JSON document into nodes: fastJSON reads a valid
// one; anything else is read again here for its error. It tracks lines through
// the decoder's offsets: a token ends on the line it starts on (JSON
// strings hold no raw newlines), so the line of a token's end is its line.
func parseJSON(file string, data []byte) (*node, error) {
	if n, ok := fastJSON(data); ok {
		return n, nil
	}
	return slowJSON(file, data)
}

// slowJSON is parseJSON through encoding/json's tokens: exact errors.
func slowJSON(file string, data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	lines := &lineCounter{data: data, line: 1}
	n, err := readJSONValue(dec, lines)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return nil, &ConfigError{File: file, Line: lines.at(dec.InputOffset()), Msg: "syntax error: unexpected data after the top-level value"}
		}
		return n, nil
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return nil, &ConfigError{File: file, Line: lines.at(se.Offset), Msg: "syntax error: " + se.Error()}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &ConfigError{File: file, Line: lines.at(int64(len(data))), Msg: "syntax error: unexpected end of JSON input"}
	}
	return nil, &ConfigError{File: file, Line: lines.at(dec.InputOffset()), Msg: "syntax error: " + err.Error()}
}

// lineCounter maps byte offsets to lines; offsets only grow, so it counts
// each newline once.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

func (c *lineCounter) at(off int64) int {
	if off > int64(len(c.data)) {
		off = int64(len(c.data))
	}
	if off < c.off { // a syntax error may point back; count afresh
		return 1 + bytes.Count(c.data[:off], []byte{'\n'})
	}
	c.line += bytes.Count(c.data[c.off:off], []byte{'\n'})
	c.off = off
	return c.line
}

func readJSONValue(dec *json.Decoder, lines *lineCounter) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	line := lines.at(dec.InputOffset())
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull, line: line}, nil
	case bool:
		return &node{kind: kindBool, line: line, bool: t}, nil
	case json.Number:
		return &node{kind: kindNumber, line: line, text: t.String()}, nil
	case string:
		return &node{kind: kindString, line: line, text: t}, nil
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: kindMap, line: line}
			for dec.More() {
				ktok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				kline := lines.at(dec.InputOffset())
				v, err := readJSONValue(dec, lines)
				if err != nil {
					return nil, err
				}
				n.set(ktok.(string), kline, v) // the decoder only yields string keys
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return n, nil
		case '[':
			n := &node{kind: kindList, line: line}
			for dec.More() {
				v, err := readJSONValue(dec, lines)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return n, nil
		}
	}
	return nil, &json.SyntaxError{Offset: dec.InputOffset()}
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?`) })

// maxAliasNodes bounds the nodes that aliases may add to a models.yml.
// Aliases let a small file expand without bound (billion laughs: nine
// anchors, each a list of nine aliases of the one before, are 9^9 nodes
// at a depth of 18), so the expansion is counted, not just its depth. A
// real file reuses a few blocks a few times: far below this.
const maxAliasNodes = 100_000

// parseYAML reads a YAML document into nodes. An empty document is an
// empty mapping (a models.yml with only comments configures nothing).
func parseYAML(file string, data []byte) (*node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		line := 0
		if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = msg[len(m[0]):]
		}
		return nil, &ConfigError{File: file, Line: line, Msg: "syntax error: " + msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &node{kind: kindMap, line: 1}, nil
	}
	c := &yamlConverter{file: file, budget: maxAliasNodes}
	return c.convert(doc.Content[0], 0, nil)
}

// yamlConverter turns yaml.Nodes into nodes, expanding aliases within a
// budget of nodes.
type yamlConverter struct {
	file   string
	budget int // nodes aliases may still add
}

// convert converts y. alias is the alias node whose expansion y is part
// of (nil outside any): every node made under it is charged to the budget,
// and the error names its line.
func (c *yamlConverter) convert(y *yaml.Node, depth int, alias *yaml.Node) (*node, error) {
	file := c.file
	if depth > 64 {
		return nil, &ConfigError{File: file, Line: y.Line, Msg: "syntax error: nesting too deep"}
	}
	if alias != nil {
		if c.budget--; c.budget < 0 {
			return nil, &ConfigError{File: file, Line: alias.Line,
				Msg: fmt.Sprintf("syntax error: aliases expand to more than %d nodes", maxAliasNodes)}
		}
	}
	switch y.Kind {
	case yaml.AliasNode:
		if alias == nil {
			alias = y
		}
		return c.convert(y.Alias, depth+1, alias)
	case yaml.MappingNode:
		n := &node{kind: kindMap, line: y.Line}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, &ConfigError{File: file, Line: k.Line, Msg: "syntax error: a mapping key must be a scalar"}
			}
			// YAML forbids duplicate keys (JSON.parse keeps the last); say
			// where the first one is rather than dropping it silently.
			if j := n.find(k.Value); j >= 0 {
				return nil, &ConfigError{File: file, Line: k.Line,
					Msg: fmt.Sprintf("syntax error: mapping key %q already defined at line %d", k.Value, n.klns[j])}
			}
			vn, err := c.convert(v, depth+1, alias)
			if err != nil {
				return nil, err
			}
			n.set(k.Value, k.Line, vn)
		}
		return n, nil
	case yaml.SequenceNode:
		n := &node{kind: kindList, line: y.Line}
		for _, it := range y.Content {
			in, err := c.convert(it, depth+1, alias)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, in)
		}
		return n, nil
	case yaml.ScalarNode:
		n := &node{line: y.Line, text: y.Value}
		switch y.ShortTag() {
		case "!!null":
			n.kind = kindNull
		case "!!bool":
			n.kind = kindBool
			var b bool
			if err := y.Decode(&b); err != nil {
				return nil, &ConfigError{File: file, Line: y.Line, Msg: "syntax error: bad boolean"}
			}
			n.bool = b
		case "!!int", "!!float":
			n.kind = kindNumber
		default:
			n.kind = kindString
		}
		return n, nil
	}
	return nil, &ConfigError{File: file, Line: y.Line, Msg: "syntax error: unsupported YAML node"}
}
