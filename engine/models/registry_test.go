package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// agentDir writes files into a fresh directory.
func agentDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// envOf is a hermetic environment.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func load(t *testing.T, env func(string) string, files map[string]string) *Registry {
	t.Helper()
	r, err := Load(agentDir(t, files), env)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func find(t *testing.T, r *Registry, provider, id string) engine.Model {
	t.Helper()
	m, ok := r.Find(provider, id)
	if !ok {
		t.Fatalf("%s/%s not found", provider, id)
	}
	return m
}

func ids(ms []engine.Model) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Provider+"/"+m.ID)
	}
	return out
}

// pi's minimal example: only ids, everything else defaulted.
const piJSON = `{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "models": [
        { "id": "llama3.1:8b" },
        { "id": "qwen2.5-coder:7b", "name": "Qwen Coder", "reasoning": true, "input": ["text", "image"],
          "contextWindow": 32768, "maxTokens": 8192, "cost": {"input": 0.5} }
      ]
    }
  }
}`

func TestLoadModelsJSON(t *testing.T) {
	r := load(t, nil, map[string]string{"models.json": piJSON})
	got := find(t, r, "ollama", "llama3.1:8b")
	want := engine.Model{ID: "llama3.1:8b", Name: "llama3.1:8b", API: "openai-completions", Provider: "ollama",
		BaseURL: "http://localhost:11434/v1", Input: []string{"text"}, ContextWindow: 128000, MaxTokens: 16384}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
	q := find(t, r, "ollama", "qwen2.5-coder:7b")
	if q.Name != "Qwen Coder" || !q.Reasoning || len(q.Input) != 2 || q.ContextWindow != 32768 || q.MaxTokens != 8192 ||
		q.Cost != (engine.ModelCost{Input: 0.5}) {
		t.Errorf("explicit fields: %+v", q)
	}
	if q.Thinking == nil || *q.Thinking != (engine.ModelThinking{MinLevel: mi, MaxLevel: hi, Mode: modeEffort}) {
		t.Errorf("inferred thinking: %+v", q.Thinking)
	}
	// Custom models come after the catalog, in file order.
	all := ids(r.All())
	if n := len(all); all[n-2] != "ollama/llama3.1:8b" || all[n-1] != "ollama/qwen2.5-coder:7b" {
		t.Errorf("order: %v", all)
	}
	// The literal key makes them available; ollama is configured, so no
	// implicit discovery for it.
	if got := ids(r.Available()); !reflect.DeepEqual(got, []string{"ollama/llama3.1:8b", "ollama/qwen2.5-coder:7b"}) {
		t.Errorf("Available: %v", got)
	}
	if r.APIKey(q) != "ollama" {
		t.Errorf("literal key not used")
	}
	for _, d := range r.Discoveries() {
		if d.Provider == "ollama" {
			t.Errorf("implicit ollama discovery despite configuration: %+v", d)
		}
	}
}

const vllmYAML = `# the original's example
providers:
  my-vllm:
    baseUrl: http://127.0.0.1:8000/v1
    api: openai-completions
    apiKey: MY_VLLM_KEY
    authHeader: true
    headers: { X-Team: platform, X-Api-Key: TEAM_SECRET_VAR, X-Trace: TRACE_ID_VAR }
    compat:
      supportsDeveloperRole: false
      maxTokensField: max_tokens
      thinkingFormat: qwen
    models:
      - id: qwen3-coder
        name: Qwen3 Coder
        reasoning: true
        input: [text]
        cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0}
        contextWindow: 128_000
        maxTokens: 16384
        compat: { thinkingFormat: qwen-chat-template, extraBody: {top_k: 20} }
        headers: { x-team: models }
    discovery: { type: ollama }
equivalence:
  overrides: { my-vllm/qwen3-coder: qwen3-coder }
`

