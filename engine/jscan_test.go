package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// unquote matches encoding/json on escapes, surrogates and bad UTF-8.
func TestUnquote(t *testing.T) {
	t.Parallel()
	for _, q := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`,
		`"\ud83d\ud83d\ude00"`, `"\u00e9\u20ac\uFFFF\uD7FF\uE000"`, "\"\xff\xfe a \xe2\x82 \xed\xa0\x80\"",
		`"\"\\\/\b\f\n\r\t"`, "\"\u2028 é 😀\"", `""`} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatal(err)
		}
		s := jscan{b: []byte(q)}
		if got := s.str(); s.fail || got != want {
			t.Errorf("%s: got %q (fail %v), want %q", q, got, s.fail, want)
		}
	}
}

// The skipper accepts exactly what json.Valid does.
func TestSkipValid(t *testing.T) {
	t.Parallel()
	for _, v := range []string{`1`, `-0.5e+3`, `01`, `1.`, `.5`, `-`, `1e`, `"a`, `"\x"`, `"\u12"`, `[1,2]`, `[1,,2]`,
		`[1,2,]`, `{"a":1}`, `{"a" : [ true , false , null ] }`, `{"a":1,}`, `{a:1}`, `{"a"}`, `tru`, `nulls`, `[`, `{`,
		`[[[]]]`, "\"\x01\"", `{"a":{"b":{"c":"d"}}}`, `[] `, ` []`} {
		s := jscan{b: []byte(v)}
		s.skip()
		got := !s.fail && s.i == len(s.b)
		if want := json.Valid([]byte(v)) && strings.TrimSpace(v) == v; got != want {
			t.Errorf("skip(%q) ok = %v, json.Valid %v", v, got, want)
		}
	}
}
