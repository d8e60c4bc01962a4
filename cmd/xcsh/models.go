package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// modelSetup is what the CLI resolves about models: the registry, the
// provider that serves every model (a mux on the model's API), the model
// and thinking level the session starts with, and the --models scope.
type modelSetup struct {
	reg      *models.Registry
	provider *mux
	model    *engine.Model
	thinking engine.ThinkingLevel // from a ":level" suffix of --model; "" when none
	scoped   []engine.ScopedModel
	// discovery is the background model discovery; wait before exiting.
	discovery sync.WaitGroup
}

// setupModels loads the registry (<agentDir>/models.json and models.yml),
// picks the starting model from --provider and --model, applies --api-key
// and --models, and starts the discovery of local models in the
// background. An invalid configuration file is a start-up error that
// names the file, the line and the field.
func setupModels(o *options, env func(string) string, deterministic, optional bool, stderr io.Writer) (*modelSetup, error) {
	reg, err := loadRegistry(sessionfile.AgentDir(env), env)
	if err != nil {
		return nil, &exitError{2, "Error: " + err.Error()}
	}
	ms := &modelSetup{reg: reg, provider: newMux(reg)}
	// A provider of models.json named "fake" (the family's own test set-up
	// does that) replaces the built-in one entirely (docs/providers.md).
	builtinFake := !reg.Configured("fake")
	if builtinFake {
		reg.SetKeyless("fake")
	}

	provider, model := splitModelFlags(o.provider, o.model)
	switch {
	case provider == "fake" && builtinFake:
		p, level, err := fakeModel(model, stderr)
		if err != nil {
			return nil, err
		}
		ms.provider.setFake(p)
		m := p.Model()
		reg.Add(m)
		ms.model, ms.thinking = &m, level
	case provider == "" && model == "":
		avail := reg.Available()
		if len(avail) == 0 && optional {
			break // the resumed session's record names its model
		}
		if len(avail) == 0 {
			return nil, &exitError{2, "Error: no models available: use --provider fake for the built-in demo model, set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY), start Ollama, or configure a provider (docs/providers.md)"}
		}
		ms.model = &avail[0]
	default:
		if provider == "ollama" {
			// Selecting an Ollama model by name needs the server's answer:
			// wait for discovery (bounded), then fall back to a model with
			// defaults, since Ollama can serve any pulled model.
			ms.discoverOllama(context.Background(), reg, ollama.Host())
		}
		if provider != "" && !slices.Contains(reg.Providers(), provider) {
			known := reg.Providers()
			if builtinFake && !slices.Contains(known, "fake") {
				known = append(known, "fake")
			}
			return nil, &exitError{2, unknownProvider(provider, known, sessionfile.AgentDir(env))}
		}
		m, level, ok := resolve(reg, provider, model)
		if !ok && provider == "ollama" && model != "" {
			base, lvl := models.SplitThinking(model)
			// Not added to the registry: get_available_models lists only
			// what the server said it has.
			m, level, ok = ollamaDefault(base), lvl, true
		}
		if !ok {
			base, _ := models.SplitThinking(model)
			msg := fmt.Sprintf("Error: model %q not found", strings.TrimPrefix(provider+"/"+model, "/"))
			if near := reg.Nearest(provider, base, 5); len(near) > 0 {
				of := "models"
				if provider != "" {
					of = provider + "'s models"
				}
				msg += fmt.Sprintf("; nearest of %s: %s", of, strings.Join(near, ", "))
			}
			return nil, &exitError{2, msg + " (xcsh --list-models lists them all)"}
		}
		ms.model, ms.thinking = &m, level
	}
	if o.apiKey != "" && ms.model != nil {
		reg.SetKeyOverride(ms.model.Provider, o.apiKey)
	}
	if o.models != "" {
		for _, sm := range reg.ScopedModels(strings.Split(o.models, ",")) {
			ms.scoped = append(ms.scoped, engine.ScopedModel{Model: sm.Model, Thinking: sm.Thinking})
		}
	}
	ms.startDiscovery(reg, env, deterministic)
	return ms, nil
}

// splitModelFlags normalises --provider and --model: "provider/id" in
// --model names the provider; a .json path alone (with an optional
// ":level") selects the fake provider's script.
func splitModelFlags(provider, model string) (string, string) {
	base, _ := models.SplitThinking(model)
	switch {
	case provider == "" && strings.HasSuffix(base, ".json") && !strings.HasPrefix(model, "fake/"):
		return "fake", model
	case provider == "" && strings.Contains(model, "/"):
		p, m, _ := strings.Cut(model, "/")
		return p, m
	case provider != "" && strings.HasPrefix(model, provider+"/"):
		return provider, strings.TrimPrefix(model, provider+"/")
	}
	return provider, model
}

