package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/xcsh-go/xcsh/engine/safefile"
)

// The file tools touch regular files only (DECISIONS.md, "Tools"): a model
// may name any path, and opening a FIFO blocks until a writer comes, reading
// /dev/zero never ends, reading /dev/stdin steals the command stream, and
// renaming over a device replaces it. engine/safefile holds the rule (every
// path stat-ed before it is opened, every open non-blocking, the opened
// descriptor checked again); the tools add their limits and wording.

// readChunk is how much the tools read between two looks at the context.
const readChunk = 64 << 10

// sniffLen is the prefix binary detection looks at.
const sniffLen = 8192

// maxWholeFile bounds the files edit and grep load whole: their matching
// needs the full text, and beyond this size memory would follow the file.
const maxWholeFile = 64 << 20

// refusal is why a tool will not touch a path; describeFSError returns its
// text as is. The file rule itself (what may be opened or written, and
// how) is engine/safefile's, shared with everything else the agent opens.
type refusal = safefile.Refusal

// The rule's checks, under the names the tools use.
var (
	checkPath   = safefile.Check
	openRegular = safefile.Open
	writeTarget = safefile.WriteTarget
	replaceFile = safefile.Replace
)

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

// readTarget checks that abs may be read as a regular file, without
// opening it (the edit tool's text then comes from the editor).
func readTarget(abs string) (fs.FileInfo, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	return fi, checkPath(abs, fi, false)
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
		return nil, safefile.Refuse(fmt.Sprintf("the file is %s, over %s's %s limit", FormatSize(int(fi.Size())), what, FormatSize(int(limit))))
	}
	// Read one byte past the limit: a file that grew since the stat is
	// refused too rather than loaded without bound.
	data, err := io.ReadAll(io.LimitReader(newCtxReader(ctx, f), limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, safefile.Refuse(fmt.Sprintf("the file is over %s's %s limit", what, FormatSize(int(limit))))
	}
	return data, nil
}

// isCancel reports whether err is the context's, which a tool returns as a
// Go error rather than a result.
func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
