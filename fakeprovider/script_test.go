package fakeprovider

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// turn1 wraps a step list in a one-turn script.
func turn1(steps string) string { return `{"turns":[{"steps":[` + steps + `]}]}` }

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const p = "fake script test.json: "
	tests := []struct {
		name, src, want string
	}{
		{"syntax", "{\n  \"turns\": [}", p + "invalid JSON at line 2, column 13: invalid character '}' looking for beginning of value"},
		{"truncated", `{"turns": [`, p + "invalid JSON at line 1, column 12: unexpected end of JSON input"},
		{"not an object", `[]`, p + "the script must be a JSON object, got an array"},
		{"unknown top key", `{"turns":[],"loops":true}`, p + `unknown key "loops" (want model, loop or turns)`},
		{"missing turns", `{}`, p + `missing "turns"`},
		{"turns not array", `{"turns":{}}`, p + `"turns" must be an array, got an object`},
		{"loop without turns", `{"loop":true,"turns":[]}`, p + `"loop" needs at least one turn`},
		{"loop not bool", `{"loop":1,"turns":[]}`, p + `"loop" must be a boolean, got a number`},
		{"null", `{"model":null,"turns":[]}`, p + `"model" must not be null`},
		{"duplicate", `{"turns":[],"turns":[]}`, p + `duplicate key "turns" in the script`},
		{"model unknown key", `{"model":{"idd":"x"},"turns":[]}`, p + `model: unknown key "idd" (want id, name, reasoning, contextWindow, maxTokens, minThinking, maxThinking or cost)`},
		{"cost unknown key", `{"model":{"cost":{"in":1}},"turns":[]}`, p + `model: cost: unknown key "in" (want input, output, cacheRead or cacheWrite)`},
		{"cost negative", `{"model":{"cost":{"output":-1}},"turns":[]}`, p + `model: cost: "output" must be a non-negative number, got -1`},
		{"cost not object", `{"model":{"cost":3},"turns":[]}`, p + `model: "cost" must be a JSON object, got a number`},
		{"model empty id", `{"model":{"id":""},"turns":[]}`, p + `model: "id" must not be empty`},
		{"model bad window", `{"model":{"contextWindow":-1},"turns":[]}`, p + `model: "contextWindow" must be a non-negative integer, got -1`},
		{"model fraction", `{"model":{"maxTokens":1.5},"turns":[]}`, p + `model: "maxTokens" must be a non-negative integer, got 1.5`},
		{"turn not object", `{"turns":["hi"]}`, p + "turn 1: a turn must be a JSON object, got a string"},
		{"turn unknown key", `{"turns":[{"step":[]}]}`, p + `turn 1: unknown key "step" (want expect, responseId, steps or stopReason)`},
		{"bad stopReason", `{"turns":[{},{"stopReason":"error"}]}`, p + `turn 2: bad stopReason "error" (want stop, length or toolUse)`},
		{"unknown kind", `{"turns":[{},{"steps":[{"sleep":5}]}]}`, p + `turn 2 step 1: unknown step kind "sleep" (want text, thinking, toolCall, usage, error, block or echo)`},
		{"no kind", turn1(`{"text":"a"},{"repeat":2}`), p + "turn 1 step 2: step has no kind (want one of text, thinking, toolCall, usage, error, block or echo)"},
		{"several kinds", turn1(`{"text":"a","thinking":"b"}`), p + "turn 1 step 1: step has several kinds (text, thinking); use one step each"},
		{"unknown key in step", turn1(`{"text":"a","delay":1}`), p + `turn 1 step 1: unknown key "delay" in a text step`},
		{"signature on text", turn1(`{"text":"a","signature":"s"}`), p + `turn 1 step 1: key "signature" is not allowed in a text step`},
		{"repeat on usage", turn1(`{"usage":{},"repeat":2}`), p + `turn 1 step 1: key "repeat" is not allowed in a usage step`},
		{"argDeltas on text", turn1(`{"text":"a","argDeltas":["{}"]}`), p + `turn 1 step 1: key "argDeltas" is not allowed in a text step`},
		{"step not object", turn1(`"text"`), p + "turn 1 step 1: a step must be a JSON object, got a string"},
		{"text number", turn1(`{"text":5}`), p + `turn 1 step 1: "text" must be a string or an array of strings, got a number`},
		{"text array of numbers", turn1(`{"thinking":["a",1]}`), p + `turn 1 step 1: "thinking[1]" must be a string, got a number`},
		{"repeat zero", turn1(`{"text":"a","repeat":0}`), p + `turn 1 step 1: "repeat" must be at least 1`},
		{"repeat negative", turn1(`{"text":"a","repeat":-3}`), p + `turn 1 step 1: "repeat" must be a non-negative integer, got -3`},
		{"tool without name", turn1(`{"toolCall":{"id":"c"}}`), p + `turn 1 step 1: "toolCall" needs a non-empty "name"`},
		{"tool unknown key", turn1(`{"toolCall":{"name":"read","args":{}}}`), p + `turn 1 step 1: unknown key "args" in "toolCall" (want id, name or arguments)`},
		{"tool arguments array", turn1(`{"toolCall":{"name":"read","arguments":[1]}}`), p + `turn 1 step 1: "arguments" must be a JSON object, got an array`},
		{"argDeltas not json", turn1(`{"toolCall":{"name":"read"},"argDeltas":["{\"path\":","\"a"]}`), p + `turn 1 step 1: "argDeltas" must concatenate to a JSON object, got "{\"path\":\"a"`},
		{"argDeltas not object", turn1(`{"toolCall":{"name":"read"},"argDeltas":["[1]"]}`), p + `turn 1 step 1: "argDeltas" must concatenate to a JSON object, got "[1]"`},
		{"argDeltas empty", turn1(`{"toolCall":{"name":"read"},"argDeltas":[]}`), p + `turn 1 step 1: "argDeltas" must concatenate to a JSON object, got ""`},
		{"argDeltas string", turn1(`{"toolCall":{"name":"read"},"argDeltas":"{}"}`), p + `turn 1 step 1: "argDeltas" must be an array of strings, got a string`},
		{"argDeltas mismatch", turn1(`{"toolCall":{"name":"read","arguments":{"path":"a"}},"argDeltas":["{\"path\":\"b\"}"]}`),
			p + `turn 1 step 1: "argDeltas" concatenate to {"path":"b"} but "arguments" is {"path":"a"}`},
		{"cut without argDeltas", turn1(`{"toolCall":{"name":"bash"},"cut":true}`), p + `turn 1 step 1: "cut" needs "argDeltas": the arguments as far as they got`},
		{"cut with arguments", turn1(`{"toolCall":{"name":"bash","arguments":{}},"argDeltas":["{"],"cut":true}`), p + `turn 1 step 1: "cut" and "arguments" exclude each other: a cut call has no final arguments`},
		{"cut but complete", turn1(`{"toolCall":{"name":"bash"},"argDeltas":["{}"],"cut":true}`), p + `turn 1 step 1: "cut" needs "argDeltas" that stop short of a JSON object, got "{}"`},
		{"cut false", turn1(`{"toolCall":{"name":"bash"},"argDeltas":["{"],"cut":false}`), p + `turn 1 step 1: "cut" must be true`},
		{"cut on text", turn1(`{"text":"a","cut":true}`), p + `turn 1 step 1: key "cut" is not allowed in a text step`},
		{"usage unknown key", turn1(`{"usage":{"inputTokens":1}}`), p + `turn 1 step 1: unknown key "inputTokens" in "usage" (want input, output, cacheRead, cacheWrite or totalTokens)`},
		{"usage negative", turn1(`{"usage":{"output":-1}}`), p + `turn 1 step 1: "output" must be a non-negative integer, got -1`},
		{"error without message", turn1(`{"error":{"status":500}}`), p + `turn 1 step 1: "error" needs a non-empty "message"`},
		{"error unknown key", turn1(`{"error":{"code":500,"message":"x"}}`), p + `turn 1 step 1: unknown key "code" in "error" (want status, message or retryAfterMs)`},
		{"block false", turn1(`{"block":false}`), p + `turn 1 step 1: "block" must be true`},
		{"expect unknown key", `{"turns":[{"expect":{"lastUser":"hi"}}]}`, p + `turn 1: expect: unknown key "lastUser" (want lastUserText, lastUserTextContains, systemPromptContains, toolsOffered, toolsAbsent, messageCount, lastRole, contextContains or thinkingLevel)`},
		{"expect bad level", `{"turns":[{"expect":{"thinkingLevel":"max"}}]}`, p + `turn 1: expect: bad "thinkingLevel" "max" (want "", off, minimal, low, medium, high or xhigh)`},
		{"expect bad count", `{"turns":[{"expect":{"messageCount":"2"}}]}`, p + `turn 1: expect: "messageCount" must be a non-negative integer, got a string`},
		{"expect tools number", `{"turns":[{"expect":{"toolsOffered":[1]}}]}`, p + `turn 1: expect: "toolsOffered[0]" must be a string, got a number`},
		{"expect empty role", `{"turns":[{"expect":{"lastRole":""}}]}`, p + `turn 1: expect: "lastRole" must not be empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse("test.json", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded (%d turns), want error %q", len(s.turns), tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got  %s\n want %s", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidScript) {
				t.Errorf("errors.Is(err, ErrInvalidScript) = false")
			}
			var se *ScriptError
			if !errors.As(err, &se) || se.Name != "test.json" {
				t.Errorf("error is not a *ScriptError naming the script: %#v", err)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src string }{
		{"no turns", `{"turns":[]}`},
		{"empty turn", `{"turns":[{}]}`},
		{"empty text", turn1(`{"text":""},{"thinking":[]}`)},
		{"full", `{"model":{"id":"m","name":"M","reasoning":false,"contextWindow":1,"maxTokens":2},"loop":true,
			"turns":[{"expect":{"lastUserText":"","lastUserTextContains":["a","b"],"systemPromptContains":"x",
			"toolsOffered":"read","toolsAbsent":["bash"],"messageCount":0,"lastRole":"user","contextContains":"y",
			"thinkingLevel":""},"responseId":"r","stopReason":"length","steps":[{"thinking":"a b","signature":"s","repeat":2},
			{"toolCall":{"name":"n"}},{"usage":{"input":1,"totalTokens":9}},{"error":{"status":0,"message":"m"}}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := Parse("x.json", []byte(tt.src)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestModel(t *testing.T) {
	t.Parallel()
	def := engine.Model{ID: "stream", Name: "Fake stream", API: "fake", Provider: "fake", Reasoning: true,
		Input: []string{"text", "image"}, ContextWindow: 128000, MaxTokens: 16384,
		Thinking: &engine.ModelThinking{MinLevel: "minimal", MaxLevel: "xhigh", Mode: "effort"}}
	tests := []struct {
		name, file, src string
		want            func(engine.Model) engine.Model
	}{
		{"default id from base name", "some/dir/stream.json", `{"turns":[]}`, func(m engine.Model) engine.Model { return m }},
		{"id without name", "stream.json", `{"model":{"id":"other"},"turns":[]}`, func(m engine.Model) engine.Model {
			m.ID, m.Name = "other", "Fake other"
			return m
		}},
		{"every override", "stream.json", `{"model":{"name":"N","id":"i","reasoning":false,"contextWindow":10,"maxTokens":5},"turns":[]}`,
			func(m engine.Model) engine.Model {
				m.ID, m.Name, m.Reasoning, m.ContextWindow, m.MaxTokens, m.Thinking = "i", "N", false, 10, 5, nil
				return m
			}},
		{"prices", "stream.json", `{"model":{"cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75}},"turns":[]}`,
			func(m engine.Model) engine.Model {
				m.Cost = engine.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
				return m
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.file, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			assertModel(t, New(s).Model(), tt.want(def))
		})
	}
	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		want := def
		want.ID, want.Name = "demo", "Fake demo"
		assertModel(t, Demo().Model(), want)
	})
	t.Run("copy", func(t *testing.T) {
		t.Parallel()
		p := Demo()
		m := p.Model()
		m.Input[0] = "audio"
		m.Thinking.MaxLevel = "low"
		if got := p.Model(); got.Input[0] != "text" || got.Thinking.MaxLevel != "xhigh" {
			t.Errorf("Model() shares state with an earlier result: %+v", got)
		}
	})
}

func assertModel(t *testing.T, got, want engine.Model) {
	t.Helper()
	g, w := got, want
	if (g.Thinking == nil) != (w.Thinking == nil) || (g.Thinking != nil && *g.Thinking != *w.Thinking) {
		t.Errorf("Thinking = %+v, want %+v", g.Thinking, w.Thinking)
	}
	if strings.Join(g.Input, ",") != strings.Join(w.Input, ",") {
		t.Errorf("Input = %v, want %v", g.Input, w.Input)
	}
	g.Thinking, w.Thinking, g.Input, w.Input = nil, nil, nil, nil
	if g.ID != w.ID || g.Name != w.Name || g.API != w.API || g.Provider != w.Provider || g.BaseURL != w.BaseURL ||
		g.Reasoning != w.Reasoning || g.ContextWindow != w.ContextWindow || g.MaxTokens != w.MaxTokens || g.Cost != w.Cost {
		t.Errorf("Model() =\n %+v\nwant\n %+v", g, w)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "hello.v2.json")
	if err := os.WriteFile(good, []byte(`{"turns":[{"steps":[{"text":"hi"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"turns":[{"steps":[{"nope":1}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		s, err := Load(good)
		if err != nil {
			t.Fatal(err)
		}
		if id := New(s).Model().ID; id != "hello.v2" {
			t.Errorf("model id = %q, want %q", id, "hello.v2")
		}
	})
	t.Run("bad step", func(t *testing.T) {
		t.Parallel()
		_, err := Load(bad)
		want := "fake script " + bad + `: turn 1 step 1: unknown step kind "nope" (want text, thinking, toolCall, usage, error, block or echo)`
		if err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		missing := filepath.Join(dir, "missing.json")
		_, err := Load(missing)
		want := "fake script " + missing + ": no such file or directory"
		if err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v, want %s (and fs.ErrNotExist)", err, want)
		}
	})
}
