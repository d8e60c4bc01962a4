package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// writeTestArgs is the JSON arguments of a write call.
func writeTestArgs(path, content string) string {
	b, err := json.Marshal(map[string]string{"path": path, "content": content})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// writeTestNoTemps fails when a write left a temporary file in dir.
func writeTestNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".xcsh-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestWriteToolContent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, content string
		n                   int // UTF-16 length reported as "bytes"
	}{
		{"ascii", "a.txt", "hello\n", 6},
		{"empty content", "empty.txt", "", 0},
		{"latin accents are one unit each", "fr.txt", "héllo wörld", 11},
		{"CJK is one unit per rune, three UTF-8 bytes", "ja.txt", "日本語", 3},
		{"astral runes are two units", "emoji.txt", "😀👍", 4},
		{"mixed", "mix.txt", "é😀\n", 4},
		{"CRLF kept verbatim", "crlf.txt", "a\r\nb\r\n", 6},
		{"BOM counts as one unit", "bom.txt", "\uFEFFx", 2},
		{"NUL bytes", "nul.bin", "a\x00b", 3},
		{"creates parent directories", "new/deeper/still/f.txt", "x", 1},
		{"unclean path", "./p/../q.txt", "q", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			res := call(t, NewWrite(Options{Cwd: dir}), writeTestArgs(tt.path, tt.content))
			// The path is echoed as the model gave it.
			wantText(t, res, fmt.Sprintf("Successfully wrote %d bytes to %s", tt.n, tt.path), false, false)
			if string(res.Details) != "{}" {
				t.Errorf("details %s", res.Details)
			}
			full := filepath.Join(dir, filepath.FromSlash(tt.path))
			got, err := os.ReadFile(full)
			if err != nil || string(got) != tt.content {
				t.Fatalf("file %q (%v), want %q", got, err, tt.content)
			}
			fi, err := os.Stat(full)
			if err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("new file mode %v (%v), want 0644", fi.Mode(), err)
			}
			writeTestNoTemps(t, filepath.Dir(full))
		})
	}
}

func TestWriteToolOverwrite(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o600, 0o644, 0o755, 0o640} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"f": "a much longer old content\n"})
			full := filepath.Join(dir, "f")
			if err := os.Chmod(full, mode); err != nil {
				t.Fatal(err)
			}
			wantText(t, call(t, NewWrite(Options{Cwd: dir}), writeTestArgs("f", "new")), "Successfully wrote 3 bytes to f", false, false)
			if got, _ := os.ReadFile(full); string(got) != "new" {
				t.Errorf("content %q: not fully replaced", got)
			}
			if fi, err := os.Stat(full); err != nil || fi.Mode().Perm() != mode {
				t.Errorf("mode %v (%v), want %v", fi.Mode(), err, mode)
			}
			writeTestNoTemps(t, dir)
		})
	}
}

func TestWriteToolAbsolutePath(t *testing.T) {
	t.Parallel()
	cwd, other := t.TempDir(), t.TempDir()
	abs := filepath.Join(other, "x", "abs.txt")
	wantText(t, call(t, NewWrite(Options{Cwd: cwd}), writeTestArgs(abs, "abc")), "Successfully wrote 3 bytes to "+abs, false, false)
	if got, _ := os.ReadFile(abs); string(got) != "abc" {
		t.Errorf("content %q", got)
	}
}

// Writing through a symlink changes the file it points to and keeps the
// link, as a plain write does.
func TestWriteToolThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"real/target.txt": "old"})
	if err := os.Chmod(filepath.Join(dir, "real", "target.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(filepath.Join("real", "target.txt"), link); err != nil {
		t.Fatal(err)
	}
	wantText(t, call(t, NewWrite(Options{Cwd: dir}), writeTestArgs("link.txt", "new")), "Successfully wrote 3 bytes to link.txt", false, false)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.txt is no longer a symlink (mode %v, %v)", fi.Mode(), err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "real", "target.txt"))
	if string(got) != "new" {
		t.Errorf("target %q, want %q", got, "new")
	}
	if fi, _ := os.Stat(filepath.Join(dir, "real", "target.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v", fi.Mode())
	}
	writeTestNoTemps(t, dir)
	writeTestNoTemps(t, filepath.Join(dir, "real"))
}

