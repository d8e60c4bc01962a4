package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bound is how long a call may take before the test calls it hung: far
// above the milliseconds a refusal takes, so a slow machine never fails
// it, while a blocking open fails instead of hanging the package.
const bound = 10 * time.Second

func bounded[T any](t *testing.T, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(bound):
		t.Fatalf("%s did not return within %s", what, bound)
		var zero T
		return zero
	}
}

const (
	reasonFIFO   = "it is a named pipe (FIFO), not a regular file"
	reasonSocket = "it is a socket, not a regular file"
	reasonChar   = "it is a character device, not a regular file"
	reasonDir    = "it is a directory"
	reasonStd    = "it is one of the agent's own standard streams (stdin, stdout, stderr)"
)

// specials makes, in a fresh directory: a regular file "ok", a FIFO
// nobody writes, a listening Unix socket, a directory, a link to
// /dev/zero and, when permitted (root), a character device node.
func specials(t *testing.T) (dir string, haveDevice bool) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("fine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	err = syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, int(1<<8|3))
	return dir, err == nil
}

// Every kind of special file is refused by Open, ReadFile and WriteFile
// with the tools' wording, without blocking, and keeps its type.
func TestSpecialFilesRefused(t *testing.T) {
	t.Parallel()
	dir, haveDevice := specials(t)
	tests := []struct {
		name, path, reason string
		sentinel           error
		device             bool
	}{
		{"fifo", "fifo", reasonFIFO, ErrNotRegular, false},
		{"link to dev zero", "zero", reasonChar, ErrNotRegular, false},
		{"char device", "null", reasonChar, ErrNotRegular, true},
		{"directory", "adir", reasonDir, ErrNotRegular, false},
		{"socket", "sock", reasonSocket, ErrNotRegular, false},
		{"own stdout via proc", "/proc/self/fd/1", reasonStd, ErrStdStream, false},
		{"dev stdout", "/dev/stdout", reasonStd, ErrStdStream, false},
		{"dev fd", "/dev/fd/2", reasonStd, ErrStdStream, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.device && !haveDevice {
				t.Skip("creating device nodes is not permitted here")
			}
			p := tt.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if _, err := os.Stat(p); err != nil {
				t.Skipf("%s: %v", p, err)
			}
			before, _ := os.Lstat(p)
			err := bounded(t, "Open", func() error {
				f, _, err := Open(p)
				if f != nil {
					f.Close()
				}
				return err
			})
			if Describe(err) != tt.reason || !errors.Is(err, tt.sentinel) {
				t.Errorf("Open: %v, want %q", err, tt.reason)
			}
			err = bounded(t, "ReadFile", func() error { _, err := ReadFile(p, 1<<20); return err })
			if Describe(err) != tt.reason {
				t.Errorf("ReadFile: %v, want %q", err, tt.reason)
			}
			err = bounded(t, "WriteFile", func() error {
				return WriteFile(p, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "<html>"); return err })
			})
			if err == nil || Describe(errors.Unwrap(err)) != tt.reason || err.Error() != p+": "+tt.reason {
				t.Errorf("WriteFile: %v, want %q", err, p+": "+tt.reason)
			}
			if after, _ := os.Lstat(p); before.Mode().Type() != after.Mode().Type() {
				t.Errorf("%s changed type: %v -> %v", p, before.Mode(), after.Mode())
			}
		})
	}
	if b, err := ReadFile(filepath.Join(dir, "ok"), 1<<20); err != nil || string(b) != "fine\n" {
		t.Errorf("a regular file: %q %v", b, err)
	}
}

// A regular file the agent's stdout is redirected to is refused by its
// identity, whatever name reaches it.
func TestOwnStdoutFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := syscall.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(int(f.Fd()), 1); err != nil {
		t.Fatal(err)
	}
	_, _, openErr := Open(path)
	writeErr := WriteFile(path, 0o600, func(w io.Writer) error { return nil })
	syscall.Dup2(saved, 1)
	syscall.Close(saved)
	if !errors.Is(openErr, ErrStdStream) || !errors.Is(writeErr, ErrStdStream) {
		t.Errorf("open %v, write %v: want the standard-stream refusal", openErr, writeErr)
	}
}

func TestReadFileCap(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p, 1<<20)
	if !errors.Is(err, ErrTooLarge) || Describe(err) != "the file is 3.0 MiB, over the 1.0 MiB limit" {
		t.Errorf("got %v", err)
	}
	if b, err := ReadFile(p, 3<<20); err != nil || len(b) != 3<<20 {
		t.Errorf("at the cap: %d bytes, %v", len(b), err)
	}
}

