package rpc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunkReader returns at most n bytes per Read, to exercise reassembly.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

func readAll(t *testing.T, r io.Reader, max int) []string {
	t.Helper()
	lr := NewLineReader(r, max)
	var out []string
	for {
		line, err := lr.Next()
		if err == io.EOF {
			return out
		}
		if errors.Is(err, ErrLineTooLong) {
			out = append(out, "<too long>")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(line))
	}
}

func TestLineReaderFramingIsChunkIndependent(t *testing.T) {
	t.Parallel()
	input := "\uFEFF{\"type\":\"a\"}\r\n\n   \n{\"type\":\"b\"}\n" + strings.Repeat("x", 40) + "\n\r\n{\"type\":\"c\"}"
	want := []string{`{"type":"a"}`, `{"type":"b"}`, "<too long>", `{"type":"c"}`}
	readers := map[string]func() io.Reader{
		"whole":        func() io.Reader { return strings.NewReader(input) },
		"two bytes":    func() io.Reader { return &chunkReader{[]byte(input), 2} },
		"one byte":     func() io.Reader { return &chunkReader{[]byte(input), 1} },
		"line by line": func() io.Reader { return &lineChunks{lines: strings.SplitAfter(input, "\n")} },
	}
	for name, mk := range readers {
		got := readAll(t, mk(), 32)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q want %q", name, got, want)
		}
	}
}

type lineChunks struct{ lines []string }

func (l *lineChunks) Read(p []byte) (int, error) {
	if len(l.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.lines[0])
	l.lines[0] = l.lines[0][n:]
	if l.lines[0] == "" {
		l.lines = l.lines[1:]
	}
	return n, nil
}

func TestLineReaderLimitIsExactAndDoesNotBuffer(t *testing.T) {
	t.Parallel()
	exact := strings.Repeat("a", 16)
	got := readAll(t, strings.NewReader(exact+"\r\n"+exact+"b\n{}"), 16)
	if strings.Join(got, "|") != exact+"|<too long>|{}" {
		t.Fatalf("got %q", got)
	}
	// A 200 MiB line against the default cap: the reader must discard it in
	// bounded memory (it reads through a generator, never holding it).
	// With -short, an 8 MiB line against a 1 MiB cap: the same overrun.
	size, limit, bound := 200<<20, 0, 2*DefaultMaxLineBytes
	if testing.Short() {
		size, limit, bound = 8<<20, 1<<20, 2<<20
	}
	big := io.MultiReader(&repeatReader{n: size}, strings.NewReader("\n{\"ok\":1}\n"))
	lr := NewLineReader(big, limit)
	if _, err := lr.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v", err)
	}
	if cap(lr.buf) > bound {
		t.Fatalf("buffer grew to %d", cap(lr.buf))
	}
	line, err := lr.Next()
	if err != nil || string(line) != `{"ok":1}` {
		t.Fatalf("after long line: %q %v", line, err)
	}
}

type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	copy(p, bytes.Repeat([]byte{'z'}, k))
	r.n -= k
	return k, nil
}
