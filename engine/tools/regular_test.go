package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// regularTestBound is how long a call may take before the test calls it
// hung: far above the milliseconds the refusals take, so a slow machine
// never fails it, while a blocking open still fails instead of hanging.
const regularTestBound = 10 * time.Second

// special makes the non-regular files of the tests in dir: "fifo", "sock"
// (a listening Unix socket) and, when the test may create device nodes
// (root), "null" (character device 1,3). It returns whether "null" exists.
func special(t *testing.T, dir string) (haveDevice bool) {
	t.Helper()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	err = syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, int(1<<8|3))
	return err == nil
}

// boundedRun runs a call in its own goroutine and fails the test if it has
// not returned within regularTestBound: a blocked open must fail the test,
// not hang the package.
func boundedRun(t *testing.T, ctx context.Context, tool engine.Tool, args string) (engine.ToolResult, error) {
	t.Helper()
	type out struct {
		res engine.ToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := tool.Run(ctx, engine.ToolCall{ID: "c1", Name: tool.Name(), Arguments: []byte(args)}, nil)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(regularTestBound):
		t.Fatalf("%s %s did not return within %s", tool.Name(), args, regularTestBound)
		return engine.ToolResult{}, nil
	}
}

// wantMode fails unless path (not followed) still has the type bits of want.
func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if fi.Mode().Type() != want {
		t.Errorf("%s is now %v, want type %v", filepath.Base(path), fi.Mode(), want)
	}
}

const (
	reasonFIFO   = "it is a named pipe (FIFO), not a regular file"
	reasonSocket = "it is a socket, not a regular file"
	reasonChar   = "it is a character device, not a regular file"
	reasonStd    = "it is one of the agent's own standard streams (stdin, stdout, stderr)"
)

func TestReadRefusesNonRegularFiles(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"ok.txt": "fine\n"})
	haveDevice := special(t, dir)
	for link, target := range map[string]string{"to-fifo": "fifo", "to-stdin": "/dev/stdin", "to-zero": "/dev/zero"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	read := NewRead(Options{Cwd: dir})
	tests := []struct {
		name, path, want string
		device           bool // needs the device node
	}{
		{"dev zero", "/dev/zero", "Cannot read /dev/zero: " + reasonChar, false},
		{"dev urandom", "/dev/urandom", "Cannot read /dev/urandom: " + reasonChar, false},
		{"dev null", "/dev/null", "Cannot read /dev/null: " + reasonChar, false},
		{"link to dev zero", "to-zero", "Cannot read to-zero: " + reasonChar, false},
		{"fifo nobody writes", "fifo", "Cannot read fifo: " + reasonFIFO, false},
		{"link to a fifo", "to-fifo", "Cannot read to-fifo: " + reasonFIFO, false},
		{"socket", "sock", "Cannot read sock: " + reasonSocket, false},
		{"device node", "null", "Cannot read null: " + reasonChar, true},
		{"dev stdin", "/dev/stdin", "Cannot read /dev/stdin: " + reasonStd, false},
		{"dev stdout", "/dev/stdout", "Cannot read /dev/stdout: " + reasonStd, false},
		{"dev stderr", "/dev/stderr", "Cannot read /dev/stderr: " + reasonStd, false},
		{"proc self fd", "/proc/self/fd/0", "Cannot read /proc/self/fd/0: " + reasonStd, false},
		{"dev fd", "/dev/fd/1", "Cannot read /dev/fd/1: " + reasonStd, false},
		{"proc pid fd", fmt.Sprintf("/proc/%d/fd/2", os.Getpid()), fmt.Sprintf("Cannot read /proc/%d/fd/2: %s", os.Getpid(), reasonStd), false},
		{"link to dev stdin", "to-stdin", "Cannot read to-stdin: " + reasonStd, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.device && !haveDevice {
				t.Skip("creating device nodes is not permitted here")
			}
			if _, err := os.Stat(resolveCwd(dir, tt.path)); err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			res, err := boundedRun(t, t.Context(), read, fmt.Sprintf(`{"path":%q}`, tt.path))
			wantFailure(t, res, err, tt.want)
		})
	}
	t.Run("directories still list", func(t *testing.T) {
		t.Parallel()
		res, err := boundedRun(t, t.Context(), read, `{"path":"."}`)
		if err != nil || res.IsError || !strings.Contains(text(res), "ok.txt") {
			t.Errorf("got %q isError=%v err=%v", text(res), res.IsError, err)
		}
	})
}

