package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
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

func TestDiscoverTTSR(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cwd := filepath.Join(root, "proj")
	agent := filepath.Join(root, "agent")
	write(t, filepath.Join(cwd, ".xcsh/rules/no-console.md"), "---\ncondition: 'console\\.log'\ninterruptMode: always\n---\nUse the logger.\n")
	write(t, filepath.Join(cwd, ".cursor/rules/no-console.mdc"), "---\ncondition: x\n---\nshadowed\n")
	write(t, filepath.Join(cwd, ".cursor/rules/ts/no-any.mdc"), "---\ndescription: No any\nglobs: \"*.ts, *.tsx\"\nttsr_trigger: ':\\s*any\\b'\nscope: \"tool:edit(*.ts), tool:write(*.ts)\"\n---\n\nDo not use any.\n")
	write(t, filepath.Join(agent, "rules/legacy.md"), "---\nttsrTrigger:\n  - TODO\n  - FIXME\n---\nNo TODOs.\n")
	write(t, filepath.Join(cwd, ".omp/rules/broken.md"), "---\ncondition: '('\n---\nbad\n")
	write(t, filepath.Join(cwd, ".omp/rules/badtype.md"), "---\ncondition: {a: b}\n---\nbad\n")
	// The project root holds .git: its .clinerules is found from proj.
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".clinerules/think.md"), "---\ncondition: hmm\nscope: thinking\n---\nThink less.\n")
	var log bytes.Buffer
	got := Discover(cwd, agent, &log).TTSR
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
	if len(lines) != 2 || !strings.Contains(log.String(), "broken.md: condition \"(\"") || !strings.Contains(log.String(), "badtype.md: condition: want text or a list of text; skipped") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestClassify: each family's format, applied as its tool means it.
func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, text string
		apply            string   // "" when skipped
		globs            []string // of a files rule
		log              string   // a substring of the log, "" for none
	}{
		{"cursor always", ".cursor/rules/a.mdc", "---\ndescription: Style\nglobs:\nalwaysApply: true\n---\nUse tabs.\n", engine.RuleAlways, nil, ""},
		{"cursor auto attached, unquoted globs", ".cursor/rules/a.mdc", "---\ndescription: TS\nglobs: **/*.ts, src/*.{js,jsx} # web\nalwaysApply: false\n---\nStrict.\n", engine.RuleFiles, []string{"**/*.ts", "src/*.{js,jsx}"}, ""},
		{"cursor agent requested", ".cursor/rules/a.mdc", "---\ndescription: Database migrations\nglobs:\nalwaysApply: false\n---\nUse goose.\n", engine.RuleRequested, nil, ""},
		{"cursor manual", ".cursor/rules/a.mdc", "---\ndescription:\nglobs:\nalwaysApply: false\n---\nOnly when asked.\n", "", nil, "a manual rule, applied only when @-mentioned in Cursor"},
		{"cursor plain file", ".cursor/rules/a.mdc", "Only when asked.\n", "", nil, "a manual rule, applied only when @-mentioned in Cursor"},
		{"cursor alwaysApply as text", ".cursor/rules/a.mdc", "---\nalwaysApply: \"true\"\n---\nx\n", "", nil, `alwaysApply: want true or false, got "true"; skipped`},
		{"windsurf always_on", ".windsurf/rules/a.md", "---\ntrigger: always_on\n---\nBe brief.\n", engine.RuleAlways, nil, ""},
		{"windsurf glob", ".windsurf/rules/a.md", "---\ntrigger: glob\nglobs: \"*.py\"\n---\nType hints.\n", engine.RuleFiles, []string{"*.py"}, ""},
		{"windsurf glob without globs", ".windsurf/rules/a.md", "---\ntrigger: glob\n---\nx\n", "", nil, "trigger: glob needs globs"},
		{"windsurf model_decision", ".windsurf/rules/a.md", "---\ntrigger: model_decision\ndescription: When writing SQL\n---\nx\n", engine.RuleRequested, nil, ""},
		{"windsurf manual", ".windsurf/rules/a.md", "---\ntrigger: manual\n---\nx\n", "", nil, "trigger: manual: Windsurf applies it only when @-mentioned"},
		{"windsurf unknown trigger", ".windsurf/rules/a.md", "---\ntrigger: sometimes\n---\nx\n", "", nil, `unknown trigger "sometimes"`},
		{"windsurf plain", ".windsurf/rules/a.md", "# Guidance\n", "", nil, "no trigger: a manual rule"},
		{"cline plain", ".clinerules/a.md", "Run make test.\n", engine.RuleAlways, nil, ""},
		{"cline single file", ".clinerules", "Run make test.\n", engine.RuleAlways, nil, ""},
		{"cline paths", ".clinerules/a.md", "---\npaths:\n  - \"src/components/**\"\n---\nHooks only.\n", engine.RuleFiles, []string{"src/components/**"}, ""},
		{"claude plain", ".claude/rules/a.md", "# Testing\nUse table tests.\n", engine.RuleAlways, nil, ""},
		{"claude paths unquoted", ".claude/rules/a.md", "---\npaths: src/**/*.{ts,tsx}\n---\nStrict.\n", engine.RuleFiles, []string{"src/**/*.{ts,tsx}"}, ""},
		{"xcsh plain", ".xcsh/rules/a.md", "Prefer small commits.\n", engine.RuleAlways, nil, ""},
		{"omp plain", ".omp/rules/a.md", "x\n", "", nil, "a manual rule"},
		{"turned off", ".cursor/rules/a.mdc", "---\nalwaysApply: true\nenabled: false\n---\nx\n", "", nil, ""},
		{"no text", ".cursor/rules/a.mdc", "---\nalwaysApply: true\n---\n\n", "", nil, "the rule has no text; skipped"},
		{"description with a colon", ".cursor/rules/a.mdc", "---\ndescription: Use when: writing SQL\nalwaysApply: false\n---\nx\n", engine.RuleRequested, nil, "invalid YAML frontmatter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cwd := t.TempDir()
			path := filepath.Join(cwd, tc.file)
			write(t, path, tc.text)
			var log bytes.Buffer
			found := Discover(cwd, "", &log)
			if len(found.TTSR) != 0 {
				t.Fatalf("TTSR rules %+v", found.TTSR)
			}
			switch {
			case tc.apply == "" && len(found.Prompt) != 0:
				t.Errorf("loaded %+v", found.Prompt)
			case tc.apply != "":
				if len(found.Prompt) != 1 {
					t.Fatalf("rules %+v; log %s", found.Prompt, log.String())
				}
				r := found.Prompt[0]
				wantName := "a"
				if tc.file == ".clinerules" {
					wantName = "clinerules"
				}
				if r.Apply != tc.apply || r.Name != wantName || r.Path != path || strings.Join(r.Globs, "|") != strings.Join(tc.globs, "|") {
					t.Errorf("rule %+v", r)
				}
				if tc.apply == engine.RuleFiles && r.Base != cwd {
					t.Errorf("base %s, want %s", r.Base, cwd)
				}
			}
			if tc.log == "" && log.Len() > 0 || !strings.Contains(log.String(), tc.log) {
				t.Errorf("log %q, want %q", log.String(), tc.log)
			}
			if tc.log != "" && !strings.Contains(log.String(), path) {
				t.Errorf("log %q does not name the file", log.String())
			}
		})
	}
}

