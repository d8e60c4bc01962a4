package extension

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscoverFromSubfolder: a session started in a subfolder of a
// repository runs the project's extensions (root and nearer folders,
// nearest first, then the user's) and reads the project's settings lists;
// outside a repository a parent's extensions are not run.
func TestDiscoverFromSubfolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(p, s string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	write("repo/.xcsh/extensions/guard/extension.json", `{"command":["./guard"]}`, 0o644)
	write("repo/.xcsh/settings.json", `{"extensions":["tools/listed"]}`, 0o644)
	write("repo/.xcsh/tools/listed", "#!/bin/sh\n", 0o755)
	write("repo/api/.xcsh/extensions/near", "#!/bin/sh\n", 0o755)
	write("agent/extensions/user", "#!/bin/sh\n", 0o755)
	write("loose/.xcsh/extensions/parent", "#!/bin/sh\n", 0o755)
	write("loose/sub/keep", "", 0o644)

	specs, problems := Discover(Where{Cwd: filepath.Join(dir, "repo", "api"), AgentDir: filepath.Join(dir, "agent")})
	if len(problems) != 0 {
		t.Fatalf("problems %+v", problems)
	}
	var got []string
	for _, s := range specs {
		rel, _ := filepath.Rel(dir, s.Path)
		got = append(got, rel)
	}
	want := "repo/.xcsh/tools/listed repo/api/.xcsh/extensions/near repo/.xcsh/extensions/guard agent/extensions/user"
	if strings.Join(got, " ") != want {
		t.Errorf("from repo/api:\n got  %s\n want %s", strings.Join(got, " "), want)
	}

	specs, _ = Discover(Where{Cwd: filepath.Join(dir, "loose", "sub")})
	if len(specs) != 0 {
		t.Errorf("outside a repository a parent's extension runs: %+v", specs)
	}
}