// The non-blocking open and the check on the opened descriptor catch what
// the stat before it cannot: they are exercised directly.
func TestOpenRegularChecksTheDescriptor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	special(t, dir)
	f, _, err := openRegular(filepath.Join(dir, "fifo"))
	if f != nil || describeFSError(err) != reasonFIFO {
		t.Errorf("fifo: file %v, err %v", f, err)
	}
	if _, err := readWhole(t.Context(), "/dev/zero", 1<<20, "test"); describeFSError(err) != reasonChar {
		t.Errorf("/dev/zero: %v", err)
	}
	for _, p := range []string{"/dev/stdin", "/dev/stdout", "/proc/self/fd/1", "/proc/thread-self/fd/0", "/dev/fd/0"} {
		if !safefile.StdStreamName(p) {
			t.Errorf("%s is not recognised as a standard stream", p)
		}
	}
	for _, p := range []string{"/dev/stdinx", "/proc/self/fdinfo/0", "/proc/self/fd", "/work/dev/stdin"} {
		if safefile.StdStreamName(p) {
			t.Errorf("%s is taken for a standard stream", p)
		}
	}
	// writeTarget only looks (Lstat, Readlink): safe to ask about paths
	// outside the temp dir.
	for _, p := range []string{"/dev/stdout", "/dev/stderr", "/proc/self/fd/1"} {
		if _, _, err := writeTarget(p); !errors.Is(err, safefile.ErrStdStream) {
			t.Errorf("writeTarget(%s) = %v", p, err)
		}
	}
	if _, _, err := writeTarget("/dev/null"); describeFSError(err) != reasonChar {
		t.Errorf("writeTarget(/dev/null) = %v", err)
	}
}

func TestWriteAndEditRefuseNonRegularTargets(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"adir/": ""})
	haveDevice := special(t, dir)
	if err := os.Symlink("fifo", filepath.Join(dir, "to-fifo")); err != nil {
		t.Fatal(err)
	}
	write, edit := NewWrite(Options{Cwd: dir}), NewEdit(Options{Cwd: dir})
	tests := []struct {
		name, path, reason string
		mode               fs.FileMode // the type the path must keep
		device             bool
	}{
		{"fifo", "fifo", reasonFIFO, fs.ModeNamedPipe, false},
		{"link to a fifo", "to-fifo", reasonFIFO, fs.ModeSymlink, false},
		{"socket", "sock", reasonSocket, fs.ModeSocket, false},
		{"device node", "null", reasonChar, fs.ModeDevice | fs.ModeCharDevice, true},
		{"directory", "adir", "it is a directory", fs.ModeDir, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.device && !haveDevice {
				t.Skip("creating device nodes is not permitted here")
			}
			res, err := boundedRun(t, t.Context(), write, writeTestArgs(tt.path, "x"))
			wantFailure(t, res, err, fmt.Sprintf("Cannot write %s: %s", tt.path, tt.reason))
			res, err = boundedRun(t, t.Context(), edit, editTestArgs(editEntry{Path: tt.path, OldText: "a", NewText: "b"}))
			wantFailure(t, res, err, fmt.Sprintf("Cannot edit %s: %s", tt.path, tt.reason))
			wantMode(t, filepath.Join(dir, tt.path), tt.mode)
		})
	}
	wantMode(t, filepath.Join(dir, "fifo"), fs.ModeNamedPipe)
	writeTestNoTemps(t, dir)
}

// A file with several names is rewritten in place: every name still
// shows the new content, and the mode is kept.
func TestWriteAndEditKeepHardLinks(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "old text\n"})
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.Chmod(a, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	check := func(want string) {
		t.Helper()
		fa, err1 := os.Stat(a)
		fb, err2 := os.Stat(b)
		if err1 != nil || err2 != nil || !os.SameFile(fa, fb) {
			t.Fatalf("the hard link was split (%v, %v)", err1, err2)
		}
		if fa.Mode().Perm() != 0o640 {
			t.Errorf("mode %v", fa.Mode())
		}
		if got := editTestRead(t, dir, "b.txt"); got != want {
			t.Errorf("b.txt %q, want %q", got, want)
		}
	}
	wantText(t, call(t, NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "a.txt", OldText: "old", NewText: "new"})),
		"Successfully replaced text in a.txt.", false, false)
	check("new text\n")
	wantText(t, call(t, NewWrite(Options{Cwd: dir}), writeTestArgs("b.txt", "short")), "Successfully wrote 5 bytes to b.txt", false, false)
	check("short")
	writeTestNoTemps(t, dir)
}

