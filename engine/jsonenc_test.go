package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

func stdEncode(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []string{"", "plain", `quote " and \ backslash`, "<html> & more", "ctl \x00\x01\x1f \b\f\n\r\t",
		"unicode é ☃ 😀", "line\u2028sep\u2029", "bad \xff utf8 \xc3", "\x7f del"}
	for _, s := range cases {
		got := AppendJSONString(nil, s)
		want := stdEncode(t, s)
		if !bytes.Equal(got, want) {
			t.Errorf("%q: got %s want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello\n\"x\"\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONString(nil, s)
		want := stdEncode(t, s)
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1, 0.1, 0.0036, 1e-7, 3.75e-6, 123456789, 1e21, 1.5e300, -2.5} {
		got := appendFloat(nil, f)
		want := stdEncode(t, f)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: got %s want %s", f, got, want)
		}
	}
}

func TestPartialEncodingMatchesFinalMessage(t *testing.T) {
	t.Parallel()
	p := newPartial(AssistantMessage{API: "fake", Provider: "fake", Model: "demo", StopReason: StopStop, Timestamp: 42})
	th := p.startBlock(ContentBlock{Type: BlockThinking})
	for _, d := range []string{"let <me> ", "think \"hard\"\n"} {
		p.appendDelta(th, d)
	}
	check := func(stage string) {
		t.Helper()
		got := p.AppendJSON(nil)
		want, _ := p.snapshot().MarshalJSON()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", stage, got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("%s: invalid JSON %s", stage, got)
		}
	}
	check("open thinking")
	p.endBlock(th, "sig", nil)
	tx := p.startBlock(TextBlock(""))
	check("empty text")
	p.appendDelta(tx, "Hello ☃ ")
	p.appendDelta(tx, "world\u2028")
	check("open text")
	p.endBlock(tx, "", nil)
	tc := p.startBlock(ContentBlock{Type: BlockToolCall, ID: "c1", Name: "read", Arguments: []byte("{}")})
	p.appendDelta(tc, `{"path":"a.t`)
	check("open tool call")
	if got := string(p.msg.Content[tc].Arguments); got != `{"path":"a.t"}` {
		t.Fatalf("best-effort args = %s", got)
	}
	p.appendDelta(tc, `xt","n":`)
	check("dangling key")
	p.endBlock(tc, "", []byte(`{"path": "a.txt", "n": 3}`))
	p.setUsage(Usage{Input: 3, Output: 4, TotalTokens: 7})
	check("done")
}

func TestCompletePartialJSON(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{`:             `{}`,
		`{"a`:           `{}`,
		`{"a":`:         `{}`,
		`{"a":"x`:       `{"a":"x"}`,
		`{"a":"x\`:      `{"a":"x"}`,
		`{"a":"\u00`:    `{"a":""}`,
		`{"a":[1,2`:     `{"a":[1,2]}`,
		`{"a":{"b":1},`: `{"a":{"b":1}}`,
		`{"a":1,"b":tr`: `{"a":1}`,
		`{"a":1}`:       `{"a":1}`,
		`[`:             ``,
	}
	for in, want := range cases {
		got := string(completePartialJSON([]byte(in)))
		if got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestCleanSessionName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"  a  b ": "a b", "x\ty\nz": "x y z", "\x00\x1f": "", "ok": "ok"} {
		if got := CleanSessionName(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}
