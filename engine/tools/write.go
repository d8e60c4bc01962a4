package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/xcsh-go/xcsh/engine"
)

type writeTool struct {
	spec
	o Options
}

// NewWrite returns the write tool: it creates or overwrites a file,
// creating missing parent directories.
func NewWrite(o Options) engine.Tool { return &writeTool{spec: writeSpec, o: o} }

var writeSpec = spec{
	name:        "write",
	concurrency: engine.Exclusive,
	description: "Write content to a file, creating it (and missing parent directories) or overwriting it entirely. " +
		"Prefer edit for changing part of an existing file.",
	schema: []byte(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path of the file to write"},` +
		`"content":{"type":"string","description":"The complete new content of the file"}` +
		`},"required":["path","content"],"additionalProperties":false}`),
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Run is not abortable once it has started writing: the file is replaced
// atomically, so an abort can never leave it half-written.
func (t *writeTool) Run(_ context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a writeArgs
	if r, ok := decodeArgs("write", call.Arguments, &a); !ok {
		return r, nil
	}
	if strings.TrimSpace(a.Path) == "" {
		return failResult("Path must not be empty"), nil
	}
	abs := resolveCwd(t.o.Cwd, a.Path)
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return failResult(fmt.Sprintf("Cannot write %s: it is a directory", a.Path)), nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return failResult(fmt.Sprintf("Cannot create the directory for %s: %s", a.Path, describeFSError(err))), nil
	}
	if err := writeFileAtomic(abs, []byte(a.Content)); err != nil {
		return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
	}
	return textResult(fmt.Sprintf("Successfully wrote %d bytes to %s", jsLength(a.Content), a.Path), nil), nil
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory and a rename, keeping an existing file's permissions. A
// crash or a full disk leaves either the old file or the new one, never a
// truncated mix.
func writeFileAtomic(path string, data []byte) error {
	// Write through a symlink to its target, as a plain write would; the
	// rename would otherwise replace the link itself with a regular file.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		// The rename needs only the directory to be writable; a file the
		// user made read-only must still refuse the write, as a plain
		// open for writing would.
		if err := syscall.Access(path, 2 /* W_OK */); err != nil {
			return &fs.PathError{Op: "write", Path: path, Err: err}
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".xcsh-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}
