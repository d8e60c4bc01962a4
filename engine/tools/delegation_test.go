package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

// bufferEditor is an editor whose buffers differ from the disk: what the
// tools read and write through it never touches the files.
type bufferEditor struct {
	mu     sync.Mutex
	bufs   map[string]string
	reads  []string
	writes []string
	fail   error
}

func (e *bufferEditor) ReadText(_ context.Context, path string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads = append(e.reads, path)
	if e.fail != nil {
		return "", e.fail
	}
	b, ok := e.bufs[path]
	if !ok {
		return "", errors.New("no such buffer")
	}
	return b, nil
}

func (e *bufferEditor) WriteText(_ context.Context, path, content string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes = append(e.writes, path)
	if e.fail != nil {
		return e.fail
	}
	e.bufs[path] = content
	return nil
}

func TestEditorDelegation(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "on disk\n", "sub/": ""})
	abs := filepath.Join(dir, "a.txt")
	ed := &bufferEditor{bufs: map[string]string{abs: "unsaved line one\nline two\n"}}
	o := Options{Cwd: dir, Editor: ed}

	t.Run("read shows the buffer", func(t *testing.T) {
		res := call(t, NewRead(o), `{"path":"a.txt"}`)
		if got := text(res); got != "unsaved line one\nline two" || res.IsError {
			t.Fatalf("read: %q (error %v)", got, res.IsError)
		}
	})
	t.Run("a directory is still listed locally", func(t *testing.T) {
		res := call(t, NewRead(o), `{"path":"sub"}`)
		if res.IsError {
			t.Fatalf("read dir: %q", text(res))
		}
	})
	t.Run("edit reads and writes the buffer", func(t *testing.T) {
		res := call(t, NewEdit(o), `{"edits":[{"path":"a.txt","old_text":"line two","new_text":"line 2"}]}`)
		wantText(t, res, "Successfully replaced text in a.txt.", false, false)
		if got := ed.bufs[abs]; got != "unsaved line one\nline 2\n" {
			t.Errorf("buffer after edit: %q", got)
		}
		if b, _ := os.ReadFile(abs); string(b) != "on disk\n" {
			t.Errorf("the disk changed: %q", b)
		}
	})
	t.Run("write goes to the editor", func(t *testing.T) {
		res := call(t, NewWrite(o), `{"path":"new/b.txt","content":"hello"}`)
		wantText(t, res, "Successfully wrote 5 bytes to new/b.txt", false, false)
		if got := ed.bufs[filepath.Join(dir, "new", "b.txt")]; got != "hello" {
			t.Errorf("buffer: %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "new", "b.txt")); err == nil {
			t.Error("the file was written locally")
		}
	})
	t.Run("edit of a missing file fails locally", func(t *testing.T) {
		res := call(t, NewEdit(o), `{"edits":[{"path":"missing.txt","old_text":"a","new_text":"b"}]}`)
		wantText(t, res, "File not found: missing.txt", true, false)
	})
	t.Run("the editor's errors are the tool's failures", func(t *testing.T) {
		failing := &bufferEditor{bufs: map[string]string{}, fail: errors.New("buffer is read-only")}
		fo := Options{Cwd: dir, Editor: failing}
		if got := text(call(t, NewRead(fo), `{"path":"a.txt"}`)); got != "Cannot read a.txt: buffer is read-only" {
			t.Errorf("read: %q", got)
		}
		if got := text(call(t, NewWrite(fo), `{"path":"a.txt","content":"x"}`)); got != "Cannot write a.txt: buffer is read-only" {
			t.Errorf("write: %q", got)
		}
		if got := text(call(t, NewEdit(fo), `{"edits":[{"path":"a.txt","old_text":"a","new_text":"b"}]}`)); got != "Cannot read a.txt: buffer is read-only" {
			t.Errorf("edit: %q", got)
		}
	})
}

func TestBashExec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var got string
	o := Options{Cwd: dir, Exec: func(_ context.Context, command string, so shellexec.Options) (shellexec.Result, error) {
		got = command + " in " + so.Cwd
		return shellexec.Result{Output: "from the terminal\n", Exited: true, ExitCode: 3, TotalBytes: 18, TotalLines: 2}, nil
	}}
	res := call(t, NewBash(o), `{"command":"make test"}`)
	if got != "make test in "+dir {
		t.Errorf("exec got %q", got)
	}
	if !res.IsError || !strings.HasPrefix(text(res), "from the terminal\n\nCommand exited with code 3") {
		t.Errorf("result %q (error %v)", text(res), res.IsError)
	}
}
