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
func (p *Policy) OpenDir(dir string, create bool) (*Dir, error) { return p.openDir(dir, create, "") }

// OpenParent is OpenDir for the directory of target, the file a tool is
// about to write (requested, the path it was given, with links followed):
// both are checked too, before any missing directory is made, so a
// configuration path is refused by its name whether it exists or not, and
// whether it is reached through a link or is one.
func (p *Policy) OpenParent(requested, target string, create bool) (*Dir, error) {
	if err := p.checkName(requested); err != nil {
		return nil, err
	}
	target = filepath.Clean(target)
	return p.openDir(filepath.Dir(target), create, filepath.Base(target))
}

func (p *Policy) openDir(dir string, create bool, name string) (*Dir, error) {
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
	if err := p.checkFD(fd, append(rest, name)...); err != nil {
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
	if err := p.checkFD(d.fd, name); err != nil {
		d.Close()
		return nil, err
	}
	d.Path = "/proc/self/fd/" + strconv.Itoa(d.fd)
	return d, nil
}

// checkFD checks the path the kernel gives for an open directory, and
// the path the names below it would make (the directories still to make
// and the file to write; empty names are skipped).
func (p *Policy) checkFD(fd int, below ...string) error {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return err
	}
	// A directory removed since it was opened reads "… (deleted)": not a
	// place to write.
	if strings.HasSuffix(real, " (deleted)") {
		return &fs.PathError{Op: "open", Path: real, Err: fs.ErrNotExist}
	}
	if err := p.check(real); err != nil {
		return err
	}
	if c := p.configPath(filepath.Join(append([]string{real}, below...)...)); c != "" {
		return &DeniedError{Mode: p.Mode, Path: c, Roots: p.Roots, Config: c}
	}
	return nil
}
