package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default cap on one input line (64 MiB).
const DefaultMaxLineBytes = 64 << 20

// ErrLineTooLong reports a line over the cap. The line was discarded
// without being buffered whole; reading can continue.
var ErrLineTooLong = errors.New("line too long")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// LineReader frames stdin: LF ends a line, a trailing CR is stripped,
// blank (whitespace-only) lines are skipped and a UTF-8 BOM at the start of
// the stream is skipped. It never holds more than the cap of one line.
type LineReader struct {
	r       *bufio.Reader
	max     int
	started bool
	eof     bool
	buf     []byte
}

// NewLineReader reads from r with the given cap (<= 0: the default).
func NewLineReader(r io.Reader, maxLine int) *LineReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: maxLine}
}

// Next returns the next non-blank line, valid until the following call.
// It returns ErrLineTooLong for an over-cap line and io.EOF at the end.
func (lr *LineReader) Next() ([]byte, error) {
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
			line = bytes.TrimPrefix(line, utf8BOM)
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
