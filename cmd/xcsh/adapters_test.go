package main

import (
	"context"
	"errors"
	"net"
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

	err = m.Stream(context.Background(), &engine.Request{Model: engine.Model{API: "google-vertex", Provider: "g", ID: "gemini"}},
		func(engine.StreamEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `no adapter for API "google-vertex" (model g/gemini) in this build; the APIs that work: openai-completions, openai-responses,`) {
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

// TestLocalServerDown: a chat-completions server on this machine that is
// not running fails at once with what to do (no retry: ErrorNoServer);
// another failure passes unchanged.
func TestLocalServerDown(t *testing.T) {
	reg, err := models.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String() + "/v1"
	l.Close()
	m := newMux(reg)
	for provider, want := range map[string]string{
		"llama.cpp": "could not reach llama.cpp at " + base + ": connection refused, nothing listens there. Start llama-server",
		"my-vllm":   "could not reach my-vllm at " + base + ": connection refused, nothing listens there. Start it, or correct provider \"my-vllm\"'s baseUrl in models.json",
	} {
		err := m.Stream(context.Background(), &engine.Request{
			Model:    engine.Model{API: "openai-completions", Provider: provider, ID: "m", BaseURL: base},
			Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}},
			func(engine.StreamEvent) error { return nil })
		var pe *engine.ProviderError
		if !errors.As(err, &pe) || pe.Kind != engine.ErrorNoServer || !strings.HasPrefix(pe.Message, want) {
			t.Errorf("%s: err %v, want no_server %q...", provider, err, want)
		}
	}
	other := &engine.ProviderError{Kind: engine.ErrorTransport, Message: "reset"}
	if got := localServerDown(other, engine.Model{Provider: "lm-studio"}); got != other {
		t.Errorf("a transport failure that is no refused dial became %v", got)
	}
}
