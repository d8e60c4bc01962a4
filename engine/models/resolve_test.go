package models

import (
	"reflect"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

const resolveYAML = `providers:
  openrouter:
    baseUrl: https://openrouter.ai/api/v1
    api: openai-completions
    apiKey: OPENROUTER_API_KEY
    models:
      - id: anthropic/claude-sonnet-4-5
      - id: z-ai/glm-4.6
  local:
    baseUrl: http://127.0.0.1:8080/v1
    api: openai-completions
    auth: none
    models:
      - id: llama3.1:8b
      - id: router:high
      - id: claude-3-7-sonnet-20250219
        name: Old Sonnet
      - id: claude-3-7-sonnet-20250101
`

func TestResolve(t *testing.T) {
	r := load(t, envOf(), map[string]string{"models.yml": resolveYAML})
	tests := []struct {
		pattern, want string // want "" = no match
	}{
		{"anthropic/claude-opus-4-5", "anthropic/claude-opus-4-5"},
		{"Anthropic/Claude-Opus-4-5", "anthropic/claude-opus-4-5"},
		{"gpt-5", "openai/gpt-5"},
		{"GPT-5-MINI", "openai/gpt-5-mini"},
		// An id with a slash is an id before it is provider/id.
		{"anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"openrouter/anthropic/claude-sonnet-4-5", "openrouter/anthropic/claude-sonnet-4-5"},
		{"z-ai/glm-4.6", "openrouter/z-ai/glm-4.6"},
		// provider/part within a known provider.
		{"openai/mini", "openai/gpt-5-mini"},
		{"openai/nothing-like-it", ""},
		// Substring: the first alias in registry order.
		{"opus", "anthropic/claude-opus-5-5"},
		{"sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"llama3.1", "local/llama3.1:8b"},
		// By name.
		{"old sonnet", "local/claude-3-7-sonnet-20250219"},
		// Only dated matches: the latest date.
		{"claude-3-7", "local/claude-3-7-sonnet-20250219"},
		{"router:high", "local/router:high"},
		{"", ""},
		{"no-such-model", ""},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			m, ok := r.Resolve(tt.pattern)
			got := ""
			if ok {
				got = m.Provider + "/" + m.ID
			}
			if got != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestResolveThinking(t *testing.T) {
	r := load(t, envOf(), map[string]string{"models.yml": resolveYAML})
	tests := []struct {
		pattern, want string
		level         engine.ThinkingLevel
	}{
		{"claude-opus-4-5:high", "anthropic/claude-opus-4-5", "high"},
		{"anthropic/claude-opus-4-5:off", "anthropic/claude-opus-4-5", "off"},
		{"sonnet-4-5:low", "anthropic/claude-sonnet-4-5", "low"},
		{"llama3.1:8b", "local/llama3.1:8b", ""}, // not a level: part of the id
		{"router:high", "local/router:high", ""}, // the literal id wins
		{"gpt-5:max", "", ""},                    // not a level, and no such id
		{"gpt-5", "openai/gpt-5", ""},
	}
	for _, tt := range tests {
		m, level, ok := r.ResolveThinking(tt.pattern)
		got := ""
		if ok {
			got = m.Provider + "/" + m.ID
		}
		if got != tt.want || level != tt.level {
			t.Errorf("ResolveThinking(%q) = %q %q, want %q %q", tt.pattern, got, level, tt.want, tt.level)
		}
	}
}

func TestSplitThinking(t *testing.T) {
	for in, want := range map[string][2]string{
		"a:high":      {"a", "high"},
		"a:b:xhigh":   {"a:b", "xhigh"},
		"a:off":       {"a", "off"},
		"a:inherit":   {"a:inherit", ""},
		"llama3.1:8b": {"llama3.1:8b", ""},
		":high":       {":high", ""},
		"plain":       {"plain", ""},
	} {
		base, level := SplitThinking(in)
		if base != want[0] || string(level) != want[1] {
			t.Errorf("SplitThinking(%q) = %q %q, want %q", in, base, level, want)
		}
	}
}

func TestScopedModels(t *testing.T) {
	env := envOf("ANTHROPIC_API_KEY", "a")
	r := load(t, env, map[string]string{"models.yml": resolveYAML})
	type sc struct{ id, level string }
	tests := []struct {
		name     string
		patterns []string
		want     []sc
	}{
		{"exact with levels", []string{"anthropic/claude-opus-4-5:high", "claude-haiku-4-5"},
			[]sc{{"anthropic/claude-opus-4-5", "high"}, {"anthropic/claude-haiku-4-5", ""}}},
		{"glob on provider/id", []string{"anthropic/claude-opus-*"},
			[]sc{{"anthropic/claude-opus-5-5", ""}, {"anthropic/claude-opus-4-6", ""}, {"anthropic/claude-opus-4-5", ""}, {"anthropic/claude-opus-4-1", ""}}},
		{"glob on id with level, clamped", []string{"claude-sonnet-*:xhigh"},
			// sonnet 5.5 is adaptive up to high; sonnet 4.5 takes xhigh.
			[]sc{{"anthropic/claude-sonnet-5-5", "high"}, {"anthropic/claude-sonnet-4-5", "xhigh"}}},
		{"non-reasoning model drops the level", []string{"local/llama3.1:8b:high"}, []sc{{"local/llama3.1:8b", ""}}},
		{"first pattern wins, no duplicates", []string{"claude-haiku-4-5:low", "anthropic/*"},
			[]sc{{"anthropic/claude-haiku-4-5", "low"}, {"anthropic/claude-opus-5-5", ""}, {"anthropic/claude-sonnet-5-5", ""},
				{"anthropic/claude-opus-4-6", ""}, {"anthropic/claude-opus-4-5", ""}, {"anthropic/claude-opus-4-1", ""}, {"anthropic/claude-sonnet-4-5", ""}}},
		{"models without a key are out of scope", []string{"gpt-5", "openai/*", "openrouter/*", "local/router:high"},
			[]sc{{"local/router:high", ""}}},
		{"case-insensitive glob", []string{"LOCAL/LLAMA*"}, []sc{{"local/llama3.1:8b", ""}}},
		{"nothing", []string{"", "nope*", "nope"}, []sc{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []sc{}
			for _, s := range r.ScopedModels(tt.patterns) {
				got = append(got, sc{s.Model.Provider + "/" + s.Model.ID, string(s.Thinking)})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}
