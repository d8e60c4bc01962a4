// Package lineio frames the line protocols xcsh speaks over a process's
// standard streams: newline-delimited JSON, one message per line. Reader
// is the one line reader of every such stream (the RPC and ACP fronts'
// stdin, an extension's stdout as the host reads it, the agent's lines as
// extkit reads them); Writer is the fronts' one writer of stdout. It
// imports only the standard library, so the fronts (rpc/...) and the
// extension wire (engine/jsonrpc, engine/extension) share it.
package lineio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLine is the cap on one line when none is given (64 MiB).
const DefaultMaxLine = 64 << 20

// ErrLineTooLong reports a line over the cap. The line was discarded
// without being buffered whole; reading can continue.
var ErrLineTooLong = errors.New("line too long")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Reader frames a stream into lines: LF ends a line, a trailing CR is
// stripped, blank (whitespace-only) lines are skipped, and a line over the
// cap is discarded without being held whole. It never holds more than the
// cap of one line. The first io.EOF of the stream is its end: the
// underlying reader is not read again (a terminal's stdin may go on after
// a ^D).
type Reader struct {
	// SkipBOM drops a UTF-8 BOM at the start of the stream (a host's stdin
	// may begin with one). Set it before the first Next. The extension
	// wire leaves it off: a BOM there is not a protocol line.
	SkipBOM bool

	r       *bufio.Reader
	max     int
	started bool
	eof     bool
	buf     []byte
}

// NewReader reads from r with the given cap on a line (<= 0:
// DefaultMaxLine).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: maxLine}
}

// Max is the cap on a line, in bytes (without its terminator).
func (lr *Reader) Max() int { return lr.max }

// Next returns the next non-blank line without its terminator, valid until
// the following call. It returns ErrLineTooLong for an over-cap line, and
// io.EOF at the end (a last line without LF is returned first). A read
// error other than EOF is returned at once; the unfinished line it cut is
// dropped.
func (lr *Reader) Next() ([]byte, error) {
	for {
		if lr.eof {
			return nil, io.EOF
		}
		if cap(lr.buf) > 1<<20 {
			lr.buf = nil // do not pin a huge line's buffer
		} else {
			lr.buf = lr.buf[:0]
		}
		tooLong := false
		for {
			chunk, err := lr.r.ReadSlice('\n')
			if !tooLong {
				// +2 leaves room for the CR LF terminator, which does not count.
				if len(lr.buf)+len(chunk) > lr.max+2 {
					tooLong = true
					lr.buf = lr.buf[:0]
				} else {
					lr.buf = append(lr.buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				lr.eof = true
				break
			}
			if err != nil {
				return nil, err
			}
			break
		}
		line := lr.buf
		if !lr.started && !tooLong {
			if len(line) == 0 && lr.eof {
				return nil, io.EOF
			}
			lr.started = true
			if lr.SkipBOM {
				line = bytes.TrimPrefix(line, utf8BOM)
			}
		}
		lr.started = true
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if tooLong || len(line) > lr.max {
			return nil, ErrLineTooLong
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}
