package main

import (
	"encoding/json"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
)

// TestLocalDefault: with no model named and no key, the session takes the
// first model of a running local server in a stable order (discovery
// order of the providers, then the server's), preferring one that can call
// tools when tools are on, whatever order the discoveries finished in.
func TestLocalDefault(t *testing.T) {
	noTools := json.RawMessage(`{"tools":false}`)
	for _, tc := range []struct {
		name   string
		add    []engine.Model
		tools  bool
		want   string
		wantOK bool
	}{
		{"nothing found", nil, true, "", false},
		{"tools on: the first that calls tools", []engine.Model{
			{ID: "tiny:latest", Provider: "ollama", API: "ollama", Compat: noTools},
			{ID: "tiny-tools:latest", Provider: "ollama", API: "ollama"}}, true, "ollama/tiny-tools:latest", true},
		{"tools off: the first", []engine.Model{
			{ID: "tiny:latest", Provider: "ollama", API: "ollama", Compat: noTools},
			{ID: "tiny-tools:latest", Provider: "ollama", API: "ollama"}}, false, "ollama/tiny:latest", true},
		{"none calls tools: the first anyway", []engine.Model{
			{ID: "tiny:latest", Provider: "ollama", API: "ollama", Compat: noTools}}, true, "ollama/tiny:latest", true},
		// LM Studio answered first: Ollama still comes first.
		{"providers in discovery order", []engine.Model{
			{ID: "qwen/qwen3-4b", Provider: "lm-studio", API: "openai-completions"},
			{ID: "local.gguf", Provider: "llama.cpp", API: "openai-completions"},
			{ID: "qwen3:8b", Provider: "ollama", API: "ollama"}}, true, "ollama/qwen3:8b", true},
		{"a model with tools on a later server wins", []engine.Model{
			{ID: "qwen/qwen3-4b", Provider: "lm-studio", API: "openai-completions"},
			{ID: "tiny:latest", Provider: "ollama", API: "ollama", Compat: noTools}}, true, "lm-studio/qwen/qwen3-4b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := models.Load("", nil)
			if err != nil {
				t.Fatal(err)
			}
			reg.Add(tc.add...)
			m, ok := localDefault(reg, tc.tools)
			if got := m.Provider + "/" + m.ID; ok != tc.wantOK || (ok && got != tc.want) {
				t.Errorf("localDefault = %s, %v; want %s, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
