//go:build unix

package sessionfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Two processes appending to one session file would fork its tree
// silently (each writes children of its own leaf). A session file is
// therefore held by one process at a time: an advisory lock (flock) on
// <file>.lock, which holds the holder's pid so the refusal can name it.
// The kernel drops the lock when the holder dies, kill -9 included.
// Within a process the lock is shared (a switch to the session already
// open, a clone's new store): a count per path.

var locks = struct {
	sync.Mutex
	held map[string]*fileLock
}{held: map[string]*fileLock{}}

type fileLock struct {
	path string
	f    *os.File
	refs int
}

// ErrLocked: the session file is held by another process.
var ErrLocked = errors.New("session file in use")

// acquire takes the lock of the session file at path, or shares the one
// this process holds.
func acquire(path string) (*fileLock, error) {
	lp := path + ".lock"
	locks.Lock()
	defer locks.Unlock()
	if l := locks.held[lp]; l != nil {
		l.refs++
		return l, nil
	}
	for tries := 0; ; tries++ {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lock session %s: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			holder := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("process %d", pid)
			}
			return nil, fmt.Errorf("%w: %s is being written by %s (another xcsh); end it, or use another session", ErrLocked, path, holder)
		}
		// The lock file may have been removed by its last holder between
		// our open and our lock: then we hold an orphan; try again.
		fi, ferr := f.Stat()
		pi, perr := os.Stat(lp)
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			l := &fileLock{path: lp, f: f, refs: 1}
			locks.held[lp] = l
			return l, nil
		}
		f.Close()
		if tries > 10 {
			return nil, fmt.Errorf("lock session %s: the lock file keeps changing", path)
		}
	}
}

// release drops one hold; the last removes the lock file and unlocks.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	locks.Lock()
	defer locks.Unlock()
	if l.refs--; l.refs > 0 {
		return
	}
	delete(locks.held, l.path)
	os.Remove(l.path) // while locked: a newcomer then finds it gone (above)
	l.f.Close()
}
