package sessionfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// Store is the engine.Store of a session persisted to a file. The engine
// appends on its executor; SetTitle runs on another goroutine, so the
// store's state is guarded by mu, which a rewrite holds only for its last
// step (see SetTitle): an append never waits for a whole file to be copied.
type Store struct {
	mu     sync.Mutex
	path   string
	header Header
	// pending holds the lines of the entries appended before the file
	// exists (lazy creation), header excluded: it may still change.
	pending []byte
	// f is the file open O_APPEND once it exists; nil before.
	f *os.File
	// backlog holds the lines that could not be written (a full or
	// read-only disk), in order: the next append writes them first, with
	// its own, so no entry on disk ever has a parent that is not, and
	// nothing is lost while the process lives.
	backlog []byte
	// unterminated: the file may end inside a line (a failed write whose
	// partial line could not be cut, a file loaded without its final
	// newline); the next append starts with a newline so its own line
	// stays whole.
	unterminated bool
	// flushFailed: creating the file failed; every append tries again.
	flushFailed bool
	lock        *fileLock // held while the file is open for appends
	closed      bool      // after Close: appends fail rather than recreate the file
	buf         []byte    // scratch line
}

var _ engine.Store = (*Store)(nil)

// New returns the store of a new session to be written at path. Nothing
// is written until the first assistant message (or Flush).
func New(path string, h Header) *Store {
	if h.Version == 0 {
		h.Version = Version
	}
	return &Store{path: path, header: h}
}

// OpenAppend continues the file Load read as s: later entries are
// appended after its last line. A torn last line (which Load skipped) is
// cut off first, so the next entry starts on a fresh line.
func OpenAppend(path string, s *Session) (*Store, error) {
	lock, err := acquire(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		// The file we locked, not one moved in since.
		if fi, serr := f.Stat(); serr != nil || !lock.holds(fi) {
			f.Close()
			f, err = nil, errors.New("the file was replaced as it was opened")
		}
	}
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("open session %s: %w", path, err)
	}
	st := &Store{path: path, header: s.Header, f: f, lock: lock}
	if s.good < s.size {
		// Cut the torn tail only if the file is still the one we read;
		// otherwise just make sure the next line starts on its own.
		if fi, err := f.Stat(); err == nil && fi.Size() == s.size && s.torn {
			if err := f.Truncate(s.good); err != nil {
				f.Close()
				lock.release()
				return nil, fmt.Errorf("cut torn line of %s: %w", path, err)
			}
		} else {
			st.unterminated = true
		}
	}
	return st, nil
}

// Path returns the session file's path.
func (s *Store) Path() string { return s.path }

// Header returns the session header.
func (s *Store) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// Created reports whether the file exists (it was written or opened).
func (s *Store) Created() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f != nil
}

// Append implements engine.Store: it records e, as one line. Before the
// file exists the line is kept; the first assistant message creates the
// file with everything so far. ctx is not consulted: persisting must
// happen even after an abort, and a local write does not block for long.
func (s *Store) Append(_ context.Context, e *engine.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("append to session %s: %w", s.path, ErrClosed)
	}
	s.buf = appendLine(s.buf[:0], e)
	if s.f == nil {
		s.pending = append(s.pending, s.buf...)
		if s.flushFailed || e.Type == engine.EntryMessage && e.Message != nil && e.Message.Role() == "assistant" {
			err := s.flush()
			s.flushFailed = err != nil
			return err
		}
		return nil
	}
	return s.write(s.buf)
}

// appendLine appends e's line with its newline, long strings cut.
func appendLine(dst []byte, e *engine.Entry) []byte {
	start := len(dst)
	dst = e.AppendJSON(dst)
	if len(dst)-start > maxPersistChars {
		line := truncateLongStrings(dst[start:])
		dst = append(dst[:start], line...)
	}
	return append(dst, '\n')
}

