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

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": Off, "off": Off, "read-only": ReadOnly, "workspace-write": WorkspaceWrite} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := ParseMode("danger-full-access"); err == nil || !strings.Contains(err.Error(), "read-only, workspace-write or off") {
		t.Errorf("unknown mode: %v", err)
	}
}

// realTemp is a temp dir with symlinks resolved (macOS-style /tmp links).
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestNewResolvesRoots(t *testing.T) {
	base := realTemp(t)
	ws, extra, tmp := filepath.Join(base, "ws"), filepath.Join(base, "extra"), filepath.Join(base, "tmp")
	for _, d := range []string{ws, extra, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "wslink")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	p, err := New(WorkspaceWrite, link, []string{"../extra", extra}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Roots[:3], []string{ws, extra, tmp}) {
		t.Fatalf("roots %q", p.Roots)
	}
	if !slices.Contains(p.Devices, "/dev/null") {
		t.Fatalf("devices %q", p.Devices)
	}
	if _, err := New(WorkspaceWrite, ws, []string{"missing"}, false); err == nil || !strings.Contains(err.Error(), "--add-dir") {
		t.Fatalf("missing --add-dir: %v", err)
	}
	ro, err := New(ReadOnly, ws, nil, true)
	if err != nil || len(ro.Roots) != 0 || ro.Allows(filepath.Join(ws, "f")) || !ro.Allows("/dev/null") {
		t.Fatalf("read-only: %+v %v", ro, err)
	}
	var off *Policy
	if off.On() || !off.Allows("/etc/passwd") {
		t.Fatal("a nil policy confines")
	}
}

func TestAllowsIsPathWise(t *testing.T) {
	t.Parallel()
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{"/w/proj"}}
	for path, want := range map[string]bool{"/w/proj": true, "/w/proj/a/b": true, "/w/project": false, "/w": false, "/w/proj/../x": false} {
		if got := p.Allows(filepath.Clean(path)); got != want {
			t.Errorf("%s: %v", path, got)
		}
	}
}

func TestOpenDir(t *testing.T) {
	t.Parallel()
	base := realTemp(t)
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{ws, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{ws}}

	// Inside, made on demand; the descriptor path takes a create and a
	// rename.
	d, err := p.OpenDir(filepath.Join(ws, "a", "b"), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Path, "tmp"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(d.Path, "tmp"), filepath.Join(d.Path, "f")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if b, err := os.ReadFile(filepath.Join(ws, "a", "b", "f")); err != nil || string(b) != "x" {
		t.Fatalf("write through the descriptor: %q %v", b, err)
	}

	var denied *DeniedError
	for _, dir := range []string{out, filepath.Join(ws, "escape"), filepath.Join(ws, "escape", "new"), filepath.Join(ws, "..", "out", "new")} {
		d, err := p.OpenDir(dir, true)
		if !errors.As(err, &denied) {
			d.Close()
			t.Fatalf("%s: %v", dir, err)
		}
		if denied.Path != out || !strings.Contains(err.Error(), "workspace-write") || !strings.Contains(err.Error(), ws) {
			t.Fatalf("%s: %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a denied OpenDir made a directory outside")
	}
	if _, err := p.OpenDir(filepath.Join(ws, "missing"), false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing without create: %v", err)
	}
	ro := &Policy{Mode: ReadOnly}
	if _, err := ro.OpenDir(ws, false); !errors.As(err, &denied) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("read-only: %v", err)
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{"/w"}}
	if n := p.Explain("touch: cannot touch '/x': Permission denied"); !strings.Contains(n, "workspace-write") || !strings.Contains(n, "/w") {
		t.Errorf("write note: %q", n)
	}
	if n := p.Explain("curl: (6) Could not resolve host: example.com"); !strings.Contains(n, "network") {
		t.Errorf("network note: %q", n)
	}
	if n := p.Explain("all good"); n != "" {
		t.Errorf("note on success: %q", n)
	}
	p.Network = true
	if n := p.Explain("Could not resolve host"); n != "" {
		t.Errorf("network note with the network allowed: %q", n)
	}
	var off *Policy
	if n := off.Explain("Permission denied"); n != "" {
		t.Errorf("note when off: %q", n)
	}
}

// BenchmarkOpenDir is the sandbox's cost per file-tool write: open the
// directory, check the descriptor's path, close (target < 50 µs).
func BenchmarkOpenDir(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{ws}}
	for b.Loop() {
		d, err := p.OpenDir(ws, false)
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}
