package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetupModels(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"x"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	noKeys := func(k string) string {
		if k == "PI_CODING_AGENT_DIR" {
			return dir
		}
		return ""
	}
	withKey := func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "sk-test"
		}
		return noKeys(k)
	}
	for _, tc := range []struct {
		provider, model, wantID, wantErr string
		env                              func(string) string
	}{
		{"fake", "", "demo", "", noKeys},
		{"fake", "demo", "demo", "", noKeys},
		{"", "fake/demo", "demo", "", noKeys},
		{"fake", "fake/demo", "demo", "", noKeys},
		{"fake", script, "s", "", noKeys},
		{"", script, "s", "", noKeys},
		{"nosuch", "", "", `Error: unknown provider "nosuch" (nearest: `, noKeys},
		{"", "", "", "Error: no models available: use --provider fake", noKeys},
		{"fake", "/does/not/exist.json", "", "Error: ", noKeys},
		{"anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5", "", noKeys},
		{"", "anthropic/claude-sonnet-4-5:low", "claude-sonnet-4-5", "", noKeys},
		{"anthropic", "nosuch-model", "", `Error: model "anthropic/nosuch-model" not found; nearest of anthropic's models: `, noKeys},
		{"fake", "demo:high", "demo", "", noKeys},
		{"", script + ":low", "s", "", noKeys},
		{"", "", "", "", withKey}, // the first available model
	} {
		ms, err := setupModels(&options{provider: tc.provider, model: tc.model}, tc.env, true, false, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("%q %q: err %v, want prefix %q", tc.provider, tc.model, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q %q: %v", tc.provider, tc.model, err)
			continue
		}
		if tc.wantID != "" && ms.model.ID != tc.wantID {
			t.Errorf("%q %q: model %s, want %s", tc.provider, tc.model, ms.model.ID, tc.wantID)
		}
		if tc.wantID == "" && ms.model.Provider != "anthropic" {
			t.Errorf("with an Anthropic key the first available model is %s/%s", ms.model.Provider, ms.model.ID)
		}
	}
	// An invalid models.yml is a start-up error naming the file and line.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "models.yml"), []byte("providers:\n  x:\n    baseUrl: http://h\n    api: openai-completions\n    auth: none\n    models:\n      - id: m\n        contextWindow: -1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := setupModels(&options{provider: "fake"}, func(k string) string {
		if k == "PI_CODING_AGENT_DIR" {
			return bad
		}
		return ""
	}, true, false, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "models.yml:8:") {
		t.Fatalf("invalid models.yml: %v", err)
	}
}
