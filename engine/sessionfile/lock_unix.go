//go:build unix

package sessionfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Two processes appending to one session file would fork its tree
// silently (each writes children of its own leaf). A session file is
// therefore held by one process at a time: an advisory lock (flock) on
// the session file itself. The lock belongs to the file (its inode), not
// to a name: a symbolic or hard link to a held file finds it held. The
// kernel drops it when the holder dies, kill -9 included, and it needs
// neither a byte of space nor a writable directory (a full or read-only
// disk takes nothing from it). No file is created for it, so nothing
// planted next to a session (a symlink named like a lock file, say) is
// ever opened, followed or truncated.
//
// A rewrite moves a new file into the session's place: that file is
// locked before it gets the name (lockNew), so the name never leads to an
// unlocked file, and the lock of the replaced one is dropped after.
//
// Within a process the lock is shared (a switch to the session already
// open, under any of its names): a count per file.

// fileKey names a file independently of its path.
type fileKey struct{ dev, ino uint64 }

func keyOf(fi fs.FileInfo) fileKey {
	st := fi.Sys().(*syscall.Stat_t)
	return fileKey{uint64(st.Dev), uint64(st.Ino)}
}

var locks = struct {
	sync.Mutex
	held map[fileKey]*fileLock
}{held: map[fileKey]*fileLock{}}

type fileLock struct {
	key  fileKey
	f    *os.File // the descriptor that holds the flock
	refs int      // guarded by locks
}

// ErrLocked: the session file is held by another process.
var ErrLocked = errors.New("session file in use")

// acquire takes the lock of the session file at path (it exists), or
// shares the one this process holds on that file, under whatever name.
// A path that is not a regular file is refused without blocking.
func acquire(path string) (*fileLock, error) {
	fail := func(err error) (*fileLock, error) { return nil, fmt.Errorf("lock session %s: %w", path, err) }
	fi, err := os.Stat(path)
	if err == nil {
		err = safefile.CheckRegular(fi)
	}
	if err != nil {
		return fail(err)
	}
	for tries := 0; ; tries++ {
		// Write access, as appending needs anyway: an exclusive lock over
		// NFS needs it. O_NONBLOCK: a FIFO swapped in after the stat must
		// not block the open; the descriptor's stat refuses it.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
		if err != nil {
			return fail(err)
		}
		fi, err := f.Stat()
		if err == nil {
			err = safefile.CheckRegular(fi)
		}
		if err != nil {
			f.Close()
			return fail(err)
		}
		key := keyOf(fi)
		locks.Lock()
		if l := locks.held[key]; l != nil {
			l.refs++
			locks.Unlock()
			f.Close()
			return l, nil
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			locks.Unlock()
			f.Close()
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				return fail(err)
			}
			holder := "another process"
			if pid := holderPid(key); pid > 0 {
				holder = fmt.Sprintf("process %d", pid)
			}
			return nil, fmt.Errorf("%w: %s is being written by %s (another xcsh); end it, or use another session", ErrLocked, path, holder)
		}
		// The holder may have moved a new file into the name (a rewrite)
		// and let go of the old one between our open and our lock: then we
		// hold a file that no longer has this name; try again.
		if pi, err := os.Stat(path); err == nil && os.SameFile(fi, pi) {
			l := &fileLock{key: key, f: f, refs: 1}
			locks.held[key] = l
			locks.Unlock()
			return l, nil
		}
		locks.Unlock()
		f.Close()
		if tries > 10 {
			return fail(errors.New("the file keeps changing"))
		}
	}
}

// lockNew locks a file this process has just created (the temporary file
// of an atomic write), before it takes a session's name. The lock holds
// its own descriptor of the file: f may be closed.
func lockNew(f *os.File) (*fileLock, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	syscall.ForkLock.RLock() // no child may inherit the copy
	fd, err := syscall.Dup(int(f.Fd()))
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	lf := os.NewFile(uintptr(fd), f.Name())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lf.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	l := &fileLock{key: keyOf(fi), f: lf, refs: 1}
	locks.Lock()
	locks.held[l.key] = l
	locks.Unlock()
	return l, nil
}

// release drops one hold; the last one unlocks.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	locks.Lock()
	defer locks.Unlock()
	if l.refs--; l.refs > 0 {
		return
	}
	if locks.held[l.key] == l {
		delete(locks.held, l.key)
	}
	// Unlock before closing: a child forked meanwhile (a tool's command,
	// an MCP server) holds a copy of the descriptor until its exec, and
	// the lock with it; this process would then find its own session
	// "in use" when it opens it again (an ACP session/load, a served
	// session evicted and reopened). LOCK_UN drops it for every copy.
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// holds reports whether l is the lock of the file fi describes.
func (l *fileLock) holds(fi fs.FileInfo) bool { return l != nil && keyOf(fi) == l.key }
