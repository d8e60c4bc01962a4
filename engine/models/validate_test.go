package models

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine/safefile"
)

// aliasBomb is the 1 KB models.yml of the round-2 probe: nine anchors,
// each a list of nine aliases of the one before: 9^9 nodes expanded.
const aliasBomb = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
providers:
  p: *i
`

// Every validation rule, with its exact text. want is the error after
// "<dir>/<file>:"; lines count from 1 at the file's first line.
func TestValidation(t *testing.T) {
	tests := []struct {
		name, file, body, want string
	}{
		{"context window must be positive", "models.yml", `providers:
  my-vllm:
    baseUrl: http://x
    api: openai-completions
    apiKey: K
    models:
      - id: a
        contextWindow: 0
`, "8: providers.my-vllm.models[0].contextWindow: must be positive"},
		{"max tokens must be positive", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
      - id: b
        maxTokens: -5
`, "9: providers.p.models[1].maxTokens: must be positive"},
		{"provider key in another case", "models.json", `{"providers": {"my-vllm": {
  "baseURL": "http://127.0.0.1:8000/v1", "api": "openai-completions", "auth": "none",
  "models": [{"id": "qwen3"}]}}}`, "2: providers.my-vllm.baseURL: unknown key, did you mean baseUrl?"},
		{"model key misspelt", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        contextWindw: 8192
`, "8: providers.p.models[0].contextWindw: unknown key, did you mean contextWindow?"},
		{"override key misspelt", "models.json", `{"providers": {"anthropic": {"modelOverrides": {"claude-opus-4-5": {"maxToken": 10}}}}}`,
			"1: providers.anthropic.modelOverrides.claude-opus-4-5.maxToken: unknown key, did you mean maxTokens?"},
		{"integer", "models.json", `{"providers": {"p": {"baseUrl": "http://x", "api": "openai-completions", "auth": "none",
  "models": [{"id": "a", "maxTokens": 1.5}]}}}`, "2: providers.p.models[0].maxTokens: must be an integer"},
		{"override context window", "models.yml", `providers:
  anthropic:
    modelOverrides:
      claude-opus-4-5:
        contextWindow: 0
`, "5: providers.anthropic.modelOverrides.claude-opus-4-5.contextWindow: must be positive"},
		{"models need baseUrl", "models.yml", `providers:
  p:
    api: openai-completions
    apiKey: K
    models: [{id: a}]
`, "2: providers.p.baseUrl: required when the provider defines models"},
		{"models need a key", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    models: [{id: a}]
`, "2: providers.p.apiKey: required when the provider defines models (or set auth: none)"},
		{"auth apiKey still needs a key", "models.json", `{
  "providers": {
    "p": {"baseUrl": "http://x", "api": "openai-completions", "auth": "apiKey", "models": [{"id": "a"}]}
  }
}`, "3: providers.p.apiKey: required when the provider defines models (or set auth: none)"},
		{"models need an api", "models.yml", `providers:
  p:
    baseUrl: http://x
    auth: none
    models:
      - id: a
        api: openai-completions
      - id: b
`, "8: providers.p.models[1].api: required: set api on the provider or on the model"},
		{"models need an id", "models.json", `{"providers": {"p": {"baseUrl": "http://x", "api": "openai-completions", "auth": "none",
  "models": [
    {"name": "no id"}
  ]}}}`, "3: providers.p.models[0].id: required"},
		{"override-only provider must set something", "models.yml", `providers:
  anthropic: {}
`, "2: providers.anthropic: must set models, baseUrl, headers, apiKey, auth: none, compat, modelOverrides or discovery"},
		{"discovery needs an api", "models.yml", `providers:
  ollama:
    baseUrl: http://127.0.0.1:11434
    auth: none
    discovery: {type: ollama}
`, "2: providers.ollama.api: required when discovery is enabled"},
		{"discovery type", "models.yml", `providers:
  o:
    api: openai-completions
    discovery:
      type: magic
`, "5: providers.o.discovery.type: must be ollama, llama.cpp, lm-studio or openai-compat"},
		{"auth value", "models.yml", `providers:
  o:
    auth: oauth
`, "3: providers.o.auth: must be apiKey or none"},
		{"input kinds", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        input: [text, audio]
`, "8: providers.p.models[0].input[1]: must be text or image"},
		{"thinking level", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        reasoning: true
        thinking:
          minLevel: max
`, "10: providers.p.models[0].thinking.minLevel: must be one of minimal, low, medium, high, xhigh"},
		{"thinking order", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        thinking: {minLevel: high, maxLevel: low}
`, "8: providers.p.models[0].thinking: minLevel is above maxLevel"},
		{"thinking mode", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        thinking: {mode: turbo}
`, "8: providers.p.models[0].thinking.mode: must be one of effort, budget, google-level, anthropic-adaptive, anthropic-budget-effort"},
		{"negative cost", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        cost:
          output: -1
`, "9: providers.p.models[0].cost.output: must not be negative"},
		{"string type", "models.yml", `providers:
  p:
    baseUrl: 8000
`, "3: providers.p.baseUrl: must be a string"},
		{"boolean type", "models.json", `{"providers": {"p": {"authHeader": "yes"}}}`, "1: providers.p.authHeader: must be a boolean"},
		{"number type", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
        contextWindow: lots
`, "8: providers.p.models[0].contextWindow: must be a number"},
		{"models is a list", "models.yml", `providers:
  p:
    models: {id: a}
`, "3: providers.p.models: must be a list"},
		{"headers are strings", "models.yml", `providers:
  p:
    headers:
      X-Retries: 3
`, "4: providers.p.headers.X-Retries: must be a string"},
		{"compat is a mapping", "models.yml", `providers:
  p:
    compat: [a]
`, "3: providers.p.compat: must be a mapping"},
		{"providers is a mapping", "models.json", `{"providers": []}`, "1: providers: must be a mapping"},
		{"root is a mapping", "models.yml", `- a
- b
`, "1: (root): must be a mapping with a providers key"},
		{"provider is a mapping", "models.yml", `providers:
  p: 3
`, "2: providers.p: must be a mapping"},
		{"yaml syntax", "models.yml", `providers:
  p:
    baseUrl: "http://x
`, "3: syntax error: found unexpected end of stream"},
		{"yaml duplicate key", "models.yml", `providers:
  p:
    api: openai-completions
    api: b
`, "4: syntax error: mapping key \"api\" already defined at line 3"},
		{"json syntax", "models.json", `{
  "providers": {
    "p": {"baseUrl": "http://x",}
  }
}`, "3: syntax error: invalid character '}' looking for beginning of object key string"},
		{"unknown api", "models.json", `{"providers": {"p": {"baseUrl": "http://x", "auth": "none",
  "api": "telepathy", "models": [{"id": "m"}]}}}`, "2: providers.p.api: must be one of " + strings.Join(knownAPIs, ", ")},
		{"unknown model api", "models.yml", `providers:
  p:
    baseUrl: http://x
    auth: none
    models:
      - id: m
        api: telepathy
`, "7: providers.p.models[0].api: must be one of " + strings.Join(knownAPIs, ", ")},
		{"file baseUrl", "models.json", `{"providers": {"p": {"baseUrl": "file:///etc/passwd", "api": "openai-completions",
  "auth": "none", "models": [{"id": "m"}]}}}`, "1: providers.p.baseUrl: must be an http:// or https:// URL"},
		{"baseUrl without a host", "models.yml", "providers:\n  p: {baseUrl: 'http:/x'}\n", "2: providers.p.baseUrl: must be an http:// or https:// URL"},
		{"yaml alias bomb", "models.yml", aliasBomb, "6: syntax error: aliases expand to more than 100000 nodes"},
		{"json truncated", "models.json", "{\n  \"providers\": {\n", "3: syntax error: unexpected end of JSON input"},
		{"json trailing data", "models.json", "{}\n{}\n", "2: syntax error: unexpected data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := agentDir(t, map[string]string{tt.file: tt.body})
			_, err := Load(dir, nil)
			want := filepath.Join(dir, tt.file) + ":" + tt.want
			if err == nil || err.Error() != want {
				t.Fatalf("error\n got %v\nwant %s", err, want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("not a *ConfigError wrapping ErrInvalidConfig: %T", err)
			}
		})
	}
}

