//go:build unix

package sessionfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// flockTool is flock(1): the other process of these tests.
func flockTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("needs flock(1) (util-linux) as a second process")
	}
	return p
}

// lockedElsewhere reports whether another process finds the file at path
// locked (flock -n fails on it).
func lockedElsewhere(t *testing.T, path string) bool {
	t.Helper()
	out, err := exec.Command(flockTool(t), "-n", "-E", "99", path, "true").CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return false
	case errors.As(err, &ee) && ee.ExitCode() == 99:
		return true
	}
	t.Fatalf("flock %s: %v: %s", path, err, out)
	return false
}

// sessionOnDisk writes a session of one answered turn at path and returns
// its store, open.
func sessionOnDisk(t *testing.T, path string) *Store {
	t.Helper()
	s := New(path, newHeader())
	appendAll(t, s, conversation(1))
	if !s.Created() {
		t.Fatal("no file after an answer")
	}
	return s
}

// The lock belongs to the file: held in this process, no other process
// can take it under any of the file's names (the name itself, a symbolic
// link, a hard link), and within the process every name shares the one
// lock. Releasing the last hold frees it, and it leaves no file behind.
func TestSessionFileLockHoldsEveryName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sym, hard := filepath.Join(dir, "sym.jsonl"), filepath.Join(dir, "hard.jsonl")
	if err := os.Symlink("s.jsonl", sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hard); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	l1, err := acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sym, hard} {
		l, err := acquire(name)
		if err != nil || l != l1 {
			t.Fatalf("acquire(%s) in the holding process: %v (shared: %v)", filepath.Base(name), err, l == l1)
		}
		l.release()
	}
	for _, name := range []string{path, sym, hard} {
		if !lockedElsewhere(t, name) {
			t.Errorf("another process took the lock through %s", filepath.Base(name))
		}
	}
	l1.release()
	if lockedElsewhere(t, path) {
		t.Error("still locked after the last release")
	}
	if des, _ := os.ReadDir(dir); len(des) != 3 {
		t.Errorf("dir holds %v: the lock made a file", des)
	}
}

// holdInChild makes another process hold the lock of path (flock(1) runs
// cat under it) until the test ends; it returns that process's pid.
func holdInChild(t *testing.T, path string) int {
	t.Helper()
	cmd := exec.Command(flockTool(t), "-n", path, "sh", "-c", "echo held; exec cat")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("the holder said %q, %v", line, err)
	}
	return cmd.Process.Pid
}

// A file another process holds is refused under each of its names, and
// the refusal names the holder's pid (found from the file, not the name:
// Linux lists the locks in /proc/locks).
func TestSessionFileLockRefusalNamesHolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sym, hard := filepath.Join(dir, "sym.jsonl"), filepath.Join(dir, "hard.jsonl")
	os.Symlink(path, sym)
	if err := os.Link(path, hard); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	pid := holdInChild(t, hard)
	holder := "another process"
	if _, err := os.Stat("/proc/locks"); err == nil {
		holder = fmt.Sprintf("process %d", pid)
	}
	for _, name := range []string{path, sym, hard} {
		_, err := acquire(name)
		want := fmt.Sprintf("session file in use: %s is being written by %s (another xcsh); end it, or use another session", name, holder)
		if !errors.Is(err, ErrLocked) || err.Error() != want {
			t.Errorf("acquire(%s) = %v\nwant %s", filepath.Base(name), err, want)
		}
	}
}

// What is not a regular file is refused at once, without blocking (a FIFO
// nobody reads) or writing: a FIFO, a directory, a link to a device.
func TestSessionFileLockRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, "dir.jsonl")
	os.Mkdir(d, 0o700)
	null := filepath.Join(dir, "null.jsonl")
	os.Symlink(os.DevNull, null)
	for name, reason := range map[string]string{fifo: "it is a named pipe (FIFO)", d: "it is a directory", null: "it is a character device"} {
		bounded(t, "acquire "+name, func() {
			l, err := acquire(name)
			if err == nil || !strings.Contains(err.Error(), reason) {
				t.Errorf("acquire(%s) = %v, want %q", filepath.Base(name), err, reason)
				l.release()
			}
		})
	}
}