// fakeModel builds the fake provider: the demo model, or a script, either
// with an optional ":level" suffix (demo:high, script.json:low). A script
// path that itself ends in a level's name is taken whole when that file
// exists (the explicit form: name the file as it is).
func fakeModel(model string, stderr io.Writer) (*fakeprovider.Provider, engine.ThinkingLevel, error) {
	var level engine.ThinkingLevel
	if _, err := os.Stat(model); err != nil {
		model, level = models.SplitThinking(model)
	}
	var p *fakeprovider.Provider
	if model == "" || model == "demo" {
		p = fakeprovider.Demo()
	} else {
		script, err := fakeprovider.Load(model)
		if err != nil {
			return nil, "", &exitError{2, "Error: " + err.Error()}
		}
		p = fakeprovider.New(script)
	}
	p.Log = stderr
	return p, level, nil
}

// resolve finds --model among the registry's models: provider/id exactly
// (with an optional ":level" suffix), or with --provider alone its first
// available model.
func resolve(reg *models.Registry, provider, model string) (engine.Model, engine.ThinkingLevel, bool) {
	if model == "" {
		for _, m := range reg.Available() {
			if m.Provider == provider {
				return m, "", true
			}
		}
		for _, m := range reg.All() {
			if m.Provider == provider {
				return m, "", true
			}
		}
		return engine.Model{}, "", false
	}
	if provider == "ollama" {
		// An Ollama name without a tag means its :latest, exactly, before
		// any looser match (ollama/tiny is not tiny-tools).
		if base, level := models.SplitThinking(model); !strings.Contains(base, ":") {
			if m, ok := reg.Find("ollama", base+":latest"); ok {
				return m, level, true
			}
		}
	}
	pattern := model
	if provider != "" {
		pattern = provider + "/" + model
	}
	return reg.ResolveThinking(pattern)
}

// ollamaDefault is an Ollama model the server did not describe (discovery
// failed or the model is not pulled yet: the first call says so).
func ollamaDefault(id string) engine.Model {
	return engine.Model{ID: id, Name: id, API: "ollama", Provider: "ollama", BaseURL: ollama.Host(),
		Input: []string{"text"}, ContextWindow: 128000, MaxTokens: 8192}
}

// discoverOllama asks an Ollama server for its models (bounded by the
// discovery's own timeout) and adds them to the registry.
func (ms *modelSetup) discoverOllama(ctx context.Context, reg *models.Registry, host string) {
	found, err := ollama.Discovery{Host: host, Timeout: time.Second}.Run(ctx)
	if err == nil {
		reg.Add(found...)
	}
}

// startDiscovery looks for local models in the background so start-up
// never waits for a server that is not there. Under the deterministic
// switch the implicit local providers are not probed (a developer's own
// Ollama must not change a golden transcript) unless OLLAMA_HOST names one.
func (ms *modelSetup) startDiscovery(reg *models.Registry, env func(string) string, deterministic bool) {
	for _, d := range reg.Discoveries() {
		if d.Type != "ollama" {
			continue // llama.cpp, lm-studio and openai-compat discovery: not in this build
		}
		if d.Implicit && deterministic && env("OLLAMA_HOST") == "" {
			continue
		}
		host := d.BaseURL
		if d.Implicit && env("OLLAMA_HOST") != "" {
			host = ollama.Host()
		}
		ms.discovery.Add(1)
		go func() {
			defer ms.discovery.Done()
			ms.discoverOllama(context.Background(), reg, strings.TrimSuffix(host, "/v1"))
		}()
	}
}

// registryModels adapts the registry to engine.ModelCatalog.
type registryModels struct {
	reg      *models.Registry
	agentDir string
}

// KeyHint implements engine.KeyHinter: the variables, the flag and the
// configuration field that give provider a key.
func (r registryModels) KeyHint(provider string) string {
	var b strings.Builder
	if vars := r.reg.KeyEnvVars(provider); len(vars) > 0 {
		fmt.Fprintf(&b, "Set %s, pass", strings.Join(vars, " or "))
	} else {
		b.WriteString("Pass")
	}
	fmt.Fprintf(&b, " --api-key, or give provider %q an \"apiKey\" in %s (docs/providers.md).",
		provider, filepath.Join(r.agentDir, "models.json"))
	return b.String()
}

func (r registryModels) Available() []engine.Model { return r.reg.Available() }
func (r registryModels) Find(provider, id string) (engine.Model, bool) {
	return r.reg.Find(provider, id)
}
func (r registryModels) HasKey(m engine.Model) bool { return r.reg.HasAuth(m) }

// thinkingPolicy applies the registry's per-family effort rules.
type thinkingPolicy struct{}

func (thinkingPolicy) SupportedEfforts(m engine.Model) []engine.ThinkingLevel {
	return models.SupportedEfforts(m)
}
func (thinkingPolicy) Clamp(m engine.Model, l engine.ThinkingLevel) engine.ThinkingLevel {
	return models.ClampThinking(m, l)
}

// unknownProvider is the start-up error for a --provider (or a
// provider/ prefix of --model) that no catalog, configuration or
// discovery names: the nearest known names, and where a server of one's
// own (vLLM, LiteLLM, ...) is configured.
func unknownProvider(provider string, known []string, agentDir string) string {
	return fmt.Sprintf("Error: unknown provider %q (nearest: %s); a server of your own is configured under \"providers\" in %s (docs/providers.md); xcsh --list-models lists the models you can use",
		provider, strings.Join(models.NearestNames(provider, known, 3), ", "), filepath.Join(agentDir, "models.json"))
}
