package export

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// WriteFile writes the page 0600 in a new directory, and refuses what the
// file rule refuses without blocking: a FIFO nobody reads, /dev/stdout
// (the protocol stream), a link to a device; each keeps its type.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := Data{SessionID: "s", Entries: chain("e", "", msg(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("export me")}})), Leaf: "e1"}
	page := filepath.Join(dir, "out", "page.html")
	if err := WriteFile(page, d); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(page); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("page: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "export me") {
		t.Errorf("page lacks the message")
	}

	fifo := filepath.Join(dir, "fifo.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	null := filepath.Join(dir, "null.html")
	os.Symlink("/dev/null", null)
	for path, want := range map[string]string{
		fifo:          fifo + ": it is a named pipe (FIFO), not a regular file",
		null:          null + ": it is a character device, not a regular file",
		"/dev/stdout": "/dev/stdout: it is one of the agent's own standard streams (stdin, stdout, stderr)",
	} {
		done := make(chan error, 1)
		go func() { done <- WriteFile(path, d) }()
		select {
		case err := <-done:
			var r *safefile.Refusal
			if err == nil || err.Error() != want || !errors.As(err, &r) {
				t.Errorf("WriteFile(%s) = %v, want %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("WriteFile(%s) did not return", path)
		}
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced")
	}
}
