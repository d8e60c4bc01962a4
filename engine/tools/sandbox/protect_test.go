package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConfigPath(t *testing.T) {
	t.Parallel()
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{"/w/proj", "/w/proj/.claude/mine", "/tmp"}, Protected: []string{"/w/proj/home/agent"}}
	for path, want := range map[string]string{
		"/w/proj/.mcp.json":                   "/w/proj/.mcp.json",
		"/w/proj/.xcsh/extensions/x":          "/w/proj/.xcsh",
		"/w/proj/sub/.mcp.json":               "/w/proj/sub/.mcp.json", // any depth, for the file tools
		"/w/proj/.git/hooks/pre-commit":       "/w/proj/.git",
		"/w/proj/home/agent/mcp.json":         "/w/proj/home/agent",
		"/tmp/x/.cursor/rules/r.mdc":          "/tmp/x/.cursor",
		"/w/proj/src/main.go":                 "",
		"/w/proj/.github/workflows/ci.yml":    "",
		"/w/proj/.claude/mine/skill/SKILL.md": "", // a root the user chose inside one
		"/w/proj":                             "",
		"/w/other/.mcp.json":                  "", // outside: refused by the roots, not this rule
	} {
		if got := p.configPath(path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	ro := &Policy{Mode: ReadOnly}
	if got := ro.configPath("/w/proj/.mcp.json"); got != "" {
		t.Errorf("read-only has its own rule: %q", got)
	}
}

// The file tools refuse a configuration path by its name, existing or
// not, reached through a link or a link itself, and make no directory on
// the way.
func TestOpenParentRefusesConfigPaths(t *testing.T) {
	t.Parallel()
	ws := realTemp(t)
	if err := os.MkdirAll(filepath.Join(ws, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("cfg/mcp.json", filepath.Join(ws, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".xcsh", filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{ws}}
	var denied *DeniedError
	for _, c := range []struct{ requested, target string }{
		{ws + "/.mcp.json", ws + "/cfg/mcp.json"},                      // a link named .mcp.json
		{ws + "/.xcsh/extensions/evil", ws + "/.xcsh/extensions/evil"}, // missing directories
		{ws + "/alias/mcp.json", ws + "/.xcsh/mcp.json"},               // through a link
		{ws + "/sub/.git/hooks/pre-commit", ws + "/sub/.git/hooks/pre-commit"},
	} {
		d, err := p.OpenParent(c.requested, c.target, true)
		if !errors.As(err, &denied) || denied.Config == "" || !strings.Contains(err.Error(), "keeps") {
			d.Close()
			t.Fatalf("%s: %v", c.requested, err)
		}
	}
	for _, dir := range []string{".xcsh", "sub"} {
		if _, err := os.Stat(filepath.Join(ws, dir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a refused write made %s", dir)
		}
	}
	d, err := p.OpenParent(ws+"/src/new.go", ws+"/src/new.go", true)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestMountsLayout(t *testing.T) {
	t.Parallel()
	base := realTemp(t)
	ws, main := filepath.Join(base, "ws"), filepath.Join(base, "main")
	for _, d := range []string{
		ws + "/.git/hooks", ws + "/.git/modules/lib/hooks", ws + "/.claude/skills", ws + "/shared/cursor", ws + "/home/agent",
		main + "/.git/hooks", main + "/.git/worktrees/wt",
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range map[string]string{
		ws + "/.git/config": "", ws + "/.git/modules/lib/HEAD": "", ws + "/.git/modules/lib/config": "", ws + "/.mcp.json": "{}",
		main + "/.git/config": "", main + "/.git/worktrees/wt/HEAD": "", main + "/.git/worktrees/wt/commondir": "../..",
		main + "/wt/.git": "gitdir: " + main + "/.git/worktrees/wt\n",
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("shared/cursor", ws+"/.cursor"); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{ws, main + "/wt"}}
	p.Protect(ws + "/home/agent")
	m := p.Mounts()
	wantRO := []string{ws + "/.claude", ws + "/.mcp.json", ws + "/home/agent", ws + "/shared/cursor",
		ws + "/.git/config", ws + "/.git/hooks", main + "/wt/.git",
		ws + "/.git/modules/lib/config", ws + "/.git/modules/lib/hooks"}
	slices.Sort(wantRO)
	got := slices.Clone(m.ReadOnly)
	slices.Sort(got)
	// The worktree's repository (main/.git) is outside the roots: read-only
	// already, not listed.
	if !slices.Equal(got, wantRO) {
		t.Errorf("read-only:\n%q\nwant\n%q", got, wantRO)
	}
	wantPins := []string{ws + "/.git", ws + "/home", ws + "/shared", ws + "/.git/modules", ws + "/.git/modules/lib"}
	slices.Sort(wantPins)
	pins := slices.Clone(m.Pinned)
	slices.Sort(pins)
	if !slices.Equal(pins, wantPins) {
		t.Errorf("pinned:\n%q\nwant\n%q", pins, wantPins)
	}
	// Parents are mounted before what lies in them.
	for _, list := range [][]string{m.Pinned, m.ReadOnly} {
		for i := 1; i < len(list); i++ {
			if strings.Count(list[i], "/") < strings.Count(list[i-1], "/") {
				t.Errorf("out of order: %q", list)
			}
		}
	}
	if ro := (&Policy{Mode: ReadOnly}).Mounts(); len(ro.ReadOnly)+len(ro.Pinned) != 0 {
		t.Errorf("read-only mode lays out nothing: %+v", ro)
	}
}