// Configurations the rules accept, including the override-only forms.
func TestValidationAccepts(t *testing.T) {
	for name, body := range map[string]string{
		"baseUrl only":     "providers:\n  anthropic: {baseUrl: http://proxy}\n",
		"apiKey only":      "providers:\n  openai: {apiKey: OPENAI_KEY_2}\n",
		"auth none only":   "providers:\n  x: {auth: none}\n",
		"headers only":     "providers:\n  x: {headers: {}}\n",
		"compat only":      "providers:\n  x: {compat: {a: 1}}\n",
		"overrides only":   "providers:\n  x: {modelOverrides: {y: {name: z}}}\n",
		"discovery":        "providers:\n  x: {api: openai-completions, discovery: {type: lm-studio}}\n",
		"empty models":     "providers:\n  x: {models: []}\n",
		"no providers":     "providers:\n",
		"model-level api":  "providers:\n  x: {baseUrl: http://x, auth: none, models: [{id: a, api: anthropic-messages}]}\n",
		"unknown keys":     "version: 2\nproviders:\n  x: {auth: none, futureField: 1, models: [{id: a, api: fake, premiumMultiplier: 1}], baseUrl: http://x}\n",
		"anchors, aliases": "defaults: &d {api: openai-completions, auth: none, baseUrl: http://x}\nproviders:\n  x: *d\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Load(agentDir(t, map[string]string{"models.yml": body}), nil); err != nil {
				t.Errorf("rejected: %v", err)
			}
		})
	}
}

// A models file that is not a regular file is refused at once: a FIFO
// nobody writes, a link to /dev/zero, a directory.
func TestSpecialModelsFiles(t *testing.T) {
	for name, mk := range map[string]func(string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"dev zero":  func(p string) error { return os.Symlink("/dev/zero", p) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "models.json")
			if err := mk(p); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := Load(dir, nil); done <- err }()
			select {
			case err := <-done:
				if err == nil || !errors.Is(err, safefile.ErrNotRegular) || !strings.HasPrefix(err.Error(), "models: "+p+": it is a ") {
					t.Errorf("got %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Load did not return")
			}
		})
	}
}
