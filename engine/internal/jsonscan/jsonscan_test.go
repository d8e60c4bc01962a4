package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"
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
		s := New([]byte(q), nil)
		if got := s.Str(); s.Failed() || got != want {
			t.Errorf("%s: got %q (fail %v), want %q", q, got, s.Failed(), want)
		}
	}
}

// Skip accepts exactly what json.Valid does.
func TestSkipValid(t *testing.T) {
	t.Parallel()
	for _, v := range []string{`1`, `-0.5e+3`, `01`, `1.`, `.5`, `-`, `1e`, `"a`, `"\x"`, `"\u12"`, `[1,2]`, `[1,,2]`,
		`[1,2,]`, `{"a":1}`, `{"a" : [ true , false , null ] }`, `{"a":1,}`, `{a:1}`, `{"a"}`, `tru`, `nulls`, `[`, `{`,
		`[[[]]]`, "\"\x01\"", `{"a":{"b":{"c":"d"}}}`, `[] `, ` []`} {
		s := New([]byte(v), nil)
		s.Skip()
		got := !s.Failed() && s.Pos() == len(v)
		if want := json.Valid([]byte(v)) && strings.TrimSpace(v) == v; got != want {
			t.Errorf("skip(%q) ok = %v, json.Valid %v", v, got, want)
		}
	}
}

// The readers give what encoding/json gives for what they accept, and
// fail, stickily, on what it would not decode into their type.
func TestReaders(t *testing.T) {
	t.Parallel()
	s := New([]byte(` {"a" : [ 1 , {"b":null} ],"n":-12,"f":2.5e3,"t":true,"s":"x\u00e9"} `), nil)
	if !s.Open('{') || string(s.Key()) != "a" {
		t.Fatal("object start")
	}
	if got := string(s.Raw()); got != `[1,{"b":null}]` {
		t.Fatalf("Raw compacts: got %s", got)
	}
	var n int64
	var f float64
	var b bool
	var str string
	for s.Next('}') {
		switch string(s.Key()) {
		case "n":
			n = s.Int()
		case "f":
			f = s.Float()
		case "t":
			b = s.Bool()
		case "s":
			str = s.Str()
		}
	}
	if !s.End() || n != -12 || f != 2500 || !b || str != "xé" {
		t.Fatalf("got n=%d f=%v t=%v s=%q end=%v", n, f, b, str, s.End())
	}

	for _, bad := range []string{`1.5`, `1e2`, `99999999999999999999`, `"1"`} {
		s := New([]byte(bad), nil)
		if s.Int(); !s.Failed() || s.Str() != "" || s.Pos() != len(bad) {
			t.Errorf("Int(%s) did not fail stickily", bad)
		}
	}
	if s := New([]byte(`{"\u0061":1}`), nil); s.Open('{') && s.Key() != nil || !s.Failed() {
		t.Error("an escaped key is not read")
	}
}

// Consume and HasPrefix look at the text as it is, without whitespace and
// without failing; SetPos goes back to a position Pos gave.
func TestConsumeAndPositions(t *testing.T) {
	t.Parallel()
	s := New([]byte(`{"role":"user"} `), nil)
	start := s.Pos()
	if s.HasPrefix(`{"role":"x`) || !s.HasPrefix(`{"role":"`) || s.Pos() != start {
		t.Fatal("HasPrefix moved or mismatched")
	}
	if s.Consume(` {`) || !s.Consume(`{"role":`) || s.Str() != "user" || s.Failed() {
		t.Fatal("Consume")
	}
	s.SetPos(start)
	if s.Skip(); string(s.Since(start)) != `{"role":"user"}` || !s.End() {
		t.Fatalf("Since after Skip: %s", s.Since(start))
	}
	if s.Consume("x") || s.HasPrefix("xyz") {
		t.Fatal("Consume past the end")
	}
}

// IStr interns short strings in the map New was given, up to its bound.
func TestIStrInterns(t *testing.T) {
	t.Parallel()
	strs := map[string]string{}
	s := New([]byte(`["openai","openai"]`), strs)
	s.Open('[')
	a := s.IStr()
	s.Next(']')
	b := s.IStr()
	if a != "openai" || b != "openai" || len(strs) != 1 || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatalf("not interned: %q %q %v", a, b, strs)
	}
}
