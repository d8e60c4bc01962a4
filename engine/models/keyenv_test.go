package models

import (
	"slices"
	"testing"
)

func TestKeyEnvNames(t *testing.T) {
	t.Parallel()
	const yml = `providers:
  corp:
    baseUrl: https://corp.example/v1
    api: openai-completions
    apiKey: CORP_KEY
    headers: {X-Token: CORP_TOKEN, X-Team: platform, X-Run: "!echo hi"}
    models:
      - id: m1
        headers: {X-Model-Key: MODEL_KEY_VAR}
  literal:
    baseUrl: https://lit.example/v1
    api: openai-completions
    apiKey: sk-literal-not-a-name
    models: [{id: m2}]
`
	r := load(t, envOf(), map[string]string{"models.yml": yml})
	got := r.KeyEnvNames()
	for _, want := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "GH_TOKEN", "CORP_KEY", "CORP_TOKEN", "MODEL_KEY_VAR"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s in %q", want, got)
		}
	}
	for _, not := range []string{"sk-literal-not-a-name", "platform", "!echo hi"} {
		if slices.Contains(got, not) {
			t.Errorf("%q is not a variable name: %q", not, got)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("not sorted: %q", got)
	}
}
