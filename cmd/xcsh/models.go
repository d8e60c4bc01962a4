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
	found     discoveries // what it asked and what failed
	agentDir  string      // where models.json is, for the errors that name it
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
	ms := &modelSetup{reg: reg, provider: newMux(reg), agentDir: sessionfile.AgentDir(env)}
	// Local servers are asked at once; start-up waits for them only when
	// the choice of model needs their answer.
	ms.startDiscovery(reg, env, deterministic)
	if err := ms.choose(o, optional, stderr); err != nil {
		// The askers end within their bound; nothing outlives setup
		// unowned.
		ms.discovery.Wait()
		return nil, err
	}
	return ms, nil
}

// choose picks the starting model from --provider and --model, and applies
// --api-key and --models.
func (ms *modelSetup) choose(o *options, optional bool, stderr io.Writer) error {
	reg := ms.reg
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
			return err
		}
		ms.provider.setFake(p)
		m := p.Model()
		reg.Add(m)
		ms.model, ms.thinking = &m, level
	case provider == "" && model == "":
		avail := reg.Available()
		if len(avail) == 0 {
			// No provider has a key: a running local server's model, once
			// the discovery under way has answered (bounded).
			ms.discovery.Wait()
			if m, ok := localDefault(reg, !o.noTools); ok {
				ms.model = &m
				break
			}
		}
		if len(avail) == 0 && optional {
			break // the resumed session's record names its model
		}
		if len(avail) == 0 {
			return &exitError{2, "Error: no models available: use --provider fake for the built-in demo model, set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY), start Ollama, or configure a provider (docs/providers.md)"}
		}
		ms.model = &avail[0]
	default:
		switch {
		case ms.found.isAsked(provider):
			// Selecting a local model by name needs its server's answer:
			// wait for the discovery under way (bounded).
			ms.discovery.Wait()
		case provider == "ollama":
			ms.discoverOllama(context.Background(), reg)
		}
		// An Ollama model the server did not list falls back to a model
		// with defaults below, since Ollama can serve any pulled model.
		if provider != "" && !slices.Contains(reg.Providers(), provider) {
			known := reg.Providers()
			if builtinFake && !slices.Contains(known, "fake") {
				known = append(known, "fake")
			}
			return &exitError{2, unknownProvider(provider, known, ms.agentDir)}
		}
		m, level, ok := resolve(reg, provider, model)
		if !ok && model != "" {
			base, lvl := models.SplitThinking(model)
			// Not added to the registry: get_available_models lists only
			// what the server said it has.
			if d, local := localFallback(reg, provider, base); local {
				m, level, ok = d, lvl, true
			}
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
			if hint := ms.notFoundHint(provider); hint != "" {
				return &exitError{2, msg + hint}
			}
			return &exitError{2, msg + " (xcsh --list-models lists them all)"}
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
	return nil
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

// localFallback is a model of a local server (Ollama, llama.cpp, LM
// Studio) that its server did not list: the server is down (the first
// call says so, with how to start it), Ollama has not pulled it yet, or
// LM Studio loads it on demand; llama-server answers with its one model
// whatever the name. ok is false for other providers.
func localFallback(reg *models.Registry, provider, id string) (engine.Model, bool) {
	m := engine.Model{ID: id, Name: id, Provider: provider, Input: []string{"text"}, ContextWindow: 128000, MaxTokens: 8192}
	if provider == "ollama" {
		// The window rule of a discovered model (ollama/window.go), the
		// trained context unknown: Ollama itself caps num_ctx at it.
		m.API, m.BaseURL = "ollama", ollama.Host()
		if w := ollama.StartWindow(); w < m.ContextWindow {
			m.ContextWindow, m.MaxContextWindow = w, m.ContextWindow
		}
		return m, true
	}
	for _, d := range reg.Discoveries() {
		if d.Provider == provider && d.Type == provider {
			m.API, m.BaseURL = d.API, d.BaseURL
			return m, true
		}
	}
	return engine.Model{}, false
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
