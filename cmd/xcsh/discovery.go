package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
)

// discoverTimeout bounds one server's discovery: a live local server
// answers in milliseconds, and start-up waits for it only when it must
// (a local model named on the command line, or no model at all).
const discoverTimeout = time.Second

// localEnv names the variable that points each implicit local provider at
// a server; under the deterministic switch only a provider whose variable
// is set is probed, so a developer's own servers never change a golden.
var localEnv = map[string]string{"ollama": "OLLAMA_HOST", "llama.cpp": "LLAMA_CPP_BASE_URL", "lm-studio": "LM_STUDIO_BASE_URL"}

// discoveries is what the background discovery found out: the providers
// it asked and why a server did not answer. Written by the discovery
// goroutines, read once they are done (modelSetup.discovery.Wait).
type discoveries struct {
	mu     sync.Mutex
	asked  map[string]bool  // provider names being or having been discovered
	failed map[string]error // provider name: the server's failure
}

func (d *discoveries) ask(provider string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.asked == nil {
		d.asked = map[string]bool{}
	}
	d.asked[provider] = true
}

func (d *discoveries) fail(provider string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed == nil {
		d.failed = map[string]error{}
	}
	d.failed[provider] = err
}

// isAsked reports whether provider's server is being discovered.
func (d *discoveries) isAsked(provider string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[provider]
}

// failure is why provider's server gave no models (nil: it answered or
// was not asked).
func (d *discoveries) failure(provider string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed[provider]
}

// startDiscovery looks for local models in the background so start-up
// never waits for a server that is not there: Ollama's (/api/tags and
// /api/show), llama.cpp's, LM Studio's and any models.yml discovery block's
// (the OpenAI-compatible GET /models, and what the server says about its
// context). Under the deterministic switch the implicit local providers
// are not probed unless their variable (OLLAMA_HOST, LLAMA_CPP_BASE_URL,
// LM_STUDIO_BASE_URL) names a server.
func (ms *modelSetup) startDiscovery(reg *models.Registry, env func(string) string, deterministic bool) {
	for _, d := range reg.Discoveries() {
		if d.Implicit && deterministic && env(localEnv[d.Provider]) == "" {
			continue
		}
		if d.Type == "ollama" && d.Implicit && env("OLLAMA_HOST") != "" {
			d.BaseURL = ollama.Host()
		}
		ms.found.ask(d.Provider)
		ms.discovery.Add(1)
		go func() {
			defer ms.discovery.Done()
			ms.discover(context.Background(), reg, d)
		}()
	}
}

// discover asks one server for its models (bounded) and adds them to the
// registry; a failure is kept for the message of a model not found.
func (ms *modelSetup) discover(ctx context.Context, reg *models.Registry, d models.Discovery) {
	var found []engine.Model
	var err error
	switch d.Type {
	case "ollama":
		found, err = ollama.Discovery{Host: strings.TrimSuffix(d.BaseURL, "/v1"), Timeout: discoverTimeout}.Run(ctx)
	default: // llama.cpp, lm-studio, openai-compat: the OpenAI-compatible list
		found, err = openai.Discovery{BaseURL: d.BaseURL, Kind: d.Type, Provider: d.Provider, API: d.API,
			Key: reg.APIKey(engine.Model{Provider: d.Provider}), Timeout: discoverTimeout}.Run(ctx)
	}
	if err != nil {
		ms.found.fail(d.Provider, err)
		return
	}
	for i := range found {
		// The models get the provider that asked (a models.yml block may
		// discover an Ollama under another name).
		found[i].Provider = d.Provider
	}
	reg.Add(found...)
}

// discoverOllama asks the Ollama of OLLAMA_HOST for its models now, for a
// model named on the command line when the background discovery did not
// ask it (the deterministic switch without OLLAMA_HOST).
func (ms *modelSetup) discoverOllama(ctx context.Context, reg *models.Registry) {
	ms.discover(ctx, reg, models.Discovery{Provider: "ollama", Type: "ollama", BaseURL: ollama.Host()})
}

// localDefault is the model a session starts with when no model is named
// and no provider has a key: the first model a running local server
// reported, the providers taken in their discovery order (ollama,
// llama.cpp, lm-studio after any models.yml discovery block) and each
// server's models in its own order (Ollama's newest first, as ollama list
// shows them). With tools on, the first that can call tools wins (an
// Ollama model whose template has none cannot act).
func localDefault(reg *models.Registry, tools bool) (engine.Model, bool) {
	avail := reg.Available()
	var first *engine.Model
	for _, d := range reg.Discoveries() {
		for i := range avail {
			m := &avail[i]
			if m.Provider != d.Provider {
				continue
			}
			if !tools || callsTools(*m) {
				return *m, true
			}
			if first == nil {
				first = m
			}
		}
	}
	if first != nil {
		return *first, true
	}
	return engine.Model{}, false
}

// callsTools reports whether m may be offered tools: not a model whose
// compat says "tools": false (Ollama's discovery marks those whose
// template has none).
func callsTools(m engine.Model) bool {
	var c struct {
		Tools *bool `json:"tools"`
	}
	return json.Unmarshal(m.Compat, &c) != nil || c.Tools == nil || *c.Tools
}

// notFoundHint explains a model of a local provider that was not found
// when its server did not answer: the server's failure and how to start
// it. "" when the server answered (or was not asked).
func (ms *modelSetup) notFoundHint(provider string) string {
	err := ms.found.failure(provider)
	if err == nil {
		return ""
	}
	hint := startHints[provider]
	if hint == "" {
		hint = fmt.Sprintf("start it, or correct provider %q's baseUrl", provider)
	}
	return fmt.Sprintf(": %s's server did not answer (%v). %s", provider, err, hint)
}