// write appends one line with a single write(2), after the backlog of
// lines an earlier failure left unwritten. A write that fails half-way
// has its partial line cut off again (the file is as before the write),
// and everything it held joins the backlog; only when the cut fails too
// does the file end inside a line, and the next write then starts with a
// newline, so no line is ever glued to another.
func (s *Store) write(line []byte) error {
	if len(s.backlog) > 0 {
		s.backlog = append(s.backlog, line...)
		line = s.backlog
	}
	out := line
	if s.unterminated {
		out = append([]byte{'\n'}, line...)
	}
	n, err := s.f.Write(out)
	if err == nil {
		s.unterminated, s.backlog = false, nil
		return nil
	}
	if n > 0 {
		if fi, serr := s.f.Stat(); serr != nil || s.f.Truncate(fi.Size()-int64(n)) != nil {
			// The partial line stays: the next write must not continue it.
			s.unterminated = out[n-1] != '\n'
		}
	}
	if len(s.backlog) == 0 {
		s.backlog = append([]byte(nil), line...)
	}
	return fmt.Errorf("%w: append to session %s: %w (%d %s waiting)", ErrNotSaved, s.path, err, bytes.Count(s.backlog, []byte{'\n'}), plural(bytes.Count(s.backlog, []byte{'\n'}), "entry", "entries"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Flush makes sure the file exists and holds every entry appended so far,
// even before the first assistant message (the original's ensureOnDisk,
// for a branch written at once). It does nothing once the file exists.
// It never replaces a file already at the path (ErrExist): a new session
// must not destroy another.
func (s *Store) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flush()
}

func (s *Store) flush() error {
	if s.closed {
		return fmt.Errorf("write session %s: %w", s.path, ErrClosed)
	}
	if s.f != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("create session dir: %w", err)
	}
	head := append(s.header.AppendJSON(nil), '\n')
	lock, err := writeAtomic(s.path, false, func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		_, err := w.Write(s.pending)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		// The file we wrote and locked, not one moved in since.
		if fi, serr := f.Stat(); serr != nil || !lock.holds(fi) {
			f.Close()
			f, err = nil, errors.New("the file was replaced as it was created")
		}
	}
	if err != nil {
		lock.release()
		return fmt.Errorf("%w: open session %s: %w", ErrNotSaved, s.path, err)
	}
	s.f, s.pending, s.lock = f, nil, lock
	return nil
}

// SetTitle names the session (titleSource "user" or "auto"). The name
// lives in the header, so an existing file is rewritten whole, atomically,
// through a temporary file; otherwise the name waits for the first write,
// unless that write already failed: then the file is created now, and
// failing that the name is refused.
// It may run concurrently with Append: the file is copied without the
// lock, then, under it, what was appended meanwhile is copied too and the
// new file takes the old one's place, so no append is lost and none waits
// for more than that last step.
func (s *Store) SetTitle(title, source string) (err error) {
	s.mu.Lock()
	oldTitle, oldSource := s.header.Title, s.header.TitleSource
	s.header.Title, s.header.TitleSource = title, source
	if s.f == nil && s.flushFailed && !s.closed {
		// Creating the file failed (a full disk): a name kept only in
		// memory would be claimed and lost with the process. Create the
		// file now, with the name, or fail and keep the old one.
		err := s.flush()
		if err != nil {
			s.header.Title, s.header.TitleSource = oldTitle, oldSource
		}
		s.flushFailed = err != nil
		s.mu.Unlock()
		return err
	}
	if s.f == nil || s.closed {
		s.mu.Unlock()
		return nil
	}
	head := append(s.header.AppendJSON(nil), '\n')
	s.mu.Unlock()
	defer func() {
		if err != nil { // the file keeps its name: so does the store
			s.mu.Lock()
			s.header.Title, s.header.TitleSource = oldTitle, oldSource
			s.mu.Unlock()
		}
	}()

	src, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("rewrite session header: %w", err)
	}
	defer src.Close()
	r := bufio.NewReaderSize(src, 64<<10)
	if _, err := readLine(r, nil); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("rewrite session header: %w", err)
	}
	var last byte = '\n'
	lock, err := writeAtomic(s.path, true, func(w io.Writer) error {
		lw := &lastByteWriter{w: w, last: '\n'}
		if _, err := w.Write(head); err != nil {
			return err
		}
		_, err := io.Copy(lw, r)
		last = lw.last
		return err
	}, func(w io.Writer) (func(bool), error) { return s.finishRewrite(w, r, last) })
	s.adoptLock(lock)
	return err
}

