package main

import (
	"context"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
)

// TestMuxServesEveryAPI: the APIs the registry lets a models file name are
// exactly those the mux routes to an adapter, and a model from elsewhere
// (a session file) with another API fails naming the APIs that work.
func TestMuxServesEveryAPI(t *testing.T) {
	reg, err := models.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(reg)
	seen := map[engine.Provider]string{}
	for _, api := range supportedAPIs() {
		p := m.adapterFor(engine.Model{API: api, Provider: "p"})
		if p == nil {
			t.Errorf("API %s has no adapter", api)
		}
		seen[p] = api
	}
	if len(m.byAPI) != len(supportedAPIs()) {
		t.Errorf("the mux routes %d APIs, the list has %d", len(m.byAPI), len(supportedAPIs()))
	}
	// The implicit Ollama provider's API (the original's openai-responses)
	// means the native adapter; another API named for it is that API's.
	for api, want := range map[string]string{"openai-responses": "ollama", "": "ollama", "openai-completions": "openai-completions"} {
		if p := m.adapterFor(engine.Model{API: api, Provider: "ollama"}); seen[p] != want {
			t.Errorf("an ollama model with api %q goes to the %s adapter, want %s", api, seen[p], want)
		}
	}

	err = m.Stream(context.Background(), &engine.Request{Model: engine.Model{API: "google-generative-ai", Provider: "g", ID: "gemini"}},
		func(engine.StreamEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `no adapter for API "google-generative-ai" (model g/gemini) in this build; the APIs that work: openai-completions, openai-responses,`) {
		t.Errorf("unknown API: %v", err)
	}

	// The fake API answers without --provider fake: the demo model.
	var done bool
	err = m.Stream(context.Background(), &engine.Request{Model: engine.Model{API: "fake", Provider: "lab", ID: "m"},
		Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}},
		func(ev engine.StreamEvent) error {
			done = done || ev.Kind == engine.StreamDone
			return nil
		})
	if err != nil || !done {
		t.Errorf("fake API: err %v, done %v", err, done)
	}
}