// TestDiscoverNearestFirst: every rules folder of the project is read,
// nearest first; a file rule's globs are relative to the folder holding
// its rules folder, a user rule's to the project root.
func TestDiscoverNearestFirst(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	api := filepath.Join(root, "api")
	agent := filepath.Join(root, "agent-home")
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".cursor/rules/style.mdc"), "---\nalwaysApply: true\n---\nroot style\n")
	write(t, filepath.Join(api, ".cursor/rules/style.mdc"), "---\nalwaysApply: true\n---\napi style\n")
	write(t, filepath.Join(root, ".cursor/rules/go.mdc"), "---\nglobs: \"**/*.go\"\n---\ngo rule\n")
	write(t, filepath.Join(agent, "rules/mine.md"), "---\nglobs: \"*.md\"\n---\nmine\n")
	var log bytes.Buffer
	found := Discover(api, agent, &log)
	if log.Len() > 0 {
		t.Errorf("log %s", log.String())
	}
	got := map[string]engine.PromptRule{}
	var names []string
	for _, r := range found.Prompt {
		got[r.Name] = r
		names = append(names, r.Name)
	}
	if strings.Join(names, " ") != "mine style go" {
		t.Fatalf("rules %v", names)
	}
	if got["style"].Content != "api style" {
		t.Errorf("the nearer rule must win: %+v", got["style"])
	}
	if got["go"].Base != root || got["mine"].Base != root {
		t.Errorf("bases %s %s, want %s", got["go"].Base, got["mine"].Base, root)
	}
}

func TestQuoteRawGlobs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"globs: **/*.ts\n":           "globs: \"**/*.ts\"\n",
		"globs: \"*.ts\"\n":          "globs: \"*.ts\"\n",
		"globs:\n  - a\n":            "globs:\n  - a\n",
		"globs: [a, b]\n":            "globs: [a, b]\n",
		"paths: {a,b}/** # note\n":   "paths: \"{a,b}/**\"\n",
		"description: **bold**\n":    "description: **bold**\n",
		"globs: *.ts, *.tsx  \nx: 1": "globs: \"*.ts, *.tsx\"\nx: 1",
	} {
		if got := string(quoteRawGlobs([]byte(in))); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