func TestLoadModelsYAML(t *testing.T) {
	env := envOf("MY_VLLM_KEY", "sk-vllm-secret", "TEAM_SECRET_VAR", "team-secret-value")
	r := load(t, env, map[string]string{"models.yml": vllmYAML})
	m := find(t, r, "my-vllm", "qwen3-coder")
	if m.Name != "Qwen3 Coder" || m.ContextWindow != 128000 || m.API != "openai-completions" {
		t.Errorf("model: %+v", m)
	}
	// compat is raw JSON, the model's keys laid over the provider's, order kept.
	wantCompat := `{"supportsDeveloperRole":false,"maxTokensField":"max_tokens","thinkingFormat":"qwen-chat-template","extraBody":{"top_k":20}}`
	if string(m.Compat) != wantCompat {
		t.Errorf("compat %s\nwant   %s", m.Compat, wantCompat)
	}
	if r.APIKey(m) != "sk-vllm-secret" {
		t.Errorf("env key not resolved")
	}
	wantHeaders := map[string]string{"x-team": "models", "X-Api-Key": "team-secret-value", "Authorization": "Bearer sk-vllm-secret"}
	if got := r.Headers(m); !reflect.DeepEqual(got, wantHeaders) {
		t.Errorf("Headers: %v", got) // TRACE_ID_VAR is unset: header left out
	}
	if !reflect.DeepEqual(m.Headers, map[string]string{"x-team": "models"}) {
		t.Errorf("wire headers: %v", m.Headers)
	}
	ds := r.Discoveries()
	if len(ds) == 0 || ds[0] != (Discovery{Provider: "my-vllm", Type: "ollama", API: "openai-completions", BaseURL: "http://127.0.0.1:8000/v1"}) {
		t.Errorf("Discoveries: %+v", ds)
	}
}

func TestOverridesOfBuiltins(t *testing.T) {
	const yml = `providers:
  anthropic:
    baseUrl: https://proxy.example/anthropic
    compat: {a: 1}
    modelOverrides:
      claude-opus-4-5:
        name: Opus via proxy
        contextWindow: 100000
        cost: {input: 4}
        compat: {b: 2}
        reasoning: false
      no-such-model: {name: ignored}
  openai:
    models:
      - id: gpt-5
        name: My GPT-5
    baseUrl: https://proxy.example/openai
    apiKey: sk-literal
    api: openai-completions
`
	r := load(t, nil, map[string]string{"models.yml": yml})
	o := find(t, r, "anthropic", "claude-opus-4-5")
	if o.Name != "Opus via proxy" || o.ContextWindow != 100000 || o.MaxTokens != 64000 ||
		o.Cost != (engine.ModelCost{Input: 4, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}) ||
		string(o.Compat) != `{"a":1,"b":2}` || o.BaseURL != "https://proxy.example/anthropic" || o.Reasoning || o.Thinking != nil {
		t.Errorf("override: %+v", o)
	}
	if s := find(t, r, "anthropic", "claude-haiku-4-5"); s.BaseURL != "https://proxy.example/anthropic" || string(s.Compat) != `{"a":1}` {
		t.Errorf("provider override on the others: %+v", s)
	}
	// A custom model with a built-in id replaces it in place.
	all := r.All()
	var pos int
	for i, m := range all {
		if m.Provider == "openai" && m.ID == "gpt-5" {
			pos = i
		}
	}
	if len(all) != len(catalog) || all[pos].Name != "My GPT-5" || all[pos].Reasoning || catalog[pos].ID != "gpt-5" {
		t.Errorf("replacement: %d models, %+v at %d", len(all), all[pos], pos)
	}
	if _, ok := r.Find("anthropic", "no-such-model"); ok {
		t.Error("an override created a model")
	}
}

func TestBothFiles(t *testing.T) {
	const js = `{"providers": {
  "a": {"baseUrl": "http://a", "api": "openai-completions", "auth": "none", "models": [{"id": "from-json"}]},
  "b": {"baseUrl": "http://b", "api": "openai-completions", "auth": "none", "models": [{"id": "b1"}]}
}}`
	const yml = `providers:
  a: {baseUrl: http://a2, api: openai-completions, auth: none, models: [{id: from-yml}]}
  c: {baseUrl: http://c, api: openai-completions, auth: none, models: [{id: c1}]}
`
	r := load(t, nil, map[string]string{"models.json": js, "models.yml": yml})
	all := ids(r.All())
	got := all[len(catalog):]
	want := []string{"a/from-yml", "b/b1", "c/c1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merge: %v, want %v", got, want)
	}
}

