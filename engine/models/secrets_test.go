package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

const (
	secretKey    = "sk-SECRET-KEY-0123456789"
	secretHeader = "hdr-SECRET-VALUE-9876"
	secretEnvKey = "env-SECRET-KEY-5555"
)

// checkClean fails if any secret shows in s.
func checkClean(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{secretKey, secretHeader, secretEnvKey, "SECRET"} {
		if strings.Contains(s, sec) {
			t.Errorf("%s leaks %q:\n%s", what, sec, s)
		}
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	const yml = `providers:
  proxy:
    baseUrl: https://proxy.example/v1
    api: anthropic-messages
    apiKey: ` + secretKey + `
    authHeader: true
    headers:
      X-Portkey-Api-Key: ` + secretHeader + `
      Authorization: Bearer ` + secretHeader + `
      X-Custom: ENV_SECRET_VAR
      X-Team: platform
    models:
      - id: m1
        headers: {Cookie: ` + secretHeader + `, x-session-id: ` + secretHeader + `}
  anthropic:
    modelOverrides:
      claude-opus-4-5:
        headers: {x-api-key: ` + secretHeader + `}
`
	env := envOf("ENV_SECRET_VAR", secretEnvKey, "OPENAI_API_KEY", secretEnvKey)
	r := load(t, env, map[string]string{"models.yml": yml})
	r.SetKeyOverride("anthropic", secretKey)
	r.Add(engine.Model{ID: "d1", Provider: "proxy", Headers: map[string]string{"X-Api-Key": secretHeader}})

	// The adapters do get them.
	m := find(t, r, "proxy", "m1")
	h := r.Headers(m)
	if r.APIKey(m) != secretKey || h["Authorization"] != "Bearer "+secretKey || h["X-Custom"] != secretEnvKey ||
		h["X-Portkey-Api-Key"] != secretHeader || h["Cookie"] != secretHeader || h["X-Team"] != "platform" {
		t.Errorf("adapter view: key %q headers %v", r.APIKey(m), h)
	}

	// The wire never does: not in any model, marshalled or printed.
	for _, list := range [][]engine.Model{r.All(), r.Available()} {
		b, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		checkClean(t, "marshalled models", string(b))
		checkClean(t, "printed models", fmt.Sprintf("%v %+v %#v", list, list, list))
	}
	if m.Headers["X-Team"] != "platform" || len(m.Headers) != 1 {
		t.Errorf("wire headers: %v", m.Headers)
	}
	for _, s := range r.ScopedModels([]string{"*"}) {
		checkClean(t, "scoped model", fmt.Sprintf("%+v", s))
	}
	// Nor the registry printed.
	checkClean(t, "registry", fmt.Sprintf("%v %+v %#v %s", r, r, r, r))

	// Nor an error about a file holding them.
	bad := strings.Replace(yml, "      - id: m1\n", "      - id: m1\n        contextWindow: -1\n", 1)
	_, err := Load(agentDir(t, map[string]string{"models.yml": bad}), env)
	if err == nil {
		t.Fatal("no error")
	}
	checkClean(t, "validation error", err.Error())
	for _, body := range []string{
		"providers:\n  p:\n    apiKey: " + secretKey + "\n    headers: {a: " + secretHeader + "}\n    baseUrl: [\n",
		"providers:\n  p:\n    apiKey: " + secretKey + "\n    headers: " + secretHeader + "\n",
		"providers:\n  p:\n    apiKey: {k: " + secretKey + "}\n",
	} {
		_, err := Load(agentDir(t, map[string]string{"models.yml": body}), env)
		if err == nil || !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("no config error: %v", err)
		}
		checkClean(t, "error", err.Error())
	}
	_, err = Load(agentDir(t, map[string]string{"models.json": `{"providers": {"p": {"apiKey": "` + secretKey + `", "baseUrl": 1}}}`}), env)
	if err == nil {
		t.Fatal("no error")
	}
	checkClean(t, "json error", err.Error())
}

// Discovery adds from its own goroutine while the session reads.
func TestConcurrentAddAndRead(t *testing.T) {
	r, err := Load("", envOf("ANTHROPIC_API_KEY", "k"))
	if err != nil {
		t.Fatal(err)
	}
	r.SetKeyless("ollama")
	const writers, per = 4, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				r.Add(engine.Model{ID: fmt.Sprintf("m%d-%d", w, i%10), Provider: "ollama", Reasoning: i%2 == 0,
					Headers: map[string]string{"X-N": fmt.Sprint(i)}})
			}
		}(w)
	}
	for rd := 0; rd < 4; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				for _, m := range r.Available() {
					m.Input[0] = "mutated" // a copy: must not reach the registry
					_ = r.APIKey(m)
					_ = r.Headers(m)
				}
				r.Resolve("m1-1")
				r.ScopedModels([]string{"ollama/*:high"})
				r.SetKeyOverride("openai", fmt.Sprint(i))
				_ = r.String()
			}
		}()
	}
	wg.Wait()
	all := r.All()
	if n := len(all); n != len(catalog)+writers*10 {
		t.Errorf("%d models after concurrent Add", n)
	}
	for _, m := range all {
		if m.Input[0] != "text" && m.Input[0] != "image" {
			t.Fatalf("a reader's copy changed the registry: %v", m.Input)
		}
	}
}

func TestJSONDuplicateKeysLastWins(t *testing.T) {
	r := load(t, nil, map[string]string{"models.json": `{"providers": {"p": {"baseUrl": "http://a", "baseUrl": "http://b",
  "api": "openai-completions", "auth": "none", "models": [{"id": "m"}]}}}`})
	if m := find(t, r, "p", "m"); m.BaseURL != "http://b" {
		t.Errorf("baseUrl %q", m.BaseURL)
	}
}
