package lineio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
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

func readAll(t *testing.T, r io.Reader, max int, skipBOM bool) []string {
	t.Helper()
	lr := NewReader(r, max)
	lr.SkipBOM = skipBOM
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

// The same input read whole, a line at a time, two bytes and one byte at
// a time gives the same lines (as test2json's golden test does).
func TestReaderFramingIsChunkIndependent(t *testing.T) {
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
		got := readAll(t, mk(), 32, true)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q want %q", name, got, want)
		}
	}
}

// Without SkipBOM (the extension wire) a BOM is part of the first line,
// which then is not JSON: the line is passed on as it came.
func TestReaderKeepsBOMUnlessAsked(t *testing.T) {
	t.Parallel()
	input := "\uFEFF{}\n\uFEFF{}\n"
	if got := readAll(t, strings.NewReader(input), 0, false); strings.Join(got, "|") != "\uFEFF{}|\uFEFF{}" {
		t.Fatalf("without SkipBOM: %q", got)
	}
	// With it, only the stream's first BOM goes.
	if got := readAll(t, strings.NewReader(input), 0, true); strings.Join(got, "|") != "{}|\uFEFF{}" {
		t.Fatalf("with SkipBOM: %q", got)
	}
}

// The first EOF ends the stream: what the source would give after it is
// never read (a terminal goes on after ^D). A last line without LF comes
// before the EOF.
func TestReaderEOFIsFinal(t *testing.T) {
	t.Parallel()
	src := &afterEOF{parts: []string{"a\nb", "", "c\n"}}
	lr := NewReader(src, 0)
	for _, want := range []string{"a", "b"} {
		line, err := lr.Next()
		if err != nil || string(line) != want {
			t.Fatalf("got %q %v, want %q", line, err, want)
		}
	}
	for range 2 {
		if line, err := lr.Next(); err != io.EOF {
			t.Fatalf("after EOF: %q %v", line, err)
		}
	}
	if src.reads != 2 {
		t.Fatalf("the source was read %d times, want 2 (nothing after its EOF)", src.reads)
	}
}

// afterEOF returns its parts in turn; an empty part is an EOF.
type afterEOF struct {
	parts []string
	reads int
}

func (a *afterEOF) Read(p []byte) (int, error) {
	a.reads++
	if len(a.parts) == 0 {
		return 0, io.EOF
	}
	part := a.parts[0]
	a.parts = a.parts[1:]
	if part == "" {
		return 0, io.EOF
	}
	return copy(p, part), nil
}

// A read error other than EOF is returned at once, and the line it cut
// short is dropped, not passed on as if whole.
func TestReaderErrorDropsTheCutLine(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("whole\n{\"cut"), iotest.ErrReader(boom)), 0)
	if line, err := lr.Next(); err != nil || string(line) != "whole" {
		t.Fatalf("first: %q %v", line, err)
	}
	if line, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("second: %q %v, want the read error", line, err)
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

func TestReaderLimitIsExactAndDoesNotBuffer(t *testing.T) {
	t.Parallel()
	exact := strings.Repeat("a", 16)
	// The cap is exact whatever ends the line (CR LF, LF, the stream's end).
	got := readAll(t, strings.NewReader(exact+"\r\n"+exact+"b\n"+exact+"\n"+exact+"bc\n"+exact+"b"), 16, false)
	if strings.Join(got, "|") != exact+"|<too long>|"+exact+"|<too long>|<too long>" {
		t.Fatalf("got %q", got)
	}
	// A 200 MiB line against the default cap: the reader must discard it in
	// bounded memory (it reads through a generator, never holding it).
	// With -short, an 8 MiB line against a 1 MiB cap: the same overrun.
	size, limit, bound := 200<<20, 0, 2*DefaultMaxLine
	if testing.Short() {
		size, limit, bound = 8<<20, 1<<20, 2<<20
	}
	big := io.MultiReader(&repeatReader{n: size}, strings.NewReader("\n{\"ok\":1}\n"))
	lr := NewReader(big, limit)
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
