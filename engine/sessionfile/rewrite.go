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

var _ engine.EntryRewriter = (*Store)(nil)

// Rewrite implements engine.EntryRewriter: the lines of the given entries
// (found by id) are replaced by their new encoding, the rest of the file
// is copied byte for byte. It runs like SetTitle: the copy is made
// without the lock, and only what was appended meanwhile is copied under
// it before the new file takes the old one's place.
func (s *Store) Rewrite(entries []*engine.Entry) error {
	repl := make(map[string][]byte, len(entries))
	for _, e := range entries {
		repl[e.ID] = appendLine(nil, e)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	if s.f == nil {
		s.pending = replaceLines(nil, bufio.NewReader(bytes.NewReader(s.pending)), repl)
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()

	src, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("rewrite session: %w", err)
	}
	defer src.Close()
	r := bufio.NewReaderSize(src, 64<<10)
	var last byte = '\n'
	lock, err := writeAtomic(s.path, true, func(w io.Writer) error {
		lw := &lastByteWriter{w: w, last: '\n'}
		err := copyReplacing(lw, r, repl)
		last = lw.last
		return err
	}, func(w io.Writer) (func(bool), error) { return s.finishRewrite(w, r, last) })
	s.adoptLock(lock)
	return err
}

// copyReplacing copies r to w line by line up to its current end,
// replacing the complete lines of the entries in repl. A last line
// without its newline (an append under way) is copied as it is.
func copyReplacing(w io.Writer, r *bufio.Reader, repl map[string][]byte) error {
	var long []byte
	for {
		line, err := readLine(r, &long)
		if len(line) > 0 {
			out := line
			if line[len(line)-1] == '\n' {
				if n, ok := repl[entryID(line)]; ok {
					out = n
				}
			}
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// replaceLines is copyReplacing into a buffer.
func replaceLines(dst []byte, r *bufio.Reader, repl map[string][]byte) []byte {
	var b bytes.Buffer
	b.Write(dst)
	_ = copyReplacing(&b, r, repl) // a bytes.Reader and Buffer cannot fail
	return b.Bytes()
}

// entryID reads the "id" of an entry line: every entry line names it
// among its first keys ({"type":"…","id":"…"); "" when it is not there.
func entryID(line []byte) string {
	head := line[:min(len(line), 96)]
	i := bytes.Index(head, []byte(`"id":"`))
	if i < 0 {
		return ""
	}
	rest := line[i+6:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