// A symlink whose target does not exist yet: write creates the target
// (and its directory) and the link stays a link.
func TestWriteThroughDanglingSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(filepath.Join("real", "new.txt"), link); err != nil {
		t.Fatal(err)
	}
	wantText(t, call(t, NewWrite(Options{Cwd: dir}), writeTestArgs("link.txt", "hi")), "Successfully wrote 2 bytes to link.txt", false, false)
	wantMode(t, link, fs.ModeSymlink)
	if got := editTestRead(t, dir, "real/new.txt"); got != "hi" {
		t.Errorf("target %q", got)
	}
	// A link loop is an error, not a replaced link.
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	res, err := boundedRun(t, t.Context(), NewWrite(Options{Cwd: dir}), writeTestArgs("loop", "x"))
	wantFailure(t, res, err, "Cannot write loop: …")
	wantMode(t, loop, fs.ModeSymlink)
}

func TestGrepSkipsNonRegularFiles(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "needle\n"})
	special(t, dir)
	grep := NewGrep(Options{Cwd: dir})
	res, err := boundedRun(t, t.Context(), grep, `{"pattern":"needle"}`)
	if err != nil || res.IsError || text(res) != "# a.txt\n1:needle" {
		t.Errorf("walk: got %q isError=%v err=%v", text(res), res.IsError, err)
	}
	for _, tt := range []struct{ path, want string }{
		{"fifo", "Cannot search fifo: " + reasonFIFO},
		{"sock", "Cannot search sock: " + reasonSocket},
		{"a.txt,fifo", "Cannot search fifo: " + reasonFIFO},
		{"/dev/zero", "Cannot search /dev/zero: " + reasonChar},
		{"/dev/stdin", "Cannot search /dev/stdin: " + reasonStd},
	} {
		res, err := boundedRun(t, t.Context(), grep, fmt.Sprintf(`{"pattern":"needle","path":%q}`, tt.path))
		wantFailure(t, res, err, tt.want)
	}
}

// sparse makes a 2 GiB file in dir that takes no disk space, starting with
// head (the rest reads as NUL bytes).
func sparse(t *testing.T, dir, name, head string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	return p
}

// allocated runs fn and returns the bytes it allocated (the whole
// process's, so this test does not run in parallel with others) and how
// long it took.
func allocated(fn func()) (uint64, time.Duration) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	fn()
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, d
}

// A 2 GiB sparse file: read looks at its first 8 KiB and reports it
// binary, grep skips it the same way, and edit refuses it by size; none
// allocates more than a few hundred KiB.
func TestHugeSparseFileStaysBounded(t *testing.T) {
	dir := t.TempDir()
	sparse(t, dir, "big.bin", "")
	const bound = 4 << 20
	tests := []struct {
		name string
		tool engine.Tool
		args string
		want string
	}{
		{"read", NewRead(Options{Cwd: dir}), `{"path":"big.bin"}`, "[big.bin is a binary file (2.0GB); its content is not shown]"},
		{"grep", NewGrep(Options{Cwd: dir}), `{"pattern":"x"}`, "No matches found"},
		{"edit", NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "big.bin", OldText: "a", NewText: "b"}),
			"Cannot edit big.bin: the file is 2.0GB, over edit's 64.0MB limit"},
	}
	for _, tt := range tests {
		var res engine.ToolResult
		var err error
		n, d := allocated(func() { res, err = boundedRun(t, t.Context(), tt.tool, tt.args) })
		t.Logf("%s of a 2 GiB sparse file: %d bytes allocated, %s", tt.name, n, d)
		if err != nil || text(res) != tt.want {
			t.Errorf("%s: got %q err=%v, want %q", tt.name, text(res), err, tt.want)
		}
		if n > bound {
			t.Errorf("%s allocated %d bytes, over %d", tt.name, n, bound)
		}
	}
}

