package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// The file tools keep to the sandbox's rules on the resolved path: write
// and edit inside the workspace (new directories included), never outside
// it, whether named directly, by .. or through a symlink; read stays open.
func TestFileToolsInSandbox(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(tree(t, map[string]string{"ws/in.txt": "hello", "out/secret.txt": "keep"}))
	if err != nil {
		t.Fatal(err)
	}
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for link, target := range map[string]string{"escape": out, "linkfile": filepath.Join(out, "secret.txt")} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Cwd: ws, Sandbox: &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{ws}}}
	w, e, r := NewWrite(o), NewEdit(o), NewRead(o)

	if res := call(t, w, `{"path":"new/dir/f.txt","content":"x"}`); res.IsError {
		t.Fatalf("write inside: %s", text(res))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new", "dir", "f.txt")); string(b) != "x" {
		t.Fatalf("content %q", b)
	}
	if res := call(t, e, `{"edits":[{"path":"in.txt","old_text":"hello","new_text":"bye"}]}`); res.IsError {
		t.Fatalf("edit inside: %s", text(res))
	}
	for _, args := range []string{
		`{"path":"` + filepath.Join(out, "a.txt") + `","content":"x"}`,
		`{"path":"../out/b.txt","content":"x"}`,
		`{"path":"escape/c.txt","content":"x"}`,
		`{"path":"escape/deep/d.txt","content":"x"}`,
		`{"path":"linkfile","content":"x"}`,
	} {
		res := call(t, w, args)
		if !res.IsError || !strings.Contains(text(res), "the sandbox (workspace-write) denies writing outside the workspace") {
			t.Fatalf("write %s: %s", args, text(res))
		}
	}
	res := call(t, e, `{"edits":[{"path":"linkfile","old_text":"keep","new_text":"lost"}]}`)
	if !res.IsError || !strings.Contains(text(res), "workspace-write") {
		t.Fatalf("edit through a link: %s", text(res))
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("written outside: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(b) != "keep" {
		t.Fatalf("outside file changed: %q", b)
	}
	if res := call(t, r, `{"path":"linkfile"}`); res.IsError || !strings.Contains(text(res), "keep") {
		t.Fatalf("read is not confined: %s", text(res))
	}

	ro := Options{Cwd: ws, Sandbox: &sandbox.Policy{Mode: sandbox.ReadOnly}}
	if res := call(t, NewWrite(ro), `{"path":"in.txt","content":"x"}`); !res.IsError || !strings.Contains(text(res), "the sandbox (read-only) denies every write") {
		t.Fatalf("read-only write: %s", text(res))
	}
}

// write and edit keep the agent's and git's configuration paths
// read-only in workspace-write: an existing one, a missing one (no
// directory made on the way), at any depth; the rest of the tree is open.
func TestFileToolsKeepConfigPaths(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(tree(t, map[string]string{".mcp.json": "{}", ".git/config": "[core]\n", "src/a.go": "package a\n"}))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Cwd: ws, Sandbox: &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{ws}}}
	w, e := NewWrite(o), NewEdit(o)
	for _, path := range []string{".mcp.json", ".xcsh/extensions/evil", ".git/hooks/pre-commit", "sub/.claude/settings.json", ".cursor/rules/r.mdc"} {
		res := call(t, w, `{"path":"`+path+`","content":"x"}`)
		if !res.IsError || !strings.Contains(text(res), "Cannot write "+path+": the sandbox (workspace-write) keeps ") || !strings.Contains(text(res), "read-only") {
			t.Fatalf("write %s: %s", path, text(res))
		}
	}
	res := call(t, e, `{"edits":[{"path":".git/config","old_text":"[core]","new_text":"[core]\n\tfsmonitor = evil"}]}`)
	if !res.IsError || !strings.Contains(text(res), "keeps "+filepath.Join(ws, ".git")+" read-only") {
		t.Fatalf("edit .git/config: %s", text(res))
	}
	for _, dir := range []string{".xcsh", "sub", ".cursor", ".git/hooks"} {
		if _, err := os.Stat(filepath.Join(ws, dir)); err == nil {
			t.Errorf("a refused write made %s", dir)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".mcp.json")); string(b) != "{}" {
		t.Fatalf(".mcp.json changed: %q", b)
	}
	if res := call(t, w, `{"path":"src/b.go","content":"package a\n"}`); res.IsError {
		t.Fatalf("write beside: %s", text(res))
	}
}

// A bash command the kernel refused gets a note naming the sandbox rule.
func TestBashNoteInSandbox(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	o := Options{Cwd: ws, Sandbox: &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{ws}}}
	res := call(t, NewBash(o), `{"command":"echo 'touch: cannot touch /x: Permission denied'; exit 1"}`)
	if !strings.HasSuffix(text(res), "[Sandbox: the sandbox (workspace-write) denies writes outside "+ws+
		", and to the configuration agents and git read there (.git/hooks, .git/config, .mcp.json, .xcsh, .claude, …). A denial above may come from it: ask the user before working around it.]") {
		t.Fatalf("got %q", text(res))
	}
	res = call(t, NewBash(Options{Cwd: ws}), `{"command":"echo Permission denied"}`)
	if strings.Contains(text(res), "Sandbox") {
		t.Fatalf("note without a sandbox: %q", text(res))
	}
}

// The one thing the sandbox cannot refuse a command, creating a
// configuration path that did not exist, is told in the bash result that
// made it appear, once.
func TestBashNotePlanted(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := sandbox.New(sandbox.WorkspaceWrite, ws, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBash(Options{Cwd: ws, Sandbox: p})
	if res := call(t, b, `{"command":"echo ok"}`); strings.Contains(text(res), "appeared") {
		t.Fatalf("note without a plant: %s", text(res))
	}
	res := call(t, b, `{"command":"echo '{}' > .mcp.json; mkdir -p .xcsh/extensions"}`)
	want := "[Sandbox: " + filepath.Join(ws, ".mcp.json") + ", " + filepath.Join(ws, ".xcsh") + " appeared during this session."
	if !strings.Contains(text(res), want) {
		t.Fatalf("got %q", text(res))
	}
	if res := call(t, b, `{"command":"echo again"}`); strings.Contains(text(res), "appeared") {
		t.Fatalf("told twice: %s", text(res))
	}
}
