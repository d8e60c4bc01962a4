package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/provider/anthropic"
	"github.com/xcsh-go/xcsh/engine/provider/gemini"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// adapter is an API this build speaks and how to make the provider that
// serves it.
type adapter struct {
	api string
	new func(reg *models.Registry) engine.Provider
}

// adapters lists every API a model may name in this build, in the order
// docs/providers.md lists them. It is the one list: the mux routes each
// request through it, and models.Load refuses a models.json or models.yml
// api outside it (supportedAPIs), so adding an adapter is one entry here.
var adapters = []adapter{
	{"openai-completions", func(r *models.Registry) engine.Provider { return openai.New(openai.Options{APIKey: r.APIKey}) }},
	// One wire, three URLs and auths: the adapter tells them by the
	// model's API.
	{"openai-responses", responsesAdapter},
	{"azure-openai-responses", responsesAdapter},
	{"openai-codex-responses", responsesAdapter},
	{"anthropic-messages", func(r *models.Registry) engine.Provider { return anthropic.New(anthropic.Options{APIKey: r.APIKey}) }},
	{"google-generative-ai", func(r *models.Registry) engine.Provider { return gemini.New(gemini.Options{APIKey: r.APIKey}) }},
	{"ollama", func(*models.Registry) engine.Provider { return ollama.New(ollama.Options{}) }},
	// The deterministic demo model; --provider fake with a script replaces
	// it (mux.setFake).
	{"fake", func(*models.Registry) engine.Provider { return fakeprovider.Demo() }},
}

func responsesAdapter(r *models.Registry) engine.Provider {
	return openai.NewResponses(openai.Options{APIKey: r.APIKey})
}

// supportedAPIs are the APIs of adapters, for models.WithAPIs.
func supportedAPIs() []string {
	apis := make([]string, len(adapters))
	for i, a := range adapters {
		apis[i] = a.api
	}
	return apis
}

// loadRegistry loads the model registry, refusing a models file that names
// an API without an adapter.
func loadRegistry(agentDir string, env func(string) string) (*models.Registry, error) {
	return models.Load(agentDir, env, models.WithAPIs(supportedAPIs()...))
}

// mux is the session's one provider: it hands each request to the adapter
// of its model's API, with the model's headers resolved (the registry
// keeps secrets out of the Model the wire shows).
type mux struct {
	reg   *models.Registry
	byAPI map[string]engine.Provider
}

func newMux(reg *models.Registry) *mux {
	m := &mux{reg: reg, byAPI: make(map[string]engine.Provider, len(adapters))}
	for _, a := range adapters {
		m.byAPI[a.api] = a.new(reg)
	}
	return m
}

// setFake makes p (the --provider fake script or demo the session starts
// with) serve the fake API.
func (m *mux) setFake(p engine.Provider) { m.byAPI["fake"] = p }

// adapterFor is the adapter that serves model, nil when none does.
func (m *mux) adapterFor(model engine.Model) engine.Provider {
	if model.Provider == "ollama" && (model.API == "openai-responses" || model.API == "") {
		// The registry's implicit Ollama provider says openai-responses (the
		// original's choice); we speak Ollama's native API, which honours
		// num_ctx. An "ollama" provider of models.json that names another
		// API gets that API's adapter.
		return m.byAPI["ollama"]
	}
	return m.byAPI[model.API]
}

func (m *mux) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	p := m.adapterFor(req.Model)
	if p == nil {
		// A model from a session file or discovery, not from models.json
		// (which is refused at load).
		return &engine.ProviderError{Message: fmt.Sprintf("no adapter for API %q (model %s/%s) in this build; the APIs that work: %s",
			req.Model.API, req.Model.Provider, req.Model.ID, strings.Join(supportedAPIs(), ", "))}
	}
	if h := m.reg.Headers(req.Model); len(h) > 0 {
		r := *req
		r.Model.Headers = h
		req = &r
	}
	return localServerDown(p.Stream(ctx, req, fn), req.Model)
}

// startHints say how to start the server of a local provider.
var startHints = map[string]string{
	"ollama":    `Start Ollama ("ollama serve", or the Ollama app), or set OLLAMA_HOST to the address it listens on`,
	"llama.cpp": "Start llama-server (llama-server -m MODEL.gguf --port 8080), or set LLAMA_CPP_BASE_URL to the address it listens on",
	"lm-studio": "Start LM Studio's server (lms server start, or Developer > Start Server in the app), or set LM_STUDIO_BASE_URL to the address it listens on",
}

// localServerDown turns a transport failure that is a refused connection
// to this machine into the error that says the server is not running and
// how to start it, which the engine does not retry (engine.ErrorNoServer:
// retrying a server that is not there kept the user waiting 14 s for the
// answer). Other errors pass unchanged; the Ollama adapter says so itself.
func localServerDown(err error, m engine.Model) error {
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorTransport || !engine.LocalRefused(err) {
		return err
	}
	hint, ok := startHints[m.Provider]
	if !ok {
		hint = fmt.Sprintf("Start it, or correct provider %q's baseUrl in models.json", m.Provider)
	}
	return &engine.ProviderError{Kind: engine.ErrorNoServer,
		Message: fmt.Sprintf("could not reach %s at %s: connection refused, nothing listens there. %s", m.Provider, m.BaseURL, hint),
		Err:     err}
}
