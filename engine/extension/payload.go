package extension

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// obj builds a JSON object in the order its keys are added, as every
// frame of the project is (json.Marshal of a map would sort them).
type obj struct {
	b    []byte
	keys int
}

// newObj starts {"type":typ,"sessionId":id, ...: the head of every hook
// and event the host makes.
func newObj(typ, session string) *obj {
	return openObj().str("type", typ).str("sessionId", session)
}

// openObj starts an empty object.
func openObj() *obj { return &obj{b: append(make([]byte, 0, 256), '{')} }

func (o *obj) key(k string) {
	if o.keys > 0 {
		o.b = append(o.b, ',')
	}
	o.keys++
	o.b = engine.AppendJSONString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *obj) str(k, v string) *obj {
	o.key(k)
	o.b = engine.AppendJSONString(o.b, v)
	return o
}

func (o *obj) raw(k string, v []byte) *obj {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

func (o *obj) boolean(k string, v bool) *obj {
	if v {
		return o.raw(k, []byte("true"))
	}
	return o.raw(k, []byte("false"))
}

func (o *obj) val(k string, v any) *obj {
	b, err := engine.MarshalJSON(v)
	if err != nil {
		b = []byte("null")
	}
	return o.raw(k, b)
}

func (o *obj) bytes() []byte { return append(o.b, '}') }

// blocks encodes content blocks as a JSON array ([] for none).
func blocks(bs []engine.ContentBlock) []byte {
	out := []byte{'['}
	for i := range bs {
		if i > 0 {
			out = append(out, ',')
		}
		out = bs[i].AppendJSON(out)
	}
	return append(out, ']')
}

// decodeBlocks reads content given as an array of blocks or as a string
// (one text block).
func decodeBlocks(raw json.RawMessage) ([]engine.ContentBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []engine.ContentBlock{engine.TextBlock(s)}, nil
	}
	var out []engine.ContentBlock
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []engine.ContentBlock{}
	}
	return out, nil
}

// decodeMessages reads agent messages in their wire encoding.
func decodeMessages(raws []json.RawMessage) ([]engine.Message, error) {
	out := make([]engine.Message, 0, len(raws))
	for _, r := range raws {
		m, err := engine.DecodeMessage(r)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// customMessage is a custom message as an extension gives it
// (before_agent_start, sendMessage).
type customMessage struct {
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	Display    *bool           `json:"display"`
	Details    json.RawMessage `json:"details"`
}

func (c *customMessage) engine() (*engine.CustomMessage, error) {
	if strings.TrimSpace(c.CustomType) == "" {
		return nil, errors.New(`a message needs a "customType"`)
	}
	if c.Content == nil {
		return nil, errors.New(`a message needs "content"`)
	}
	content, err := decodeBlocks(c.Content)
	if err != nil {
		return nil, err
	}
	m := &engine.CustomMessage{CustomType: c.CustomType, Content: content, Display: c.Display == nil || *c.Display}
	if c.Details != nil && string(c.Details) != "null" {
		m.Details = compact(c.Details)
	}
	return m, nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// compact returns raw JSON without insignificant space.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
