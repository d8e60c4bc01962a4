package safefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading after checking what it is: a regular file
// that is not one of the agent's standard streams. O_NONBLOCK keeps a FIFO
// swapped in after the stat from blocking the open; the descriptor's own
// stat then refuses it. On the regular file that remains, O_NONBLOCK is
// cleared again (it changes nothing there, but the descriptor is left as
// a plain open would leave it). fi is the descriptor's stat.
func Open(path string) (f *os.File, fi fs.FileInfo, err error) {
	abs := absPath(path)
	fi, err = os.Stat(abs)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			// The stat is part of opening: say what a plain open says.
			pe.Op, pe.Path = "open", path
		}
		return nil, nil, err
	}
	if err := Check(abs, fi, false); err != nil {
		return nil, fi, err
	}
	f, err = os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fi, err
	}
	fi, err = f.Stat()
	if err == nil {
		err = CheckRegular(fi)
	}
	if err == nil {
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

// ReadFile reads a regular file of at most limit bytes whole. A larger
// file is a refusal (ErrTooLarge) naming both sizes; so is one that grew
// past the limit since its stat: at most limit+1 bytes are ever read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &Refusal{fmt.Sprintf("the file is %s, over the %s limit", humanSize(fi.Size()), humanSize(limit)), ErrTooLarge}
	}
	var b bytes.Buffer
	b.Grow(int(fi.Size()) + 1)
	if _, err := b.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(b.Len()) > limit {
		return nil, &Refusal{fmt.Sprintf("the file is over the %s limit", humanSize(limit)), ErrTooLarge}
	}
	return b.Bytes(), nil
}

// LineTooLongError reports a line over a LineReader's cap. The line was
// read through without being kept; reading goes on after it.
type LineTooLongError struct {
	Size       int64 // the line's bytes, its newline included
	Max        int   // the cap
	Terminated bool  // the line ended with a newline (else at the end of the input)
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line of %s is over the %s cap", humanSize(e.Size), humanSize(int64(e.Max)))
}

// Unwrap makes errors.Is(err, ErrLineTooLong) hold.
func (e *LineTooLongError) Unwrap() error { return ErrLineTooLong }

// LineReader reads lines with a cap on each, as the RPC reader frames its
// input: it never holds more than one line of at most the cap, whatever
// the input (a file with no newline, /dev/zero behind a link, a 1 GiB
// line).
type LineReader struct {
	r   *bufio.Reader
	max int
	off int64
	buf []byte // a line longer than the reader's buffer

	ra   io.ReaderAt // when set: measures a long line before reading it
	base int64       // ra's offset of the byte at off 0
	scan []byte      // measure's buffer
}

// NewLineReader reads r with a buffer of bufSize bytes (a line up to that
// long costs no copy) and a cap of max bytes on a line, newline excluded.
func NewLineReader(r io.Reader, bufSize, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, bufSize), max: max}
}

// Offset is how many bytes the lines returned (or skipped) so far took.
func (lr *LineReader) Offset() int64 { return lr.off }

// MeasureWith lets Next measure a line longer than the buffer before it
// reads it: ra reads the same bytes as the reader, base being ra's offset
// of the next byte Next reads (an *os.File and its current offset). A line
// over the cap is then skipped without ever being copied, and one under
// it is read into a buffer of its exact size, instead of growing one as it
// comes (a 128 MiB line cost 260 MiB and seconds of page faults).
func (lr *LineReader) MeasureWith(ra io.ReaderAt, base int64) {
	lr.ra, lr.base = ra, base-lr.off
}

// measure scans ra from off for the end of the line: the bytes up to and
// including its newline (terminated), or to the end of the input.
func (lr *LineReader) measure(off int64) (n int64, terminated bool, err error) {
	if lr.scan == nil {
		lr.scan = make([]byte, 256<<10)
	}
	for at := off; ; {
		k, err := lr.ra.ReadAt(lr.scan, at)
		if i := bytes.IndexByte(lr.scan[:k], '\n'); i >= 0 {
			return at + int64(i) + 1 - off, true, nil
		}
		at += int64(k)
		if errors.Is(err, io.EOF) {
			return at - off, false, nil
		}
		if err != nil {
			return 0, false, err
		}
	}
}

// nextMeasured finishes reading a long line whose first part, first, the
// buffer returned: it measures the rest and skips or reads it whole. ok
// is false when the line could not be measured (the caller reads it as it
// comes).
func (lr *LineReader) nextMeasured(first []byte) (line []byte, ok bool, err error) {
	rest, terminated, merr := lr.measure(lr.base + lr.off + int64(len(first)))
	if merr != nil {
		return nil, false, nil
	}
	size := int64(len(first)) + rest
	content := size
	if terminated {
		content--
	}
	if content > int64(lr.max) {
		n, err := lr.r.Discard(int(rest))
		lr.off += int64(len(first)) + int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, true, err
		}
		return nil, true, &LineTooLongError{Size: int64(len(first)) + int64(n), Max: lr.max, Terminated: terminated && int64(n) == rest}
	}
	if int64(cap(lr.buf)) < size || cap(lr.buf) > 4<<20 {
		lr.buf = make([]byte, size)
	}
	buf := lr.buf[:size]
	copy(buf, first)
	n, err := io.ReadFull(lr.r, buf[len(first):])
	buf = buf[:len(first)+n]
	lr.off += int64(len(buf))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, true, err
	}
	// A file that changed since the measure gives a shorter or different
	// line: it is returned as read, and decoding judges it.
	return buf, true, nil
}

// Next returns the next line with its newline, or the last line without
// one; the slice is valid until the next call. A line over the cap is
// skipped and reported as a *LineTooLongError; the call after it reads
// the following line. At the end of the input it returns nil and io.EOF;
// a read error ends reading with that error.
func (lr *LineReader) Next() ([]byte, error) {
	line, err := lr.r.ReadSlice('\n')
	if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
		// The common case: the line fits the buffer.
		lr.off += int64(len(line))
		if n := len(bytes.TrimSuffix(line, []byte{'\n'})); n > lr.max {
			return nil, &LineTooLongError{Size: int64(len(line)), Max: lr.max, Terminated: err == nil}
		}
		return line, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err // io.EOF with nothing left, or a read error
	}
	if lr.ra != nil {
		if line, ok, err := lr.nextMeasured(line); ok {
			return line, err
		}
	}
	if cap(lr.buf) > 4<<20 {
		lr.buf = nil // do not pin a huge line's buffer
	}
	lr.buf = append(lr.buf[:0], line...)
	size := int64(len(line))
	over := false
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = lr.r.ReadSlice('\n')
		size += int64(len(line))
		if over {
			continue // from here on the line is only counted
		}
		need := len(lr.buf) + len(line)
		if need > lr.max+1 { // the newline does not count
			over, lr.buf = true, nil
			continue
		}
		if need > cap(lr.buf) {
			// Grow by doubling, but never past the cap: a line just
			// over it costs the cap, not twice the cap.
			nb := make([]byte, len(lr.buf), min(max(2*cap(lr.buf), need), lr.max+1))
			copy(nb, lr.buf)
			lr.buf = nb
		}
		lr.buf = append(lr.buf, line...)
	}
	lr.off += size
	terminated := err == nil
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if over || len(bytes.TrimSuffix(lr.buf, []byte{'\n'})) > lr.max {
		return nil, &LineTooLongError{Size: size, Max: lr.max, Terminated: terminated}
	}
	return lr.buf, nil
}
