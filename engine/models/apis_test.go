package models

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestWithAPIs: given the APIs this build has adapters for, a file naming
// another API fails the load with the file, the line, the field and the
// APIs that work; without the option every API the family knows loads.
func TestWithAPIs(t *testing.T) {
	t.Parallel()
	works := WithAPIs("openai-completions", "ollama", "fake")
	const list = "openai-completions, ollama, fake"
	tests := []struct {
		name, file, body, want string
	}{
		{"provider api without an adapter", "models.json", `{"providers": {"gem": {"baseUrl": "http://x", "auth": "none",
  "api": "google-generative-ai", "models": [{"id": "m"}]}}}`,
			"2: providers.gem.api: google-generative-ai has no adapter in this build; the APIs that work: " + list},
		{"model api without an adapter", "models.yml", `providers:
  p:
    baseUrl: http://x
    api: openai-completions
    auth: none
    models:
      - id: a
      - id: b
        api: bedrock-converse-stream
`, "9: providers.p.models[1].api: bedrock-converse-stream has no adapter in this build; the APIs that work: " + list},
		{"discovery api without an adapter", "models.yml", "providers:\n  x:\n    api: cursor-agent\n    discovery: {type: openai-compat}\n",
			"3: providers.x.api: cursor-agent has no adapter in this build; the APIs that work: " + list},
		{"unknown api lists the APIs that work", "models.json", `{"providers": {"p": {"api": "telepathy"}}}`,
			"1: providers.p.api: must be one of " + list},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := agentDir(t, map[string]string{tt.file: tt.body})
			_, err := Load(dir, nil, works)
			if want := filepath.Join(dir, tt.file) + ":" + tt.want; err == nil || err.Error() != want {
				t.Fatalf("error\n got %v\nwant %s", err, want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("not a *ConfigError wrapping ErrInvalidConfig: %T", err)
			}
			if _, err := Load(dir, nil); tt.name != "unknown api lists the APIs that work" && err != nil {
				t.Errorf("without WithAPIs: %v", err)
			}
		})
	}

	dir := agentDir(t, map[string]string{"models.yml": "providers:\n  p: {baseUrl: http://x, api: ollama, auth: none, models: [{id: a, api: fake}]}\n"})
	r, err := Load(dir, nil, works)
	if err != nil {
		t.Fatalf("APIs that work refused: %v", err)
	}
	if m, ok := r.Find("p", "a"); !ok || m.API != "fake" {
		t.Errorf("model p/a = %+v, %v", m, ok)
	}
}