func TestKeysAndAvailability(t *testing.T) {
	const yml = `providers:
  envkey: {baseUrl: http://e, api: openai-completions, apiKey: ENV_KEY_VAR, models: [{id: e1}]}
  unset:  {baseUrl: http://u, api: openai-completions, apiKey: UNSET_KEY_VAR, models: [{id: u1}]}
  lit:    {baseUrl: http://l, api: openai-completions, apiKey: sk-literal-1, models: [{id: l1}]}
  cmd:    {baseUrl: http://c, api: openai-completions, apiKey: "!security find-generic-password", models: [{id: c1}]}
  open:   {baseUrl: http://o, api: openai-completions, auth: none, models: [{id: o1}]}
  ollama: {baseUrl: http://127.0.0.1:11434/v1, api: openai-completions, models: [{id: llama3}], auth: none}
`
	tests := []struct {
		name string
		env  func(string) string
		want []string
	}{
		{"no env", envOf(), []string{"lit/l1", "open/o1", "ollama/llama3"}},
		{"env key set", envOf("ENV_KEY_VAR", "k1"), []string{"envkey/e1", "lit/l1", "open/o1", "ollama/llama3"}},
		{"anthropic api key", envOf("ANTHROPIC_API_KEY", "a"), nil},
		{"anthropic oauth token", envOf("ANTHROPIC_OAUTH_TOKEN", "a"), nil},
		{"openai", envOf("OPENAI_API_KEY", "o"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := load(t, tt.env, map[string]string{"models.yml": yml})
			got := ids(r.Available())
			want := tt.want
			if want == nil {
				// A built-in provider's env var makes its catalog models available.
				prov := "openai"
				if tt.env("ANTHROPIC_API_KEY")+tt.env("ANTHROPIC_OAUTH_TOKEN") != "" {
					prov = "anthropic"
				}
				want = []string{}
				for _, m := range catalog {
					if m.Provider == prov {
						want = append(want, prov+"/"+m.ID)
					}
				}
				want = append(want, "lit/l1", "open/o1", "ollama/llama3")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Available: %v\nwant %v", got, want)
			}
		})
	}
	r := load(t, envOf(), map[string]string{"models.yml": yml})
	u := find(t, r, "unset", "u1")
	if k := r.APIKey(u); k != "" {
		t.Errorf("an unset variable's name was used as the key: %q", k)
	}
	if k := r.APIKey(find(t, r, "cmd", "c1")); k != "" {
		t.Errorf("a command was used as the key: %q", k)
	}
	// --api-key applies to the provider and makes its models available.
	r.SetKeyOverride("unset", "cli-key")
	if r.APIKey(u) != "cli-key" || !r.HasAuth(u) {
		t.Error("override not applied")
	}
	r.SetKeyOverride("unset", "")
	if r.HasAuth(u) {
		t.Error("override not removed")
	}
	// The env-var order for Anthropic: the OAuth token first.
	r2, _ := Load("", envOf("ANTHROPIC_API_KEY", "key", "ANTHROPIC_OAUTH_TOKEN", "oauth"))
	if k := r2.APIKey(catalog[0]); k != "oauth" {
		t.Errorf("anthropic key %q", k)
	}
	// Runtime-registered keyless providers.
	r2.Add(engine.Model{ID: "demo", Provider: "fake", API: "fake"})
	if r2.HasAuth(engine.Model{Provider: "fake"}) {
		t.Error("fake needs SetKeyless")
	}
	r2.SetKeyless("fake")
	if !r2.HasAuth(engine.Model{Provider: "fake"}) {
		t.Error("SetKeyless ignored")
	}
}

