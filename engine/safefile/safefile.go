// Package safefile is the one rule for every file the agent opens or writes
// on its own account: session files, the models files, system-prompt and
// context files, exports, and the files of the model's file tools.
//
// A path may name anything, and the plain os calls trust it: opening a FIFO
// blocks until a writer comes (on the command loop that wedges the whole
// process), reading /dev/zero or a file with no newline never ends or
// grows memory without bound, /dev/stdout or /proc/self/fd/1 is the
// protocol stream itself, and renaming a file over a device replaces it.
// So, here:
//
//   - only regular files are read or written; every path is stat-ed
//     before it is opened, the open is non-blocking (a FIFO swapped in
//     after the stat cannot block it), and the opened descriptor is
//     checked again before O_NONBLOCK is cleared;
//   - the agent's own standard streams are refused, by name (/dev/std*,
//     /dev/fd/*, /proc/<pid>/fd/*, and links leading there) and by
//     identity (the device and inode of descriptors 0, 1 and 2);
//   - reads are bounded: ReadFile has a total size cap, LineReader skips
//     and reports a line over its cap without holding it;
//   - writes follow the file tools' link rules (WriteTarget, Replace):
//     a symlink is followed to its target (a dangling one creates it), a
//     file with several hard links is rewritten in place so its other
//     names see the change, a file with one link is replaced atomically
//     (temporary file and rename), its mode kept, and a file the user made
//     read-only stays refused.
//
// A refusal is a *Refusal whose Reason is the tools' wording ("it is a
// named pipe (FIFO), not a regular file"); Describe gives that wording for
// any error of this package or the os package. The package imports only
// the standard library.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

// Sentinels a *Refusal or a *LineTooLongError wraps, for errors.Is.
var (
	// ErrNotRegular: the path is a directory, device, FIFO, socket or a
	// link that does not lead to a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrStdStream: the path is one of the agent's own standard streams.
	ErrStdStream = errors.New("one of the agent's own standard streams")
	// ErrTooLarge: a file read whole is over its cap.
	ErrTooLarge = errors.New("file too large")
	// ErrLineTooLong: a line is over the LineReader's cap.
	ErrLineTooLong = errors.New("line too long")
	// ErrChanged: the file changed between the look and the write.
	ErrChanged = errors.New("file changed while being written")
)

// Refusal is why a file is not touched. Its text is Reason alone, so a
// caller puts the path and the verb around it ("Cannot read <path>: ").
type Refusal struct {
	Reason string
	Err    error // the sentinel it stands for; may be nil
}

func (r *Refusal) Error() string { return r.Reason }

// Unwrap returns the sentinel.
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse returns a refusal with a reason of the caller's (a tool's size
// limit, say), which Describe passes on as is.
func Refuse(reason string) *Refusal { return &Refusal{Reason: reason} }

var errStdStream = &Refusal{"it is one of the agent's own standard streams (stdin, stdout, stderr)", ErrStdStream}

// PathError is an error about a path: "<path>: <Describe(Err)>".
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Path + ": " + Describe(e.Err) }

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// Describe turns an error of this package or of the os package into a short
// reason without the operation or the path: a refusal's Reason,
// "permission denied", "no such file or directory", or the error's text.
func Describe(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	var lt *LineTooLongError
	if errors.As(err, &lt) {
		return lt.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	}
	return err.Error()
}

// KindReason says what a non-regular file is, or "" for a regular file.
func KindReason(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "it is a directory"
	case m&fs.ModeNamedPipe != 0:
		return "it is a named pipe (FIFO), not a regular file"
	case m&fs.ModeSocket != 0:
		return "it is a socket, not a regular file"
	case m&fs.ModeCharDevice != 0:
		return "it is a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		return "it is a block device, not a regular file"
	case m&fs.ModeSymlink != 0:
		return "it is a symbolic link that does not lead to a regular file"
	}
	return "it is not a regular file"
}

// CheckRegular is the refusal for fi, or nil when fi is a regular file.
func CheckRegular(fi fs.FileInfo) error {
	if r := KindReason(fi.Mode()); r != "" {
		return &Refusal{r, ErrNotRegular}
	}
	return nil
}

// fdPathRE matches the descriptor directories of /proc: their entries are
// the open files of a process (this one included), not paths of the tree.
var fdPathRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/proc/(self|thread-self|[0-9]+)/(task/[0-9]+/)?fd/.`)
})

// StdStreamName reports whether p names a standard stream or an open
// descriptor by its spelling.
func StdStreamName(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || fdPathRE().MatchString(p)
}

// linkChain is abs followed by each hop of the symlinks at its last
// component (and the fully resolved path when it exists), so a link to
// /dev/stdin is recognised by the name it points to: /dev/stdin itself
// resolves to a pipe that has no path.
func linkChain(abs string) []string {
	chain := []string{abs}
	p := abs
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(p)
		if err != nil || !strings.HasPrefix(t, "/") && strings.Contains(t, ":") {
			break // "pipe:[123]", "socket:[4]": not a path
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = filepath.Clean(t)
		chain = append(chain, p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		chain = append(chain, real)
	}
	return chain
}

// NamesStdStream reports whether abs, or a link on the way from it,
// spells a standard stream or a descriptor of /proc or /dev/fd.
func NamesStdStream(abs string) bool {
	for _, p := range linkChain(abs) {
		if StdStreamName(p) {
			return true
		}
	}
	return false
}

// IsStdio reports whether fi is the file behind descriptor 0, 1 or 2,
// whatever route led to it (a regular file the agent's output was
// redirected to, say).
func IsStdio(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	for fd := range 3 {
		var s syscall.Stat_t
		if syscall.Fstat(fd, &s) == nil && s.Dev == st.Dev && s.Ino == st.Ino {
			return true
		}
	}
	return false
}

// Check is the refusal for touching abs, whose stat is fi: a standard
// stream, or anything but a regular file or (when dirOK) a directory. A
// device or pipe is named for what it is even when it also serves as a
// standard stream (/dev/null as stdin).
func Check(abs string, fi fs.FileInfo, dirOK bool) error {
	if NamesStdStream(abs) {
		return errStdStream
	}
	if dirOK && fi.IsDir() {
		return nil
	}
	if err := CheckRegular(fi); err != nil {
		return err
	}
	if IsStdio(fi) {
		return errStdStream
	}
	return nil
}

// absPath is path made absolute, so the name checks see what it spells.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// humanSize renders a byte count for a refusal: "1.5 MiB".
func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