// A text file that goes on for 2 GiB (text, then NUL bytes with no
// newline): the window is read, the count stops at the count limit and the
// total is reported as a lower bound; memory stays bounded; and a read
// that must stream far honours cancellation. The test sets a 1 MiB count
// limit, so it checks what was read whatever the machine's load; the
// full-size variant, which counts readCountLimit bytes, is not run with
// -short and asserts the same data, not a time.
func TestHugeTextFileStreams(t *testing.T) {
	dir := t.TempDir()
	sparse(t, dir, "log.txt", readTestLines(2000)+strings.Repeat("x", sniffLen)+"\n")
	for _, tt := range []struct {
		name  string
		limit int
	}{{"1 MiB count limit", 1 << 20}, {"full count limit", readCountLimit}} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.limit == readCountLimit && testing.Short() {
				t.Skipf("counts %d MiB; the 1 MiB variant checks the same", readCountLimit>>20)
			}
			read := NewRead(Options{Cwd: dir})
			read.(*readTool).countLimit = tt.limit
			var res engine.ToolResult
			var err error
			n, d := allocated(func() {
				res, err = read.Run(t.Context(), engine.ToolCall{ID: "c1", Name: "read", Arguments: []byte(`{"path":"log.txt","limit":3}`)}, nil)
			})
			t.Logf("read of a 2 GiB text file, counting %d MiB: %d bytes allocated, %s", tt.limit>>20, n, d)
			if err != nil || text(res) != "l1\nl2\nl3\n\n[Showing lines 1-3 of at least 2002. Use offset=4 to continue]" {
				t.Errorf("got %q err=%v", text(res), err)
			}
			if got := string(res.Details); got != `{"path":"log.txt","kind":"file","totalLines":2002,"startLine":1,"endLine":3,"truncated":true,"totalLinesCapped":true}` {
				t.Errorf("details %s", got)
			}
			if n > 4<<20 {
				t.Errorf("allocated %d bytes", n)
			}
		})
	}

	// The window is past the text: reaching it means streaming the NULs.
	read := NewRead(Options{Cwd: dir})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := boundedRun(t, ctx, read, `{"path":"log.txt","offset":5000}`)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: got %q err=%v, want context.Canceled", text(res), err)
	}
	_, err = boundedRun(t, ctx, NewGrep(Options{Cwd: dir}), `{"pattern":"never","path":"log.txt"}`)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled grep: err=%v, want context.Canceled", err)
	}
}

// Counting after the window stops once the count limit is passed: the
// total is then exactly the window, the lines that fit in the limit and
// the one that crossed it.
func TestReadCountStopsAtLimit(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	dir := tree(t, map[string]string{"short.log": readTestLines(3) + strings.Repeat("x\n", limit)})
	read := NewRead(Options{Cwd: dir})
	read.(*readTool).countLimit = limit
	res, err := boundedRun(t, t.Context(), read, `{"path":"short.log","limit":3}`)
	// Each "x\n" counts 2 bytes: line limit/2+1 is the first past the limit.
	want := 3 + limit/2 + 1
	if err != nil || text(res) != fmt.Sprintf("l1\nl2\nl3\n\n[Showing lines 1-3 of at least %d. Use offset=4 to continue]", want) {
		t.Errorf("got %q err=%v", text(res), err)
	}
	// Up to the limit the count is exact (here the rest is exactly the
	// limit: 2 bytes a line).
	read.(*readTool).countLimit = 2 * limit
	res, err = boundedRun(t, t.Context(), read, `{"path":"short.log","limit":3}`)
	if err != nil || text(res) != fmt.Sprintf("l1\nl2\nl3\n\n[Showing lines 1-3 of %d. Use offset=4 to continue]", 3+limit) {
		t.Errorf("got %q err=%v", text(res), err)
	}
}

// grep keeps only the lines around matches while it streams: context
// before a match comes from the ring, context after it is read past the
// match limit, and a match beyond the limit still shows as context.
func TestGrepStreamingContext(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 1; i <= 40; i++ {
		l := fmt.Sprintf("line%d", i)
		if i == 10 || (i >= 20 && i <= 27) {
			l += " hit"
		}
		lines = append(lines, l)
	}
	dir := tree(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
	grep := NewGrep(Options{Cwd: dir})
	tests := []struct{ name, args, want string }{
		{"context from the ring", `{"pattern":"hit","path":"f.txt","limit":1,"pre":3,"post":2}`,
			" 7-line7\n 8-line8\n 9-line9\n10:line10 hit\n11-line11\n12-line12\n\n[1 matches limit reached. Use limit=2 for more]"},
		{"matches past the fetch limit show as context", `{"pattern":"hit","path":"f.txt","offset":4,"limit":1,"pre":0,"post":4}`,
			"23:line23 hit\n24-line24 hit\n25-line25 hit\n26-line26 hit\n27-line27 hit\n\n[1 matches limit reached. Use limit=2 for more]"},
		{"context capped at the end of the file", `{"pattern":"line40","path":"f.txt","pre":1,"post":5}`, "39-line39\n40:line40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, grep, tt.args), tt.want, false, false)
		})
	}
}
