package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// TestLineSeparatorsEscapedInRawJSON pins that U+2028 and U+2029 reach the
// wire escaped also where raw JSON is copied (tool-call arguments streamed
// by a model, results, json.RawMessage through MarshalJSON), as they are in
// every string we encode.
func TestLineSeparatorsEscapedInRawJSON(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"{}":                               "{}",
		`{"a":"x` + "\u2028" + `y"}`:       `{"a":"x\u2028y"}`,
		`["` + "\u2029\u2028" + `"]`:       `["\u2029\u2028"]`,
		`"` + "\u2027—…\u202f" + `"`:       `"` + "\u2027—…\u202f" + `"`, // same prefix, other characters
		`"ends ` + "\u2028" + `"`:          `"ends \u2028"`,
		`{"k` + "\u2028" + `":"é☃\u2028"}`: `{"k\u2028":"é☃\u2028"}`,
	}
	for in, want := range cases {
		got := AppendRawJSON([]byte("x"), []byte(in))
		if string(got) != "x"+want {
			t.Errorf("AppendRawJSON(%q) = %q, want %q", in, got[1:], want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal(got[1:], &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%q: escaping changed the value: %v vs %v", in, a, b)
		}
	}
	if got, _ := MarshalJSON(struct {
		R json.RawMessage `json:"r"`
		S string          `json:"s"`
	}{json.RawMessage(`"a` + "\u2028" + `"`), "b\u2029"}); string(got) != `{"r":"a\u2028","s":"b\u2029"}` {
		t.Errorf("MarshalJSON = %s", got)
	}

	// A tool call streamed with a separator split across two deltas: the
	// partial snapshot, the final block, toolcall_end and the execution
	// events all write it escaped.
	p := newPartial(AssistantMessage{API: "fake", Provider: "fake", Model: "demo"})
	tc := p.startBlock(ContentBlock{Type: BlockToolCall, ID: "c1", Name: "bash", Arguments: []byte("{}")})
	sep := "\u2028"
	p.appendDelta(tc, `{"command":"echo a`+sep[:1])
	p.appendDelta(tc, sep[1:]+`b`)
	noRaw := func(stage string, b []byte) {
		t.Helper()
		if bytes.Contains(b, []byte("\u2028")) || !json.Valid(b) {
			t.Fatalf("%s: %s", stage, b)
		}
		if !bytes.Contains(b, []byte(`echo a\u2028b`)) {
			t.Fatalf("%s: escaped argument missing: %s", stage, b)
		}
	}
	noRaw("open tool call", p.AppendJSON(nil))
	p.endBlock(tc, "", []byte(`{"command": "echo a`+sep+`b"}`))
	noRaw("ended tool call", p.AppendJSON(nil))
	call := p.snapshot().Content[tc]
	noRaw("toolcall_end", MessageUpdate{Kind: UpdateToolCallEnd, ToolCall: &call}.AppendJSON(nil))
	msg, _ := p.snapshot().MarshalJSON()
	noRaw("message_end", MessageEnd{Message: p.snapshot()}.AppendJSON(nil))
	noRaw("message", msg)
	noRaw("tool_execution_start", ToolExecutionStart{ToolCallID: "c1", ToolName: "bash", Args: call.Arguments}.AppendJSON(nil))
	noRaw("tool_execution_update", ToolExecutionUpdate{ToolCallID: "c1", ToolName: "bash", Args: call.Arguments}.AppendJSON(nil))
}
