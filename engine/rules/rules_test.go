package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	agent := filepath.Join(root, "agent")
	write(t, filepath.Join(cwd, ".xcsh/rules/no-console.md"), "---\ncondition: 'console\\.log'\ninterruptMode: always\n---\nUse the logger.\n")
	write(t, filepath.Join(cwd, ".cursor/rules/no-console.mdc"), "---\ncondition: x\n---\nshadowed\n")
	write(t, filepath.Join(cwd, ".cursor/rules/ts/no-any.mdc"), "---\ndescription: No any\nglobs: \"*.ts, *.tsx\"\nttsr_trigger: ':\\s*any\\b'\nscope: \"tool:edit(*.ts), tool:write(*.ts)\"\n---\n\nDo not use any.\n")
	write(t, filepath.Join(agent, "rules/legacy.md"), "---\nttsrTrigger:\n  - TODO\n  - FIXME\n---\nNo TODOs.\n")
	write(t, filepath.Join(cwd, ".windsurf/rules/plain.md"), "# Just guidance\nNo frontmatter.\n")
	write(t, filepath.Join(cwd, ".omp/rules/broken.md"), "---\ncondition: '('\n---\nbad\n")
	write(t, filepath.Join(cwd, ".omp/rules/badyaml.md"), "---\ncondition: [a\n---\nbad\n")
	// The project root holds .git: its .clinerules is found from proj.
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".clinerules/think.md"), "---\ncondition: hmm\nscope: thinking\n---\nThink less.\n")
	var log bytes.Buffer
	got := Discover(cwd, agent, &log)
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	if strings.Join(names, " ") != "no-console legacy no-any think" {
		t.Fatalf("rules %v", names)
	}
	if r := got[0]; r.Content != "Use the logger." || r.Path != filepath.Join(cwd, ".xcsh/rules/no-console.md") || r.InterruptMode != "always" {
		t.Errorf("no-console %+v", r)
	}
	if r := got[1]; strings.Join(r.Condition, ",") != "TODO,FIXME" {
		t.Errorf("legacy %+v", r)
	}
	if r := got[2]; strings.Join(r.Globs, ",") != "*.ts,*.tsx" || strings.Join(r.Scope, ",") != "tool:edit(*.ts),tool:write(*.ts)" || r.Description != "No any" {
		t.Errorf("no-any %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || !strings.Contains(log.String(), "broken.md: condition \"(\"") || !strings.Contains(log.String(), "badyaml.md: frontmatter") {
		t.Errorf("log:\n%s", log.String())
	}
}
