package sessionfile

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
		"/srv/a:b":                        "--srv-a-b--",
	}
	for in, want := range cases {
		if got := EncodeCwd(in); got != want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPaths(t *testing.T) {
	if got, want := FileName(1767225600123, "00000000000000ab"), "2026-01-01T00-00-00-123Z_00000000000000ab.jsonl"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.xcsh/agent"},
		{map[string]string{"HOME": "/h", "PI_CONFIG_DIR": ".pi"}, "/h/.pi/agent"},
		{map[string]string{"HOME": "/h", "PI_CONFIG_DIR": "/etc/pi"}, "/etc/pi/agent"},
		{map[string]string{"HOME": "/h", "PI_CODING_AGENT_DIR": "/agent"}, "/agent"},
	} {
		if got := AgentDir(env(tc.env)); got != tc.want {
			t.Errorf("AgentDir(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
	e := env(map[string]string{"PI_CODING_AGENT_DIR": "/agent"})
	if got := ResolveDir("/s", e, "/srv/pi"); got != "/s" {
		t.Errorf("override: %q", got)
	}
	if got := ResolveDir("", env(map[string]string{"XCSH_SESSION_DIR": "/x"}), "/srv/pi"); got != "/x" {
		t.Errorf("env: %q", got)
	}
	if got := ResolveDir("", e, "/srv/pi"); got != "/agent/sessions/--srv-pi--" {
		t.Errorf("default: %q", got)
	}
	if got := ResolveDir("rel", e, "/srv/pi"); !filepath.IsAbs(got) || !strings.HasSuffix(got, "/rel") {
		t.Errorf("relative override not made absolute: %q", got)
	}
}