// Nothing named like the lock file of an older xcsh (<file>.lock) is
// opened, followed or truncated: a symbolic link planted there (a
// sandboxed command can plant one) leaves the file it leads to as it
// was, and a FIFO or a directory there blocks nothing.
func TestSessionFileLockIgnoresPlantedLockFiles(t *testing.T) {
	t.Parallel()
	for _, plant := range []string{"symlink", "fifo", "dir", "hardlink"} {
		t.Run(plant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, FileName(t0, "0123456789abcdef"))
			s := sessionOnDisk(t, path)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			lp := path + ".lock"
			var err error
			switch plant {
			case "symlink":
				err = os.Symlink(victim, lp)
			case "fifo":
				err = syscall.Mkfifo(lp, 0o600)
			case "dir":
				err = os.Mkdir(lp, 0o700)
			case "hardlink":
				err = os.Link(victim, lp)
			}
			if err != nil {
				t.Skipf("cannot plant a %s: %v", plant, err)
			}
			bounded(t, "resume", func() {
				loaded, err := Load(path)
				if err != nil {
					t.Error(err)
					return
				}
				st, err := OpenAppend(path, loaded)
				if err != nil {
					t.Errorf("resume with a planted %s: %v", plant, err)
					return
				}
				appendAll(t, st, []*engine.Entry{userEntry("more")})
				st.Close()
			})
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the file a planted %s leads to holds %q", plant, b)
			}
			if fi, err := os.Lstat(lp); err != nil || fi.Mode().Type() != map[string]os.FileMode{
				"symlink": os.ModeSymlink, "fifo": os.ModeNamedPipe, "dir": os.ModeDir, "hardlink": 0}[plant] {
				t.Errorf("the planted %s changed: %v", plant, err)
			}
		})
	}
}

// A new session's file is locked from the moment it has its name, and a
// rewrite (a new file moved into the name) keeps the name locked: the new
// file is, and the replaced one (still reachable through a hard link made
// before) is let go, being another file now.
func TestSessionFileLockFollowsRewrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName(t0, "0123456789abcdef"))
	s := sessionOnDisk(t, path)
	defer s.Close()
	if !lockedElsewhere(t, path) {
		t.Fatal("a new session file is not locked")
	}
	old := filepath.Join(dir, "old.jsonl")
	if err := os.Link(path, old); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := s.SetTitle("renamed", "user"); err != nil {
		t.Fatal(err)
	}
	if !lockedElsewhere(t, path) {
		t.Error("the rewritten file is not locked")
	}
	if lockedElsewhere(t, old) {
		t.Error("the replaced file is still locked")
	}
	n := *conversation(1)[0]
	if err := s.Rewrite([]*engine.Entry{&n}); err != nil {
		t.Fatal(err)
	}
	if !lockedElsewhere(t, path) {
		t.Error("the file is not locked after Rewrite")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if lockedElsewhere(t, path) {
		t.Error("still locked after Close")
	}
}

// A second process resuming a session another holds is refused by
// OpenAppend, through a symbolic link too; the holder's appends go on.
func TestOpenAppendRefusedWhileHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName(t0, "0123456789abcdef"))
	s := sessionOnDisk(t, path)
	s.Close()
	sym := filepath.Join(dir, "link.jsonl")
	os.Symlink(path, sym)
	holdInChild(t, path)
	loaded, err := Load(sym)
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenAppend(sym, loaded)
	if !errors.Is(err, ErrLocked) || !regexp.MustCompile(`link\.jsonl is being written by (process \d+|another process)`).MatchString(err.Error()) {
		t.Fatalf("OpenAppend through a link to a held file: %v", err)
	}
}