func TestImplicitLocalProviders(t *testing.T) {
	r, err := Load("", envOf("OLLAMA_BASE_URL", "http://gpu:11434"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Discovery{
		{Provider: "ollama", Type: "ollama", API: "openai-responses", BaseURL: "http://gpu:11434", Implicit: true},
		{Provider: "llama.cpp", Type: "llama.cpp", API: "openai-completions", BaseURL: "http://127.0.0.1:8080", Implicit: true},
		{Provider: "lm-studio", Type: "lm-studio", API: "openai-completions", BaseURL: "http://127.0.0.1:1234/v1", Implicit: true},
	}
	if got := r.Discoveries(); !reflect.DeepEqual(got, want) {
		t.Errorf("Discoveries:\n got %+v\nwant %+v", got, want)
	}
	// Discovered local models need no key; overrides and defaults apply.
	r.Add(engine.Model{ID: "qwen3:8b", Provider: "ollama", API: "openai-responses", BaseURL: "http://gpu:11434/v1", Reasoning: true, ContextWindow: 40960, MaxTokens: 8192})
	got := r.Available()
	if len(got) != 1 || got[0].Name != "qwen3:8b" || got[0].Thinking == nil || len(got[0].Input) != 1 {
		t.Errorf("discovered: %+v", got)
	}
}

// TestLocalOverridesKeepDiscovery: a configuration that only adjusts a
// local provider keeps it discovered (issue 27: a modelOverrides entry for
// ollama hid the server's models), at its baseUrl when it gives one.
func TestLocalOverridesKeepDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name, provider, json string
		want                 *Discovery
	}{
		{"overrides only", "ollama", `{"providers":{"ollama":{"modelOverrides":{"tiny:latest":{"contextWindow":3072}}}}}`,
			&Discovery{Provider: "ollama", Type: "ollama", API: "openai-responses", BaseURL: "http://127.0.0.1:11434", Implicit: true}},
		{"a baseUrl", "ollama", `{"providers":{"ollama":{"baseUrl":"http://gpu:11434","modelOverrides":{"x":{"name":"X"}}}}}`,
			&Discovery{Provider: "ollama", Type: "ollama", API: "openai-responses", BaseURL: "http://gpu:11434"}},
		{"an api", "lm-studio", `{"providers":{"lm-studio":{"api":"openai-responses","compat":{"supportsStore":true}}}}`,
			&Discovery{Provider: "lm-studio", Type: "lm-studio", API: "openai-responses", BaseURL: "http://127.0.0.1:1234/v1", Implicit: true}},
		{"models of its own", "ollama", `{"providers":{"ollama":{"baseUrl":"http://gpu:11434","api":"ollama","auth":"none","models":[{"id":"m"}]}}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := load(t, nil, map[string]string{"models.json": tc.json})
			var got *Discovery
			for _, d := range r.Discoveries() {
				if d.Provider == tc.provider {
					got = &d
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("discovery %+v, want %+v", got, tc.want)
			}
		})
	}
	// The overrides apply to what the server reports.
	r := load(t, nil, map[string]string{"models.json": `{"providers":{"ollama":{"modelOverrides":{"tiny:latest":{"contextWindow":3072}}}}}`})
	r.Add(engine.Model{ID: "tiny:latest", Provider: "ollama", API: "ollama", ContextWindow: 8192, MaxContextWindow: 131072},
		engine.Model{ID: "other:latest", Provider: "ollama", API: "ollama", ContextWindow: 8192, MaxContextWindow: 131072},
		engine.Model{ID: "odd:latest", Provider: "ollama", API: "ollama", ContextWindow: 8192, MaxContextWindow: 4096})
	if got := ids(r.Available()); !reflect.DeepEqual(got, []string{"ollama/tiny:latest", "ollama/other:latest", "ollama/odd:latest"}) {
		t.Errorf("Available: %v", got)
	}
	// A configured window is the window: it no longer grows.
	if m := find(t, r, "ollama", "tiny:latest"); m.ContextWindow != 3072 || m.MaxContextWindow != 0 {
		t.Errorf("override not applied: %+v", m)
	}
	if m := find(t, r, "ollama", "other:latest"); m.ContextWindow != 8192 || m.MaxContextWindow != 131072 {
		t.Errorf("the window that grows lost: %+v", m)
	}
	if m := find(t, r, "ollama", "odd:latest"); m.MaxContextWindow != 0 {
		t.Errorf("a largest window below the window kept: %+v", m)
	}
}

func TestAddReplacesAndAppliesOverrides(t *testing.T) {
	const yml = `providers:
  ollama:
    api: openai-responses
    baseUrl: http://127.0.0.1:11434
    auth: none
    discovery: {type: ollama}
    compat: {thinkLevels: true}
    modelOverrides:
      qwen3:8b: {name: Qwen 3, contextWindow: 8192}
`
	r := load(t, nil, map[string]string{"models.yml": yml})
	r.Add(engine.Model{ID: "a", Provider: "ollama"}, engine.Model{ID: "qwen3:8b", Provider: "ollama"})
	r.Add(engine.Model{ID: "a", Provider: "ollama", Name: "A2", Headers: map[string]string{"X-Api-Key": "sek", "X-Plain": "v"}})
	all := r.All()[len(catalog):]
	if len(all) != 2 || all[0].Name != "A2" || all[1].Name != "Qwen 3" || all[1].ContextWindow != 8192 {
		t.Errorf("after Add: %+v", all)
	}
	if a := all[0]; a.API != "openai-responses" || a.BaseURL != "http://127.0.0.1:11434" || string(a.Compat) != `{"thinkLevels":true}` {
		t.Errorf("provider configuration not applied: %+v", a)
	}
	if !reflect.DeepEqual(all[0].Headers, map[string]string{"X-Plain": "v"}) {
		t.Errorf("wire headers of an added model: %v", all[0].Headers)
	}
	if h := r.Headers(all[0]); h["X-Api-Key"] != "sek" || h["X-Plain"] != "v" {
		t.Errorf("Headers of an added model: %v", h)
	}
}

func TestNoConfigFiles(t *testing.T) {
	r, err := Load(t.TempDir(), nil)
	if err != nil || len(r.All()) != len(catalog) {
		t.Fatalf("empty agent dir: %v", err)
	}
	// An unreadable file (a directory) is an error naming it, not a ConfigError.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "models.yml"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir, nil)
	if err == nil || errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "models.yml") {
		t.Errorf("unreadable file: %v", err)
	}
	// A models.yml holding only comments configures nothing.
	if _, err := Load(agentDir(t, map[string]string{"models.yml": "# nothing yet\n"}), nil); err != nil {
		t.Errorf("comment-only file: %v", err)
	}
}

func TestMarshalledModelShape(t *testing.T) {
	r := load(t, nil, map[string]string{"models.json": piJSON})
	b, err := json.Marshal(find(t, r, "ollama", "llama3.1:8b"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"llama3.1:8b","name":"llama3.1:8b","api":"openai-completions","provider":"ollama","baseUrl":"http://localhost:11434/v1","reasoning":false,"input":["text"],"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},"contextWindow":128000,"maxTokens":16384}`
	if string(b) != want {
		t.Errorf("wire model:\n got %s\nwant %s", b, want)
	}
}

func ExampleRegistry_Resolve() {
	r, _ := Load("", nil)
	m, _ := r.Resolve("sonnet-4-5")
	fmt.Println(m.Provider + "/" + m.ID)
	// Output: anthropic/claude-sonnet-4-5
}

func TestProviders(t *testing.T) {
	const yml = `providers:
  zeta: {apiKey: ZETA_KEY}
  my-vllm: {api: openai-completions, discovery: {type: openai-compat}, baseUrl: http://x}
`
	r := load(t, nil, map[string]string{"models.yml": yml})
	want := []string{"anthropic", "openai", "google", "my-vllm", "ollama", "llama.cpp", "lm-studio", "zeta"}
	if got := r.Providers(); !reflect.DeepEqual(got, want) {
		t.Errorf("Providers: %v", got)
	}
}
