package models

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func lv(s ...engine.ThinkingLevel) []engine.ThinkingLevel { return s }

const (
	mi = engine.ThinkingMinimal
	lo = engine.ThinkingLow
	me = engine.ThinkingMedium
	hi = engine.ThinkingHigh
	xh = engine.ThinkingXHigh
)

func rm(id, api string, th *engine.ModelThinking) engine.Model {
	return engine.Model{ID: id, API: api, Provider: "p", Reasoning: true, Thinking: th}
}

func TestSupportedEfforts(t *testing.T) {
	full := thinking(mi, xh, modeEffort)
	tests := []struct {
		name string
		m    engine.Model
		want []engine.ThinkingLevel
	}{
		{"non-reasoning", engine.Model{ID: "gpt-4.1", API: "openai-completions"}, nil},
		{"gpt-5", rm("gpt-5", "openai-completions", full), lv(mi, lo, me, hi)},
		{"gpt-5-mini variant", rm("gpt-5-mini", "openai-completions", full), lv(mi, lo, me, hi)},
		{"gpt-5.2", rm("gpt-5.2", "openai-responses", full), lv(lo, me, hi, xh)},
		{"gpt-6", rm("gpt-6", "openai-responses", full), lv(lo, me, hi, xh)},
		{"gpt-5.1-codex-mini", rm("gpt-5.1-codex-mini", "openai-responses", full), lv(me, hi)},
		{"aggregator prefix", rm("openai/gpt-5.2", "openai-completions", full), lv(lo, me, hi, xh)},
		{"gemini 2.5", rm("gemini-2.5-pro", "google-generative-ai", full), lv(mi, lo, me, hi)},
		{"gemini 3 pro", rm("gemini-3-pro-preview", "google-generative-ai", full), lv(lo, hi)},
		{"gemini 3 flash", rm("gemini-3-flash-preview", "google-generative-ai", full), lv(mi, lo, me, hi)},
		{"opus 4.6", rm("claude-opus-4-6", "anthropic-messages", full), lv(mi, lo, me, hi, xh)},
		{"sonnet 4.6", rm("claude-sonnet-4-6", "anthropic-messages", full), lv(mi, lo, me, hi)},
		{"sonnet 5.5", rm("claude-sonnet-5-5", "anthropic-messages", full), lv(mi, lo, me, hi)},
		{"opus 5", rm("claude-opus-5", "anthropic-messages", full), lv(mi, lo, me, hi, xh)},
		{"bedrock opus 4.6", rm("anthropic.claude-opus-4-6-v1:0", "bedrock-converse-stream", full), lv(mi, lo, me, hi, xh)},
		{"opus 4.5 falls back to the API", rm("claude-opus-4-5", "anthropic-messages", full), lv(mi, lo, me, hi, xh)},
		{"dated sonnet 4.5 on bedrock", rm("claude-sonnet-4-5-20250929", "bedrock-converse-stream", full), lv(mi, lo, me, hi)},
		{"opus 4.6 elsewhere falls back", rm("claude-opus-4-6", "openai-completions", full), lv(mi, lo, me, hi)},
		{"haiku keeps its range", rm("claude-haiku-4-5", "anthropic-messages", thinking(lo, me, modeAnthropicBudget)), lv(lo, me)},
		{"local model keeps its range", rm("qwen3:8b", "openai-completions", thinking(lo, hi, modeEffort)), lv(lo, me, hi)},
		{"range narrows a family", rm("gpt-5.2", "openai-responses", thinking(mi, me, modeEffort)), lv(lo, me)},
		{"disjoint range wins", rm("gemini-3-pro", "google-generative-ai", thinking(me, me, modeGoogleLevel)), lv(me)},
		{"no metadata: family", rm("gemini-3-pro", "google-generative-ai", nil), lv(lo, hi)},
		{"no metadata: API fallback", rm("llama3", "openai-responses", nil), lv(mi, lo, me, hi, xh)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SupportedEfforts(tt.m); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAPIFallbackCompat(t *testing.T) {
	m := rm("my-model", "openai-completions", nil)
	if got := apiEfforts(m); got[len(got)-1] != hi {
		t.Errorf("plain completions: %v", got)
	}
	m.Compat = json.RawMessage(`{"thinkingFormat":"openai","supportsReasoningEffort":true}`)
	if got := apiEfforts(m); got[len(got)-1] != xh {
		t.Errorf("openai format with effort: %v", got)
	}
	m.Compat = json.RawMessage(`{"thinkingFormat":"qwen","supportsReasoningEffort":true}`)
	if got := apiEfforts(m); got[len(got)-1] != hi {
		t.Errorf("qwen format: %v", got)
	}
	for api, want := range map[string]engine.ThinkingLevel{"bedrock-converse-stream": hi, "openai-codex-responses": xh, "google-generative-ai": hi} {
		if got := apiEfforts(rm("x", api, nil)); got[len(got)-1] != want {
			t.Errorf("%s: %v", api, got)
		}
	}
}

func TestClampThinking(t *testing.T) {
	pro := rm("gemini-3-pro-preview", "google-generative-ai", thinking(lo, hi, modeGoogleLevel))
	gpt := rm("gpt-5.2", "openai-responses", thinking(lo, xh, modeEffort))
	plain := engine.Model{ID: "gpt-4.1"}
	tests := []struct {
		m    engine.Model
		in   engine.ThinkingLevel
		want engine.ThinkingLevel
	}{
		{pro, me, lo}, // a hole: down to the highest supported below
		{pro, mi, lo}, // nothing below: up to the lowest
		{pro, xh, hi},
		{pro, hi, hi},
		{pro, engine.ThinkingOff, engine.ThinkingOff},
		{pro, "inherit", ""},
		{pro, "bogus", ""},
		{gpt, mi, lo},
		{gpt, xh, xh},
		{plain, hi, ""},
		{plain, engine.ThinkingOff, engine.ThinkingOff},
	}
	for _, tt := range tests {
		if got := ClampThinking(tt.m, tt.in); got != tt.want {
			t.Errorf("ClampThinking(%s, %q) = %q, want %q", tt.m.ID, tt.in, got, tt.want)
		}
	}
	// Where the family adds nothing, we agree with the engine.
	for _, m := range catalog {
		for _, l := range append(lv(engine.ThinkingOff, "x"), efforts...) {
			if got, want := ClampThinking(m, l), engine.ClampThinking(m, l); got != want {
				t.Errorf("%s %q: models %q, engine %q", m.ID, l, got, want)
			}
		}
	}
}

func TestInferThinking(t *testing.T) {
	tests := []struct {
		id, api string
		want    engine.ModelThinking
	}{
		{"claude-opus-4-6", "anthropic-messages", engine.ModelThinking{MinLevel: mi, MaxLevel: xh, Mode: modeAnthropicAdapt}},
		{"claude-sonnet-4-5", "anthropic-messages", engine.ModelThinking{MinLevel: mi, MaxLevel: xh, Mode: modeAnthropicBudget}},
		{"claude-sonnet-4-5", "bedrock-converse-stream", engine.ModelThinking{MinLevel: mi, MaxLevel: hi, Mode: modeBudget}},
		{"gemini-3-pro-preview", "google-generative-ai", engine.ModelThinking{MinLevel: lo, MaxLevel: hi, Mode: modeGoogleLevel}},
		{"gemini-2.5-flash", "google-vertex", engine.ModelThinking{MinLevel: mi, MaxLevel: hi, Mode: modeBudget}},
		{"qwen3-coder", "openai-completions", engine.ModelThinking{MinLevel: mi, MaxLevel: hi, Mode: modeEffort}},
	}
	for _, tt := range tests {
		if got := inferThinking(rm(tt.id, tt.api, nil)); *got != tt.want {
			t.Errorf("%s on %s: %+v, want %+v", tt.id, tt.api, *got, tt.want)
		}
	}
}
