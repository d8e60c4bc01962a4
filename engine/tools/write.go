package tools

import (
	"context"
	"errors"
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
// atomically (or, when hard-linked, rewritten in one go), so an abort
// cannot leave it half-written.
func (t *writeTool) Run(_ context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a writeArgs
	if r, ok := decodeArgs("write", call.Arguments, &a); !ok {
		return r, nil
	}
	if strings.TrimSpace(a.Path) == "" {
		return failResult("Path must not be empty"), nil
	}
	target, fi, err := writeTarget(resolveCwd(t.o.Cwd, a.Path))
	if err != nil {
		return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
	}
	if t.o.Sandbox.On() {
		// The directory is opened (made) and checked first; the write goes
		// through the open descriptor.
		dir, err := t.o.Sandbox.OpenDir(filepath.Dir(target), fi == nil)
		if err != nil {
			return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
		}
		defer dir.Close()
		target = filepath.Join(dir.Path, filepath.Base(target))
	} else if fi == nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return failResult(fmt.Sprintf("Cannot create the directory for %s: %s", a.Path, describeFSError(err))), nil
		}
	}
	if err := replaceFile(target, fi, []byte(a.Content)); err != nil {
		return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
	}
	return textResult(fmt.Sprintf("Successfully wrote %d bytes to %s", jsLength(a.Content), a.Path), nil), nil
}

// writeTarget is the file a write to abs changes: abs itself, or, through
// symlinks, the file they lead to (created there when the link dangles,
// as a plain write would, rather than replacing the link). fi is its
// stat, nil when it does not exist yet. Anything but a regular file, and
// the process's own standard streams, are refused: the rename that
// replaces a file would otherwise turn a FIFO or /dev/null into a regular
// file.
func writeTarget(abs string) (string, fs.FileInfo, error) {
	p := abs
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil {
			if errNotFound(err) || errors.Is(err, syscall.ENOTDIR) {
				// Missing (or under a file: MkdirAll reports that).
				if stdStreamName(p) {
					return "", nil, errStdStream
				}
				return p, nil, nil
			}
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if namesStdStream(abs) || namesStdStream(p) {
				return "", nil, errStdStream
			}
			return p, fi, checkPath(p, fi, false)
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = filepath.Clean(t)
	}
	return "", nil, &fs.PathError{Op: "write", Path: abs, Err: syscall.ELOOP}
}

// replaceFile sets the content of path, a regular file with stat fi (nil
// when it does not exist yet), keeping its mode. A file with one link is
// replaced through a temporary file and a rename, so a crash or a full
// disk leaves the old content or the new, never a mix. A file with more
// than one hard link is rewritten in place instead: a rename would give
// this name a new inode and silently split it from its other names.
func replaceFile(path string, fi fs.FileInfo, data []byte) error {
	if st, ok := statT(fi); ok && st.Nlink > 1 {
		return rewriteInPlace(path, fi, data)
	}
	return writeAtomic(path, fi, data)
}

// rewriteInPlace truncates and rewrites the inode fi names. The open is
// non-blocking and checked against fi, so a FIFO or another file swapped
// in since the stat is left alone.
func rewriteInPlace(path string, fi fs.FileInfo, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	cur, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(cur, fi) {
		return &refusal{"it changed while being written"}
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// writeAtomic replaces path with data through a temporary file in the
// same directory and a rename, keeping an existing file's mode (and, when
// permitted, its owner).
func writeAtomic(path string, fi fs.FileInfo, data []byte) error {
	mode := os.FileMode(0o644)
	if fi != nil {
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
	if st, ok := statT(fi); ok {
		// Best effort: only root may give a file away, and a file the
		// agent could write but not own is still better written.
		_ = tmp.Chown(int(st.Uid), int(st.Gid))
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	// Look again just before the rename: whatever appeared at path since
	// the first look must be a regular file for the rename to replace it.
	if cur, err := os.Lstat(path); err == nil {
		if err := notRegular(cur); err != nil {
			os.Remove(name)
			return err
		}
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// statT is fi's system stat, when there is one.
func statT(fi fs.FileInfo) (*syscall.Stat_t, bool) {
	if fi == nil {
		return nil, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
