package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// startupPath resolves --no-session, --continue, --resume and --session
// to the session file the process continues ("" for a new session). A
// session asked for by name that cannot be found is a start-up error that
// creates and overwrites nothing.
func startupPath(o *options, env func(string) string, cwd string, stderr io.Writer) (string, error) {
	target := o.session
	if target == "" {
		target = o.resume
	}
	if o.noSession {
		// --no-session wins: hosts pass flags they were configured with,
		// and an in-memory session is the safe reading of the mix.
		if target != "" || o.cont {
			fmt.Fprintln(stderr, "xcsh: --no-session: --continue, --resume and --session are ignored")
		}
		return "", nil
	}
	dir := sessionfile.ResolveDir(o.sessionDir, env, cwd)
	switch {
	case target != "":
		if fi, err := os.Stat(target); err == nil && !fi.IsDir() {
			return filepath.Abs(target)
		} else if strings.ContainsRune(target, os.PathSeparator) || strings.HasSuffix(target, ".jsonl") {
			// A path, not an id prefix: say so plainly.
			if err == nil {
				return "", fmt.Errorf("%s is a directory, not a session file", target)
			}
			return "", fmt.Errorf("no such session file: %s", target)
		}
		info, err := sessionfile.FindByID(target, dir, filepath.Join(sessionfile.AgentDir(env), "sessions"))
		if err != nil {
			return "", fmt.Errorf("no session matches %q: %v", target, err)
		}
		return info.Path, nil
	case o.cont:
		// The newest session of this directory; none yet starts a new one.
		skipped := func(_ string, err error) { fmt.Fprintf(stderr, "xcsh: --continue: skipped %v\n", err) }
		if p, err := sessionfile.Latest(dir, skipped); err == nil {
			return p, nil
		}
	}
	return "", nil
}

// record is the record a session starts from: a new one (written when its
// first assistant message exists), or one continued from a file, appended
// to from where it ended. Without a store it lives in memory only.
type record struct {
	id, file string
	dir      string                // where the verbs write new sessions (new_session, fork); "" in memory
	store    *sessionfile.Store    // nil with --no-session
	loaded   *engine.LoadedSession // the record to continue; nil when new
}

// newRecord starts a new session's record in dir ("": in memory).
func newRecord(dir, cwd string, clock engine.Clock, ids engine.IDSource) (*record, error) {
	id := ids.NewID("session")
	if dir == "" {
		return &record{id: id}, nil
	}
	st, err := sessionfile.Create(dir, sessionfile.Header{ID: id, Timestamp: clock.NowMillis(), Cwd: cwd}, nil)
	if err != nil {
		return nil, err
	}
	return &record{id: id, file: st.Path(), dir: dir, store: st}, nil
}

// openRecord continues the session file at path (openFile's rules).
func openRecord(path string, stderr io.Writer) (*record, error) {
	l, err := openFile(path, stderr)
	if err != nil {
		return nil, err
	}
	return &record{id: l.ID, file: l.File, store: l.Store.(*sessionfile.Store), loaded: l}, nil
}

// openFile opens a session file to continue (sessionfile.Open), its
// warnings on stderr, with room for it in the heap (raiseMemoryLimit).
func openFile(path string, stderr io.Writer) (*engine.LoadedSession, error) {
	raiseMemoryLimit(path)
	l, _, err := sessionfile.Open(path, func(w string) { fmt.Fprintf(stderr, "xcsh: %s: %s\n", path, w) })
	return l, err
}

// initialStore is the engine's initial Store: the new session's file
// store, or nil (a MemoryStore) in memory or when a resumed session
// brings its own (Resume installs it). (A nil *Store in the interface
// would not be nil.)
func (r *record) initialStore() engine.Store {
	if r.store == nil || r.loaded != nil {
		return nil
	}
	return r.store
}

// fileSessions implements engine.SessionFiles with session files in dir.
type fileSessions struct {
	dir, cwd string
	clock    engine.Clock
	stderr   io.Writer
}

// Create implements engine.SessionFiles: a file written at once when it
// holds entries, lazily otherwise.
func (f fileSessions) Create(id, parent string, entries []*engine.Entry) (engine.Store, string, error) {
	st, err := sessionfile.Create(f.dir, sessionfile.Header{ID: id, Timestamp: f.clock.NowMillis(), Cwd: f.cwd, ParentSession: parent}, entries)
	if err != nil {
		return nil, "", err
	}
	return st, st.Path(), nil
}

// Open implements engine.SessionFiles.
func (f fileSessions) Open(path string) (*engine.LoadedSession, error) {
	return openFile(path, f.stderr)
}

// files is what the session verbs create and open files with; nil in
// memory (--no-session).
func (r *record) files(cwd string, clock engine.Clock, stderr io.Writer) engine.SessionFiles {
	if r.store == nil {
		return nil
	}
	return fileSessions{dir: r.dir, cwd: cwd, clock: clock, stderr: stderr}
}
