package models

import (
	"reflect"
	"strings"
	"testing"
)

// fastJSON gives the nodes the token reader gives, lines included, on
// valid documents, and gives up on invalid ones (the token reader then
// words the error).
func TestFastJSONMatchesTokens(t *testing.T) {
	t.Parallel()
	valid := []string{
		`{}`, `[]`, `"s"`, `0`, `-1.5e+10`, `true`, `null`,
		"{\n  \"providers\": {\n    \"p\": {\"baseUrl\": \"http://x\",\n      \"models\": [\n        {\"id\": \"a\", \"cost\": {\"input\": 0.5}}\n      ]\n    }\n  }\n}\n",
		`{"a": 1, "a": 2, "b": [true, false, null, "x\u00e9\n\"q\"", 1e3]}`,
		"\t{ \"dup\" : {\"x\":1},\r\n \"dup\":\n{\"y\": [ ] } }  ",
		`{"bad utf8": "` + "\xff" + `", "surrogate": "\ud83d\ude00", "lone": "\ud800"}`,
		manyModels(50, 7),
	}
	for _, doc := range valid {
		fast, ok := fastJSON([]byte(doc))
		slow, err := slowJSON("f", []byte(doc))
		if !ok || err != nil {
			t.Errorf("%.60q: fast ok %v, slow %v", doc, ok, err)
			continue
		}
		if !reflect.DeepEqual(strip(fast), strip(slow)) {
			t.Errorf("%.60q: nodes differ\nfast %s\nslow %s", doc, fast.toJSON(), slow.toJSON())
		}
	}
	invalid := []string{"", " ", "{", `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `"a` + "\n" + `"`, `{} {}`,
		"\xef\xbb\xbf{}", `{"a":tru}`, `[1 2]`, `"\x"`, strings.Repeat("[", 10002)}
	for _, doc := range invalid {
		if _, ok := fastJSON([]byte(doc)); ok {
			t.Errorf("%.40q accepted", doc)
		}
		if _, err := parseJSON("f", []byte(doc)); err == nil {
			t.Errorf("%.40q: no error", doc)
		}
	}
}

// strip drops the index (a cache, built on the same keys either way).
func strip(n *node) *node {
	if n == nil {
		return nil
	}
	c := *n
	c.index = nil
	c.vals = make([]*node, len(n.vals))
	for i, v := range n.vals {
		c.vals[i] = strip(v)
	}
	c.items = make([]*node, len(n.items))
	for i, v := range n.items {
		c.items[i] = strip(v)
	}
	return &c
}
