package sessionfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/xcsh-go/xcsh/engine"
)

// Session is a session file as read by Load.
type Session struct {
	Path    string
	Header  Header
	Entries []*engine.Entry // file order
	// Leaf is the id of the last entry in file order ("" when none): where
	// the original resumes.
	Leaf string
	// Warnings name the lines that were skipped (a torn last line, a line
	// that does not decode) and anything loaded as is (an old version); the
	// caller prints them to stderr.
	Warnings []string

	size int64 // bytes read
	good int64 // offset just past the last newline
	torn bool  // the bytes after good are a partial line that did not decode
}

// Load reads a session file. It is lenient, as the original is: a line
// that does not decode is skipped and reported in Warnings. A missing or
// unreadable file, or a first line that is not a session header, is an
// error wrapping ErrNotSession (and the os error, if any).
func Load(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSession, err)
	}
	defer f.Close()
	s, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// read parses a session from r, line by line: memory is the entries, not
// the file.
func read(r io.Reader) (*Session, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte // reused for lines longer than the reader's buffer
	line, err := readLine(br, &long)
	if len(line) == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file", ErrNotSession)
		}
		return nil, fmt.Errorf("%w: %w", ErrNotSession, err)
	}
	h, herr := DecodeHeader(trimEOL(line))
	if herr != nil {
		return nil, herr
	}
	s := &Session{Header: *h, size: int64(len(line))}
	if line[len(line)-1] == '\n' {
		s.good = s.size
	}
	if h.Version != Version {
		s.Warnings = append(s.Warnings, fmt.Sprintf("session version %d loaded as is (not migrated to %d)", h.Version, Version))
	}
	for n := 2; err == nil; n++ {
		line, err = readLine(br, &long)
		if err != nil && !errors.Is(err, io.EOF) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: read error, rest of file skipped: %v", n, err))
			break
		}
		if len(line) == 0 {
			break
		}
		s.size += int64(len(line))
		terminated := line[len(line)-1] == '\n'
		if terminated {
			s.good = s.size
		}
		body := trimEOL(line)
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		e, derr := engine.DecodeEntry(body)
		if derr != nil {
			if !terminated {
				s.torn = true
				s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: torn last line (%d bytes, no newline) skipped: %v", n, len(body), derr))
			} else {
				s.Warnings = append(s.Warnings, fmt.Sprintf("line %d: skipped: %v", n, derr))
			}
			continue
		}
		s.Entries = append(s.Entries, e)
		s.Leaf = e.ID
	}
	return s, nil
}

// readLine returns the next line including its newline (none at the end
// of the file). The result is valid until the next call: it is the
// reader's buffer, or *long for a line longer than the buffer. At the end
// of the file it returns what is left and io.EOF.
func readLine(r *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	var scratch []byte
	if long != nil {
		scratch = (*long)[:0]
	}
	scratch = append(scratch, line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.ReadSlice('\n')
		scratch = append(scratch, line...)
	}
	if long != nil {
		*long = scratch
	}
	return scratch, err
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
