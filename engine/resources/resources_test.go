package resources

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a b  c", []string{"a", "b", "c"}},
		{`"hello world" 'it''s' x`, []string{"hello world", "its", "x"}},
		{`a"b c"d`, []string{"ab cd"}},
		{`""`, []string{""}},
		{"one\ttwo\nthree", []string{"one", "two", "three"}},
		{`"unclosed quote`, []string{"unclosed quote"}},
	}
	for _, c := range cases {
		if got := ParseArgs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	t.Parallel()
	args := []string{"a", "b c", "d", "e"}
	cases := []struct{ body, want string }{
		{"$1|$2|$5", "a|b c|"},
		{"$@", "a b c d e"},
		{"$ARGUMENTS!", "a b c d e!"},
		{"${@:2}", "b c d e"},
		{"${@:2:2}", "b c d"},
		{"${@:0}", "a b c d e"},
		{"${@:9}", ""},
		{"${@:3:10}", "d e"},
		{"$0 $10", " "},
		{"no placeholders", "no placeholders"},
		{"cost: $$1", "cost: $a"},
	}
	for _, c := range cases {
		if got := Substitute(c.body, args); got != c.want {
			t.Errorf("Substitute(%q) = %q, want %q", c.body, got, c.want)
		}
	}
	// One pass: an argument's own placeholders are not substituted again.
	if got := Substitute("$1 $2", []string{"$2", "x"}); got != "$2 x" {
		t.Errorf("re-substituted: %q", got)
	}
}

func TestParseDocument(t *testing.T) {
	t.Parallel()
	d := parseDocument("\uFEFF---\r\nname: x\r\ndescription: >\r\n  folded\r\n  text\r\n---\r\n\r\nBody\r\n")
	if d.problem != "" || d.str("name") != "x" || d.str("description") != "folded text" || d.body != "Body" {
		t.Errorf("valid YAML: %+v", d)
	}
	d = parseDocument("---\ndescription: Use when: things break\nname: fixer\n---\nBody")
	if d.problem == "" || d.str("description") != "Use when: things break" || d.str("name") != "fixer" {
		t.Errorf("lenient: %+v", d)
	}
	d = parseDocument("no frontmatter\n---\n")
	if len(d.fields) != 0 || d.body != "no frontmatter\n---" {
		t.Errorf("none: %+v", d)
	}
	d = parseDocument("---\nname: x\n")
	if d.problem == "" {
		t.Errorf("unclosed: %+v", d)
	}
}

// tree writes files (path → content) under a new directory.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"agent/AGENTS.md":                        "user rule",
		"agent/skills/alpha/SKILL.md":            "---\nname: alpha\ndescription: First alpha\n---\nAlpha body",
		"agent/prompts/review.md":                "---\ndescription: Review code\nargument-hint: <files>\n---\nReview $1 then ${@:2}",
		"repo/.git/HEAD":                         "",
		"repo/AGENTS.md":                         "repo rule",
		"repo/CLAUDE.md":                         "ignored: AGENTS.md sits beside it",
		"repo/sub/CLAUDE.md":                     "sub rule",
		"repo/sub/.claude/skills/alpha/SKILL.md": "---\nname: alpha\ndescription: Second alpha\n---\n",
		"repo/.claude/skills/beta/SKILL.md":      "---\nname: beta\ndescription: Beta\ndisable-model-invocation: true\n---\nBeta body",
		"repo/.claude/skills/bad/SKILL.md":       "---\nname: bad\n---\nno description",
		"repo/.claude/commands/fix.md":           "Fix the bug described here, please, in as few lines as you can manage",
		"home/.claude/commands/review.md":        "shadowed",
	})
	var log bytes.Buffer
	res := Load(Options{Cwd: filepath.Join(dir, "repo/sub"), AgentDir: filepath.Join(dir, "agent"), Home: filepath.Join(dir, "home"), Log: &log})
	var ctx []string
	for _, c := range res.Context {
		ctx = append(ctx, c.Content)
	}
	if want := []string{"user rule", "repo rule", "sub rule"}; !reflect.DeepEqual(ctx, want) {
		t.Errorf("context %q, want %q", ctx, want)
	}
	want := []engine.PromptSkill{{Name: "alpha", Description: "First alpha", Path: filepath.Join(dir, "agent/skills/alpha/SKILL.md")}}
	if !reflect.DeepEqual(res.Skills, want) {
		t.Errorf("skills %+v, want %+v", res.Skills, want)
	}
	var names []string
	for _, c := range res.Commands.Commands() {
		names = append(names, c.Source+":"+c.Name)
	}
	if want := []string{"prompt:review", "prompt:fix", "skill:skill:alpha", "skill:skill:beta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("commands %q, want %q", names, want)
	}
	for _, w := range []string{"description is required; skipped", `skill "alpha" at `, `prompt template "review" at `} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.String())
		}
	}
	if got, _ := res.Commands.Expand("review", `"a b" c d`); got != "Review a b then c d" {
		t.Errorf("template: %q", got)
	}
	got, _ := res.Commands.Expand("skill:beta", " now ")
	sk := filepath.Join(dir, "repo/.claude/skills/beta")
	if want := "<skill name=\"beta\" location=\"" + sk + "/SKILL.md\">\nReferences are relative to " + sk + ".\n\nBeta body\n</skill>\n\nnow"; got != want {
		t.Errorf("skill:\n%s\nwant\n%s", got, want)
	}
	if _, ok := res.Commands.Expand("nope", ""); ok {
		t.Error("unknown command expanded")
	}
	if c := res.Commands.Commands()[1]; c.Description != "Fix the bug described here, please, in as few lines as you c..." {
		t.Errorf("first-line description %q", c.Description)
	}
}

func TestLoadOptions(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"AGENTS.md":                "rule",
		".pi/skills/x/SKILL.md":    "---\ndescription: X\n---\n",
		"extra/only.md":            "---\ndescription: Only\n---\n",
		"cli/one/SKILL.md":         "---\nname: one\ndescription: One\n---\n",
		".xcsh/prompts/t.md":       "T",
		"fifo-dir/placeholder.txt": "",
	})
	var log bytes.Buffer
	res := Load(Options{Cwd: dir, NoContext: true, NoSkills: true, NoTemplates: true,
		SkillPaths: []string{"cli", "missing"}, TemplatePaths: []string{"extra/only.md"}, Log: &log})
	if len(res.Context) != 0 {
		t.Errorf("context with --no-context-files: %+v", res.Context)
	}
	var names []string
	for _, c := range res.Commands.Commands() {
		names = append(names, c.Name+"/"+c.Info.Source+"/"+c.Info.Scope)
	}
	if want := []string{"only/cli/temporary", "skill:one/cli/temporary"}; !reflect.DeepEqual(names, want) {
		t.Errorf("commands %q, want %q", names, want)
	}
	if !strings.Contains(log.String(), "skill path "+filepath.Join(dir, "missing")+": does not exist") {
		t.Errorf("log: %s", log.String())
	}
	if res := Load(Options{Cwd: filepath.Join(dir, "none"), NoContext: true, NoSkills: true, NoTemplates: true}); res.Commands != nil {
		t.Errorf("nothing configured: %+v", res)
	}
}

func TestReadFileRefusesNonRegular(t *testing.T) {
	t.Parallel()
	if _, err := readFile(t.TempDir()); err == nil {
		t.Error("a directory was read")
	}
	if _, err := readFile(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}
