package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a directory opened for a write the policy allows. Path names it
// through the open descriptor (/proc/self/fd/N), so the names a tool
// creates or renames under Path land in the directory that was checked,
// whatever is swapped into the path it was reached by meanwhile.
type Dir struct {
	fd   int
	Path string
}

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// OpenDir opens dir (absolute) for writing into it: the directory is
// opened first (links followed), then the descriptor's own path is
// checked against the policy, so no link swapped in after a check can
// lead a write elsewhere. With create, missing directories are made one
// at a time under the deepest existing one, each reached without following
// links; without it a missing dir is fs.ErrNotExist. A write the policy
// refuses is a *DeniedError.
func (p *Policy) OpenDir(dir string, create bool) (*Dir, error) {
	dir = filepath.Clean(dir)
	var rest []string
	fd := -1
	for cur := dir; ; {
		var err error
		fd, err = unix.Open(cur, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.ENOENT) || !create {
			return nil, &fs.PathError{Op: "open", Path: cur, Err: err}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
	d := &Dir{fd: fd}
	if err := p.checkFD(fd); err != nil {
		d.Close()
		return nil, err
	}
	for _, name := range rest {
		if err := unix.Mkdirat(d.fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			d.Close()
			return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: err}
		}
		next, err := unix.Openat(d.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		d.Close()
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		d.fd = next
	}
	if err := p.checkFD(d.fd); err != nil {
		d.Close()
		return nil, err
	}
	d.Path = "/proc/self/fd/" + strconv.Itoa(d.fd)
	return d, nil
}

// checkFD checks the path the kernel gives for an open directory.
func (p *Policy) checkFD(fd int) error {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return err
	}
	// A directory removed since it was opened reads "… (deleted)": not a
	// place to write.
	if strings.HasSuffix(real, " (deleted)") {
		return &fs.PathError{Op: "open", Path: real, Err: fs.ErrNotExist}
	}
	return p.check(real)
}
