package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// sessionSetup is the session the process serves: a new one, whose file
// is written when its first assistant message exists, or one resumed from
// a file (--continue, --resume, --session), appended to from where it
// ended. With --no-session it lives in memory only.
type sessionSetup struct {
	id, file string
	dir      string             // where new sessions of this process are written
	store    *sessionfile.Store // nil with --no-session
	loaded   *sessionfile.Session
}

// setupSession resolves --no-session, --session-dir, --continue, --resume
// and --session. A session asked for by name that cannot be found or read
// is a start-up error that creates and overwrites nothing.
func setupSession(o *options, env func(string) string, cwd string, nowMs int64, ids engine.IDSource, stderr io.Writer) (*sessionSetup, error) {
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
		return &sessionSetup{id: ids.NewID("session")}, nil
	}
	dir := sessionfile.ResolveDir(o.sessionDir, env, cwd)
	path := ""
	switch {
	case target != "":
		if fi, err := os.Stat(target); err == nil && !fi.IsDir() {
			path = target
		} else if strings.ContainsRune(target, os.PathSeparator) || strings.HasSuffix(target, ".jsonl") {
			// A path, not an id prefix: say so plainly.
			if err == nil {
				return nil, &exitError{2, "Error: " + target + " is a directory, not a session file"}
			}
			return nil, &exitError{2, "Error: no such session file: " + target}
		} else {
			info, err := sessionfile.FindByID(target, dir, filepath.Join(sessionfile.AgentDir(env), "sessions"))
			if err != nil {
				return nil, &exitError{2, fmt.Sprintf("Error: no session matches %q: %v", target, err)}
			}
			path = info.Path
		}
	case o.cont:
		// The newest session of this directory; none yet starts a new one.
		skipped := func(_ string, err error) { fmt.Fprintf(stderr, "xcsh: --continue: skipped %v\n", err) }
		if p, err := sessionfile.Latest(dir, skipped); err == nil {
			path = p
		}
	}
	if path == "" {
		id := ids.NewID("session")
		file := filepath.Join(dir, sessionfile.FileName(nowMs, id))
		return &sessionSetup{id: id, file: file, dir: dir,
			store: sessionfile.New(file, sessionfile.Header{ID: id, Timestamp: nowMs, Cwd: cwd})}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &exitError{2, "Error: " + err.Error()}
	}
	loaded, err := loadSession(abs)
	if err != nil {
		return nil, &exitError{2, "Error: " + err.Error()}
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(stderr, "xcsh: %s: %s\n", abs, w)
	}
	store, err := sessionfile.OpenAppend(abs, loaded)
	if err != nil {
		return nil, &exitError{2, "Error: " + err.Error()}
	}
	return &sessionSetup{id: loaded.Header.ID, file: abs, dir: dir, store: store, loaded: loaded}, nil
}

// storeOrNil is the engine's initial Store: the new session's file store,
// or nil (a MemoryStore) with --no-session or when a resumed session
// brings its own (Resume installs it). (A nil *Store in the interface
// would not be nil.)
func (ss *sessionSetup) storeOrNil() engine.Store {
	if ss.store == nil || ss.loaded != nil {
		return nil
	}
	return ss.store
}

// resumed is the loaded session for engine.Session.Resume, nil when the
// session is new.
func (ss *sessionSetup) resumed() *engine.LoadedSession {
	if ss.loaded == nil {
		return nil
	}
	return loadedSession(ss.file, ss.loaded, ss.store)
}

func loadedSession(abs string, l *sessionfile.Session, st *sessionfile.Store) *engine.LoadedSession {
	return &engine.LoadedSession{ID: l.Header.ID, File: abs, Name: l.Header.Title, Store: st, Entries: l.Entries, Leaf: l.Leaf}
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
	now := f.clock.NowMillis()
	path := filepath.Join(f.dir, sessionfile.FileName(now, id))
	st := sessionfile.New(path, sessionfile.Header{ID: id, Timestamp: now, Cwd: f.cwd, ParentSession: parent})
	if entries == nil {
		return st, path, nil
	}
	for _, e := range entries {
		if err := st.Append(context.Background(), e); err != nil {
			return nil, "", err
		}
	}
	if err := st.Flush(); err != nil {
		return nil, "", err
	}
	return st, path, nil
}

// Open implements engine.SessionFiles.
func (f fileSessions) Open(path string) (*engine.LoadedSession, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	l, err := loadSession(abs)
	if err != nil {
		return nil, err
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(f.stderr, "xcsh: %s: %s\n", abs, w)
	}
	st, err := sessionfile.OpenAppend(abs, l)
	if err != nil {
		return nil, err
	}
	return loadedSession(abs, l, st), nil
}

// files is what the session verbs create and open files with; nil with
// --no-session.
func (ss *sessionSetup) files(cwd string, clock engine.Clock, stderr io.Writer) engine.SessionFiles {
	if ss.store == nil {
		return nil
	}
	return fileSessions{dir: ss.dir, cwd: cwd, clock: clock, stderr: stderr}
}
