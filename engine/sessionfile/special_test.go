package sessionfile

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bounded fails the test when fn has not returned in 10 s: a blocking open
// must fail, not hang the package.
func bounded(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

// Load, ReadInfo, Latest and FindByID refuse what is not a regular file
// (and the agent's own streams) without blocking or reading it: a FIFO
// nobody writes, a link to /dev/zero, a directory, a socket.
func TestSpecialSessionFilesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeSession(t, dir, "aaaa000000000001", "the good one", time.Unix(1000, 0))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl"))
	os.Mkdir(filepath.Join(dir, "dir.jsonl"), 0o700)
	l, err := net.Listen("unix", filepath.Join(dir, "sock.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reasons := map[string]string{
		"fifo.jsonl":      "it is a named pipe (FIFO), not a regular file",
		"zero.jsonl":      "it is a character device, not a regular file",
		"dir.jsonl":       "it is a directory",
		"sock.jsonl":      "it is a socket, not a regular file",
		"/proc/self/fd/1": "it is one of the agent's own standard streams (stdin, stdout, stderr)",
	}
	for name, reason := range reasons {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		bounded(t, "Load "+name, func() {
			_, err := Load(p)
			if !errors.Is(err, ErrNotSession) || err.Error() != p+": "+reason {
				t.Errorf("Load(%s) = %v, want %q", name, err, p+": "+reason)
			}
		})
		bounded(t, "ReadInfo "+name, func() {
			if _, err := ReadInfo(p); !errors.Is(err, ErrNotSession) || !strings.HasSuffix(err.Error(), reason) {
				t.Errorf("ReadInfo(%s) = %v", name, err)
			}
		})
	}
	// The special files are newer than the good session (made now, it at
	// second 1000): --continue passes over them and says so.
	var skipped []string
	bounded(t, "Latest", func() {
		p, err := Latest(dir, func(p string, err error) { skipped = append(skipped, err.Error()) })
		if err != nil || p != good {
			t.Errorf("Latest = %q, %v", p, err)
		}
	})
	if len(skipped) != 3 {
		t.Errorf("skipped %q, want the fifo, the link and the socket", skipped)
	}
	bounded(t, "List", func() {
		if infos, err := List(dir); err != nil || len(infos) != 1 {
			t.Errorf("List = %v, %v", infos, err)
		}
	})
	bounded(t, "FindByID", func() {
		if info, err := FindByID("aaaa", dir); err != nil || info.Path != good {
			t.Errorf("FindByID = %v, %v", info, err)
		}
		if _, err := FindByID("fifo", dir); !errors.Is(err, ErrNoSession) {
			t.Errorf("FindByID(fifo) = %v", err)
		}
	})
}

// A line over the cap is skipped and reported with its size, without
// being held; the lines around it load, and appending goes on after it.
func TestLoadLineOverCap(t *testing.T) {
	t.Parallel()
	path := writeSession(t, t.TempDir(), "aaaa000000000001", "before", time.Unix(1000, 0))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	huge := `{"type":"message","id":"ffff0001","parentId":null,"message":{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}}` + "\n"
	after := string(chain(userEntry("after"))[0].AppendJSON(nil)) + "\n"
	f.WriteString(huge + after)
	f.Close()

	raw, _ := os.Open(path)
	defer raw.Close()
	s, err := read(raw, 4096)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("line 4: skipped: line of %.1f KiB is over the 4.0 KiB cap", float64(len(huge))/1024)
	if len(s.Warnings) != 1 || s.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", s.Warnings, want)
	}
	if last := s.Entries[len(s.Entries)-1]; s.torn || s.good != s.size || last.ID != "a0000000" {
		t.Errorf("torn %v good %d size %d last %q", s.torn, s.good, s.size, last.ID)
	}
	if fi, _ := os.Stat(path); fi.Size() != s.size {
		t.Errorf("size %d, file %d", s.size, fi.Size())
	}
	// Under the real cap the same file loads whole.
	if s, err := Load(path); err != nil || len(s.Warnings) != 0 {
		t.Errorf("Load: %v %q", err, s.Warnings)
	}
}

// A header line with no end (a file of zeros) is not a session, and
// listing reads at most headerLimit of it.
func TestEndlessFirstLine(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "zeros.jsonl")
	f, _ := os.Create(p)
	if err := f.Truncate(1 << 30); err != nil {
		t.Skipf("no sparse files: %v", err)
	}
	f.Close()
	bounded(t, "ReadInfo", func() {
		if _, err := ReadInfo(p); !errors.Is(err, ErrNotSession) {
			t.Errorf("ReadInfo = %v", err)
		}
	})
	bounded(t, "Latest", func() {
		if _, err := Latest(filepath.Dir(p), nil); !errors.Is(err, ErrNoSession) {
			t.Errorf("Latest = %v", err)
		}
	})
	raw, _ := os.Open(p)
	defer raw.Close()
	if _, err := read(raw, 1<<20); !errors.Is(err, ErrNotSession) || !strings.Contains(err.Error(), "first line is over") {
		t.Errorf("read = %v", err)
	}
}
