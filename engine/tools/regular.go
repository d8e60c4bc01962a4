package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// The file tools touch regular files only (DECISIONS.md, "Tools"): a model
// may name any path, and opening a FIFO blocks until a writer comes, reading
// /dev/zero never ends, reading /dev/stdin steals the command stream, and
// renaming over a device replaces it. Every path is stat-ed before it is
// opened, every open is non-blocking, and the opened descriptor is checked
// again, so a file swapped between the stat and the open is caught too.

// readChunk is how much the tools read between two looks at the context.
const readChunk = 64 << 10

// sniffLen is the prefix binary detection looks at.
const sniffLen = 8192

// maxWholeFile bounds the files edit and grep load whole: their matching
// needs the full text, and beyond this size memory would follow the file.
const maxWholeFile = 64 << 20

// refusal is why a tool will not touch a path; describeFSError returns its
// text as is.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

var errStdStream = &refusal{"it is one of the agent's own standard streams (stdin, stdout, stderr)"}

// kindReason says what a non-regular file is, or "" for a regular file.
func kindReason(m fs.FileMode) string {
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

// notRegular is the refusal for fi, or nil when fi is a regular file.
func notRegular(fi fs.FileInfo) error {
	if r := kindReason(fi.Mode()); r != "" {
		return &refusal{r}
	}
	return nil
}

// fdPathRE matches the descriptor directories of /proc: their entries are
// the open files of a process (this one included), not paths of the tree.
var fdPathRE = regexp.MustCompile(`^/proc/(self|thread-self|[0-9]+)/(task/[0-9]+/)?fd/.`)

// stdStreamName reports whether p names a standard stream or an open
// descriptor by its spelling.
func stdStreamName(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || fdPathRE.MatchString(p)
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

// namesStdStream reports whether abs, or a link on the way from it,
// spells a standard stream or a descriptor of /proc or /dev/fd.
func namesStdStream(abs string) bool {
	for _, p := range linkChain(abs) {
		if stdStreamName(p) {
			return true
		}
	}
	return false
}

// isStdio reports whether fi is the file behind descriptor 0, 1 or 2,
// whatever route led to it (a regular file the agent's input was
// redirected from, say).
func isStdio(fi fs.FileInfo) bool {
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

// checkPath is the refusal for touching abs, whose stat is fi: a standard
// stream, or anything but a regular file or (when dirOK) a directory. A
// device or pipe is named for what it is even when it also serves as a
// standard stream (/dev/null as stdin).
func checkPath(abs string, fi fs.FileInfo, dirOK bool) error {
	if namesStdStream(abs) {
		return errStdStream
	}
	if dirOK && fi.IsDir() {
		return nil
	}
	if err := notRegular(fi); err != nil {
		return err
	}
	if isStdio(fi) {
		return errStdStream
	}
	return nil
}

// openRegular opens abs for reading after checking what it is. O_NONBLOCK
// keeps a FIFO swapped in after the stat from blocking the open; the
// descriptor's own stat then refuses it. On a regular file O_NONBLOCK
// changes nothing.
func openRegular(abs string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, nil, err
	}
	if err := checkPath(abs, fi, false); err != nil {
		return nil, fi, err
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fi, err
	}
	fi, err = f.Stat()
	if err == nil {
		err = notRegular(fi)
	}
	if err != nil {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

// ctxReader reads from r and looks at ctx after every readChunk bytes, so
// a long read stops soon after an abort while a small file is read whole
// whatever the context (the writing tools are not abortable once started).
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	left int // bytes until the next look at ctx
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	return &ctxReader{ctx: ctx, r: r, left: readChunk}
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if err := c.ctx.Err(); err != nil {
			return 0, err
		}
		c.left = readChunk
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	return n, err
}

// readWhole reads a regular file of at most limit bytes, honouring ctx
// between chunks. A larger file is a refusal naming the limit (what).
func readWhole(ctx context.Context, abs string, limit int64, what string) ([]byte, error) {
	f, fi, err := openRegular(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &refusal{fmt.Sprintf("the file is %s, over %s's %s limit", FormatSize(int(fi.Size())), what, FormatSize(int(limit)))}
	}
	// Read one byte past the limit: a file that grew since the stat is
	// refused too rather than loaded without bound.
	data, err := io.ReadAll(io.LimitReader(newCtxReader(ctx, f), limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &refusal{fmt.Sprintf("the file is over %s's %s limit", what, FormatSize(int(limit)))}
	}
	return data, nil
}

// isCancel reports whether err is the context's, which a tool returns as a
// Go error rather than a result.
func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