// LineReader skips a line over the cap without holding it, reports its
// size, and goes on with the next line; offsets count every byte. The
// input is fed whole, a line at a time and two bytes at a time.
func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	input := "a\n" + long + "\nbb\n" + strings.Repeat("y", 11) + "\n" + "tail-" + long
	type got struct {
		line string
		err  string
	}
	want := []got{{"a\n", ""}, {"", "line of 101 bytes is over the 10 bytes cap"}, {"bb\n", ""},
		{"", "line of 12 bytes is over the 10 bytes cap"}, {"", "line of 105 bytes is over the 10 bytes cap"}}
	file := filepath.Join(t.TempDir(), "lines")
	if err := os.WriteFile(file, []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	readers := map[string]func() io.Reader{
		"whole":     func() io.Reader { return strings.NewReader(input) },
		"two bytes": func() io.Reader { return &chunked{s: input, n: 2} },
		"measured":  func() io.Reader { f, _ := os.Open(file); t.Cleanup(func() { f.Close() }); return f },
	}
	for name, r := range readers {
		for _, bufSize := range []int{16, 4096} {
			t.Run(fmt.Sprintf("%s/buf%d", name, bufSize), func(t *testing.T) {
				in := r()
				lr := NewLineReader(in, bufSize, 10)
				if f, ok := in.(*os.File); ok {
					lr.MeasureWith(f, 0)
				}
				var out []got
				for {
					line, err := lr.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					g := got{line: string(line)}
					if err != nil {
						if !errors.Is(err, ErrLineTooLong) {
							t.Fatalf("err %v", err)
						}
						g.err = err.Error()
					}
					out = append(out, g)
				}
				if fmt.Sprint(out) != fmt.Sprint(want) {
					t.Errorf("got  %q\nwant %q", out, want)
				}
				if lr.Offset() != int64(len(input)) {
					t.Errorf("offset %d, want %d", lr.Offset(), len(input))
				}
			})
		}
	}
	// An unterminated over-long last line says so.
	lr := NewLineReader(strings.NewReader(long), 16, 10)
	_, err := lr.Next()
	var lt *LineTooLongError
	if !errors.As(err, &lt) || lt.Terminated || lt.Size != 100 {
		t.Errorf("got %#v", err)
	}
}

// Measured, a line over the cap costs no memory, and one under it is read
// at its size: a 64 MiB file of zeros with a newline at the end, under a
// 1 MiB cap and under a 128 MiB one.
func TestLineReaderMeasured(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "zeros")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Skipf("no sparse files: %v", err)
	}
	f.WriteAt([]byte("\nnext\n"), 64<<20)
	f.Close()
	for _, capBytes := range []int{1 << 20, 128 << 20} {
		f, _ := os.Open(p)
		lr := NewLineReader(f, 64<<10, capBytes)
		lr.MeasureWith(f, 0)
		line, err := lr.Next()
		var lt *LineTooLongError
		switch {
		case capBytes == 1<<20 && (!errors.As(err, &lt) || lt.Size != 64<<20+1 || !lt.Terminated || cap(lr.buf) > 1<<20):
			t.Errorf("cap 1 MiB: %v, held %d", err, cap(lr.buf))
		case capBytes > 1<<20 && (err != nil || len(line) != 64<<20+1 || cap(line) != 64<<20+1):
			t.Errorf("cap 128 MiB: %d bytes (cap %d), %v", len(line), cap(line), err)
		}
		if line, err := lr.Next(); string(line) != "next\n" || err != nil || lr.Offset() != 64<<20+6 {
			t.Errorf("after it: %q %v offset %d", line, err, lr.Offset())
		}
		f.Close()
	}
}

// /dev/zero has no newline: a LineReader over it (were it opened) reads
// through a bounded buffer and reports the line, memory staying small.
func TestLineReaderEndlessLine(t *testing.T) {
	t.Parallel()
	lr := NewLineReader(io.LimitReader(zeros{}, 64<<20), 64<<10, 1<<20)
	_, err := lr.Next()
	var lt *LineTooLongError
	if !errors.As(err, &lt) || lt.Size != 64<<20 {
		t.Fatalf("got %v", err)
	}
	if cap(lr.buf) > 2<<20 {
		t.Errorf("held %d bytes for a skipped line", cap(lr.buf))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// The tools' link rules, for every writer: a symlink is followed (a
// dangling one creates its target), a hard-linked file is rewritten in
// place, a read-only file is refused, a new file gets perm and an
// existing one keeps its mode.
func TestWriteFileLinkRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(p, s string) error {
		return WriteFile(p, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	fresh := filepath.Join(dir, "sub", "new.html")
	if err := write(fresh, "one"); err != nil || read(fresh) != "one" {
		t.Fatalf("new file: %v", err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode())
	}

	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("old"), 0o640)
	os.Chmod(a, 0o640)
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	if err := write(b, "new"); err != nil || read(a) != "new" {
		t.Errorf("hard link: %v, a=%q", err, read(a))
	}
	fa, _ := os.Stat(a)
	fb, _ := os.Stat(b)
	if !os.SameFile(fa, fb) || fa.Mode().Perm() != 0o640 {
		t.Errorf("hard link split or mode changed: %v", fa.Mode())
	}

	link := filepath.Join(dir, "link")
	os.Symlink("target/t.html", link)
	if err := write(link, "via link"); err != nil || read(filepath.Join(dir, "target", "t.html")) != "via link" {
		t.Errorf("dangling link: %v", err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}

	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.WriteFile(ro, []byte("keep"), 0o444)
		if err := write(ro, "x"); Describe(errors.Unwrap(err)) != "permission denied" || read(ro) != "keep" {
			t.Errorf("read-only: %v", err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".xcsh-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// A failing writer leaves the old content and no temporary file.
func TestWriteFileFailureKeepsOld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "page.html")
	os.WriteFile(p, []byte("old"), 0o600)
	boom := errors.New("boom")
	err := WriteFile(p, 0o600, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("content %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("entries %v", entries)
	}
}