func TestWriteToolErrors(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"adir/": "", "adir/inner": "keep", "file.txt": "keep"})
	w := NewWrite(Options{Cwd: dir})
	tests := []struct {
		name, args string
		want       string // exact text, or a prefix when it ends in "…"
	}{
		{"directory", writeTestArgs("adir", "x"), "Cannot write adir: it is a directory"},
		{"directory with slash", writeTestArgs("adir/", "x"), "Cannot write adir/: it is a directory"},
		{"cwd", writeTestArgs(".", "x"), "Cannot write .: it is a directory"},
		{"parent is a file", writeTestArgs("file.txt/child", "x"), "Cannot create the directory for file.txt/child: not a directory"},
		{"empty path", writeTestArgs("", "x"), "Path must not be empty"},
		{"no arguments", ``, "Path must not be empty"},
		{"number path", `{"path":1,"content":"x"}`, "Invalid write arguments: …"},
		{"number content", `{"path":"n.txt","content":5}`, "Invalid write arguments: …"},
		{"object content", `{"path":"n.txt","content":{"a":1}}`, "Invalid write arguments: …"},
		{"array", `["n.txt","x"]`, "Invalid write arguments: …"},
		{"not JSON", `{path:n.txt}`, "Invalid write arguments: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := w.Run(t.Context(), engine.ToolCall{ID: "c1", Name: "write", Arguments: []byte(tt.args)}, nil)
			wantFailure(t, res, err, tt.want)
		})
	}
	// Cleanup runs after the parallel subtests: none of them changed anything.
	t.Cleanup(func() {
		if got, _ := os.ReadFile(filepath.Join(dir, "file.txt")); string(got) != "keep" {
			t.Errorf("file.txt changed: %q", got)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "adir", "inner")); string(got) != "keep" {
			t.Errorf("adir/inner changed: %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "n.txt")); !os.IsNotExist(err) {
			t.Errorf("n.txt was created by a call with bad arguments (%v)", err)
		}
		writeTestNoTemps(t, dir)
	})
}

// write is non-abortable: once called it writes the whole file (atomically)
// even when the context is already cancelled, and returns its normal
// result without a Go error.
func TestWriteToolCancelledContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := NewWrite(Options{Cwd: dir})
	res, err := w.Run(cancelled(), engine.ToolCall{ID: "c1", Name: "write", Arguments: []byte(writeTestArgs("d/f.txt", "data"))}, nil)
	if err != nil {
		t.Fatalf("Go error %v", err)
	}
	wantText(t, res, "Successfully wrote 4 bytes to d/f.txt", false, false)
	if got, _ := os.ReadFile(filepath.Join(dir, "d", "f.txt")); string(got) != "data" {
		t.Errorf("content %q", got)
	}
	res, err = w.Run(cancelled(), engine.ToolCall{ID: "c2", Name: "write", Arguments: []byte(`{"path":""}`)}, nil)
	if err != nil || !res.IsError || text(res) != "Path must not be empty" {
		t.Errorf("got %q isError=%v err=%v", text(res), res.IsError, err)
	}
}

func TestWriteToolPermissionDenied(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes whatever the mode")
	}
	dir := tree(t, map[string]string{"ro/": ""})
	ro := filepath.Join(dir, "ro")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	w := NewWrite(Options{Cwd: dir})
	wantText(t, call(t, w, writeTestArgs("ro/f.txt", "x")), "Cannot write ro/f.txt: permission denied", true, false)
	wantText(t, call(t, w, writeTestArgs("ro/sub/f.txt", "x")), "Cannot create the directory for ro/sub/f.txt: permission denied", true, false)
	if entries, _ := os.ReadDir(ro); len(entries) != 0 {
		t.Errorf("ro/ not empty: %v", entries)
	}
}

// A read-only file in a writable directory is refused, as a plain open
// for writing would be, although the atomic rename could replace it.
func TestWriteToolReadOnlyFile(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes whatever the mode")
	}
	dir := tree(t, map[string]string{"ro.txt": "keep\n"})
	if err := os.Chmod(filepath.Join(dir, "ro.txt"), 0o444); err != nil {
		t.Fatal(err)
	}
	wantText(t, call(t, NewWrite(Options{Cwd: dir}), writeTestArgs("ro.txt", "x")), "Cannot write ro.txt: permission denied", true, false)
	wantText(t, call(t, NewEdit(Options{Cwd: dir}), `{"edits":[{"path":"ro.txt","old_text":"keep","new_text":"x"}]}`), "Cannot write ro.txt: permission denied", true, false)
	if b, _ := os.ReadFile(filepath.Join(dir, "ro.txt")); string(b) != "keep\n" {
		t.Errorf("read-only file changed: %q", b)
	}
}
