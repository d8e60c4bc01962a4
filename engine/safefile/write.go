package safefile

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteTarget is the file a write to abs changes: abs itself, or, through
// symlinks, the file they lead to (created there when the link dangles,
// as a plain write would, rather than replacing the link). fi is its
// stat, nil when it does not exist yet. Anything but a regular file, and
// the process's own standard streams, are refused: the rename that
// replaces a file would otherwise turn a FIFO or /dev/null into a regular
// file, and a write to /dev/stdout would land in the protocol stream.
func WriteTarget(abs string) (string, fs.FileInfo, error) {
	p := abs
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Missing (or under a file: MkdirAll reports that).
				if StdStreamName(p) {
					return "", nil, errStdStream
				}
				return p, nil, nil
			}
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if NamesStdStream(abs) || NamesStdStream(p) {
				return "", nil, errStdStream
			}
			return p, fi, Check(p, fi, false)
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

// Replace sets the content of path, a regular file with stat fi (nil
// when it does not exist yet, then created 0644), keeping its mode. See
// ReplaceWith.
func Replace(path string, fi fs.FileInfo, data []byte) error {
	return ReplaceWith(path, fi, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// ReplaceWith sets the content of path, a regular file with stat fi (nil
// when it does not exist yet, then created with mode perm), to what write
// writes, keeping an existing file's mode. A file with one link is
// replaced through a temporary file and a rename, so a crash or a full
// disk leaves the old content or the new, never a mix. A file with more
// than one hard link is rewritten in place instead: a rename would give
// this name a new inode and silently split it from its other names.
func ReplaceWith(path string, fi fs.FileInfo, perm fs.FileMode, write func(io.Writer) error) error {
	if st, ok := statT(fi); ok && st.Nlink > 1 {
		return rewriteInPlace(path, fi, write)
	}
	return writeAtomic(path, fi, perm, write)
}

// WriteFile writes what write produces to path under the rule: the
// target is found with WriteTarget (special files, the agent's own
// streams refused; symlinks followed), missing parent directories are
// created (0755), and the file is replaced with ReplaceWith (mode perm for
// a new file). An error names the path: "<path>: <reason>".
func WriteFile(path string, perm fs.FileMode, write func(io.Writer) error) error {
	target, fi, err := WriteTarget(absPath(path))
	if err == nil && fi == nil {
		err = os.MkdirAll(filepath.Dir(target), 0o755)
	}
	if err == nil {
		err = ReplaceWith(target, fi, perm, write)
	}
	if err != nil {
		return &PathError{Path: path, Err: err}
	}
	return nil
}

// rewriteInPlace truncates and rewrites the inode fi names. The open is
// non-blocking and checked against fi, so a FIFO or another file swapped
// in since the stat is left alone.
func rewriteInPlace(path string, fi fs.FileInfo, write func(io.Writer) error) error {
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
		return &Refusal{"it changed while being written", ErrChanged}
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if err := writeBuffered(f, write); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// writeBuffered runs write on a buffered f and flushes it.
func writeBuffered(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// writeAtomic replaces path with what write writes, through a temporary
// file in the same directory and a rename, keeping an existing file's
// mode (and, when permitted, its owner).
func writeAtomic(path string, fi fs.FileInfo, perm fs.FileMode, write func(io.Writer) error) error {
	mode := perm
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
	if err := writeBuffered(tmp, write); err != nil {
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
		if err := CheckRegular(cur); err != nil {
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
