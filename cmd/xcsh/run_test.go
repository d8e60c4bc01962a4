package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncodeCwd(t *testing.T) {
	home, _ := os.UserHomeDir()
	tmp := os.TempDir()
	cases := map[string]string{
		filepath.Join(home, "code", "pi"): "-code-pi",
		home:                              "-",
		filepath.Join(tmp, "x", "y"):      "-tmp-x-y",
		tmp:                               "-tmp",
		"/srv/pi":                         "--srv-pi--",
	}
	for in, want := range cases {
		if got := encodeCwd(in); got != want {
			t.Errorf("encodeCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSessionPath(t *testing.T) {
	got := sessionPath("/s", "/srv/pi", 1767225600123, "00000000000000ab")
	if want := "/s/2026-01-01T00-00-00-123Z_00000000000000ab.jsonl"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	t.Setenv("PI_CODING_AGENT_DIR", "/agent")
	t.Setenv("XCSH_SESSION_DIR", "")
	got = sessionPath("", "/srv/pi", 0, "1")
	if !strings.HasPrefix(got, "/agent/sessions/--srv-pi--/1970-01-01T00-00-00-000Z_1") {
		t.Fatalf("default dir: %q", got)
	}
}

func TestResolveModel(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"x"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		provider, model, wantID, wantErr string
	}{
		{"fake", "", "demo", ""},
		{"fake", "demo", "demo", ""},
		{"", "fake/demo", "demo", ""},
		{"fake", "fake/demo", "demo", ""},
		{"fake", script, "s", ""},
		{"", script, "s", ""},
		{"nosuch", "", "", `Unknown provider "nosuch". Use --list-models to see available providers/models.`},
		{"", "", "", "No models available."},
		{"fake", "/does/not/exist.json", "", "Error: "},
	} {
		_, m, err := resolveModel(&options{provider: tc.provider, model: tc.model}, os.Stderr)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("%q %q: err %v, want prefix %q", tc.provider, tc.model, err, tc.wantErr)
			}
			continue
		}
		if err != nil || m.ID != tc.wantID {
			t.Errorf("%q %q: model %v err %v, want %s", tc.provider, tc.model, m, err, tc.wantID)
		}
	}
}