// finishRewrite is the last step of a rewrite, under the lock: it copies
// what was appended since the first copy read r to the end (last is the
// byte that copy ended on), and returns what to do once the new file has
// replaced the old one or not; the lock is held until then.
func (s *Store) finishRewrite(w io.Writer, r io.Reader, last byte) (func(bool), error) {
	s.mu.Lock()
	lw := &lastByteWriter{w: w, last: last}
	if _, err := io.Copy(lw, r); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	return func(moved bool) {
		defer s.mu.Unlock()
		if !moved {
			return
		}
		// The old descriptor names the replaced file: reopen. Failing
		// that, appends fail rather than go to the replaced file.
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		s.f.Close()
		if err != nil {
			s.f, s.closed = nil, true
			return
		}
		s.f = f
		s.unterminated = lw.last != '\n'
	}, nil
}

// adoptLock makes l (the lock of the file a rewrite moved into place, nil
// when it failed) the store's, and drops the replaced file's. Until then
// both are held: the name never leads to an unlocked file.
func (s *Store) adoptLock(l *fileLock) {
	if l == nil {
		return
	}
	s.mu.Lock()
	old := l
	if !s.closed {
		old, s.lock = s.lock, l
	}
	s.mu.Unlock()
	old.release()
}

// Sync flushes the file to stable storage (fsync). Appends reach the
// kernel at once; Sync makes them survive a kernel crash or power cut.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	return s.f.Sync()
}

// Close syncs and closes the file. Entries kept for a file not yet
// created are dropped, as the original drops a session that never got an
// answer.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	defer func() { s.lock.release(); s.lock = nil }()
	if s.f == nil {
		return nil
	}
	var err error
	if len(s.backlog) > 0 {
		// A last chance for what could not be written: space may be back.
		err = s.write(nil)
	}
	if serr := s.f.Sync(); err == nil {
		err = serr
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	return err
}

// writeAtomic writes a file through a temporary file in the same
// directory: written, synced, moved to path, and the directory synced so
// the move survives a power cut. Readers see the old file or the new one,
// never a part. With replace false an existing file is left alone
// (fs.ErrExist): the temporary file is hard-linked to path, which fails
// if path exists, where a rename would silently replace it. The new file
// is locked (see lock_unix.go) before it takes the name; on success the
// caller gets that lock.
//
// finish, if given, runs after fill with the same writer, for a last part
// written under a lock of the caller's; the function it returns is called
// once the move is over (moved reports whether the file is in place) and
// releases that lock: fill's copy runs unlocked, finish's part and the
// move are one step for the caller.
func writeAtomic(path string, replace bool, fill func(io.Writer) error, finish ...func(io.Writer) (func(moved bool), error)) (lock *fileLock, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("write session %s: %w", path, err)
	}
	lock, err = lockNew(tmp)
	defer func() {
		tmp.Close()           // a no-op error once closed
		os.Remove(tmp.Name()) // gone already after a rename
		if err != nil {
			lock.release()
			lock = nil
			// The temporary file's random name says nothing to a user.
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == tmp.Name() {
				err = pe.Err
			}
			err = fmt.Errorf("write session %s: %w", path, err)
		}
	}()
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(tmp, 256<<10)
	if err = fill(w); err != nil {
		return nil, err
	}
	if len(finish) > 0 {
		// The bulk reaches the disk before the caller locks: the sync under
		// the lock then covers only the last part.
		if err = w.Flush(); err != nil {
			return nil, err
		}
		if err = tmp.Sync(); err != nil {
			return nil, err
		}
		var done func(moved bool)
		if done, err = finish[0](w); err != nil {
			return nil, err
		}
		// done releases the caller's lock, on every path from here on; it
		// runs before the cleanup above (deferred earlier, run later).
		defer func() { done(err == nil) }()
	}
	if err = w.Flush(); err != nil {
		return nil, err
	}
	if err = tmp.Sync(); err != nil {
		return nil, err
	}
	if err = tmp.Close(); err != nil {
		return nil, err
	}
	switch {
	case replace:
		err = os.Rename(tmp.Name(), path)
	default:
		err = os.Link(tmp.Name(), path)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// No hard links here (some network and FUSE filesystems):
			// check, then rename; only a racing writer can slip between.
			if _, serr := os.Lstat(path); serr == nil {
				err = fs.ErrExist
			} else {
				err = os.Rename(tmp.Name(), path)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: not every filesystem syncs directories
		d.Close()
	}
	return lock, nil
}

// lastByteWriter remembers the last byte written through it.
type lastByteWriter struct {
	w    io.Writer
	last byte
}

func (l *lastByteWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}
