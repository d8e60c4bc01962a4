package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/rpc"
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
		} else {
			info, err := sessionfile.FindByID(target, dir, filepath.Join(sessionfile.AgentDir(env), "sessions"))
			if err != nil {
				return nil, &exitError{1, fmt.Sprintf("Error: no session matches %q: %v", target, err)}
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
		return nil, &exitError{1, "Error: " + err.Error()}
	}
	loaded, err := loadSession(abs)
	if err != nil {
		return nil, &exitError{1, "Error: " + err.Error()}
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(stderr, "xcsh: %s: %s\n", abs, w)
	}
	store, err := sessionfile.OpenAppend(abs, loaded)
	if err != nil {
		return nil, &exitError{1, "Error: " + err.Error()}
	}
	return &sessionSetup{id: loaded.Header.ID, file: abs, dir: dir, store: store, loaded: loaded}, nil
}

// restore loads a resumed session's record into the engine, with the
// model (when available) and thinking level it last used, unless the
// command line named them. (actor)
func (ss *sessionSetup) restore(sess *engine.Session, reg *models.Registry, flagsNamedModel, flagsNamedThinking bool, stderr io.Writer) {
	if ss.loaded == nil {
		return
	}
	if err := sess.Restore(ss.loaded.Entries, ss.loaded.Leaf); err != nil {
		fmt.Fprintf(stderr, "xcsh: %s: %v\n", ss.file, err)
		return
	}
	if ss.loaded.Header.Title != "" {
		sess.SetNameQuietly(ss.loaded.Header.Title)
	}
	// What the command line names wins; the rest comes from the record.
	level, hasLevel := sess.RecordedThinkingLevel()
	if flagsNamedThinking || !hasLevel {
		level = sess.ThinkingLevel()
	}
	model := sess.Model()
	if !flagsNamedModel {
		if p, id, ok := sess.RecordedModel(); ok {
			if m, found := reg.Find(p, id); found && reg.HasAuth(m) {
				model = &m
			}
		}
	}
	sess.RestoreModel(model, level)
}

// storeOrNil is the engine's Store: the file store, or nil (a MemoryStore)
// with --no-session. (A nil *Store in the interface would not be nil.)
func (ss *sessionSetup) storeOrNil() engine.Store {
	if ss.store == nil {
		return nil
	}
	return ss.store
}

// fileSessions implements rpc.Sessions with session files in dir.
type fileSessions struct {
	dir, cwd string
	clock    engine.Clock
	stderr   io.Writer
}

func (f fileSessions) header(id, parent string) (string, sessionfile.Header) {
	now := f.clock.NowMillis()
	return filepath.Join(f.dir, sessionfile.FileName(now, id)),
		sessionfile.Header{ID: id, Timestamp: now, Cwd: f.cwd, ParentSession: parent}
}

// Create implements rpc.Sessions: the file is written lazily.
func (f fileSessions) Create(id, parent string) (engine.Store, string, error) {
	path, h := f.header(id, parent)
	return sessionfile.New(path, h), path, nil
}

// CreateWith implements rpc.Sessions: the file is written at once.
func (f fileSessions) CreateWith(id, parent string, entries []*engine.Entry) (engine.Store, string, error) {
	path, h := f.header(id, parent)
	st := sessionfile.New(path, h)
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

// Open implements rpc.Sessions.
func (f fileSessions) Open(path string) (engine.Store, rpc.Loaded, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, rpc.Loaded{}, err
	}
	l, err := loadSession(abs)
	if err != nil {
		return nil, rpc.Loaded{}, err
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(f.stderr, "xcsh: %s: %s\n", abs, w)
	}
	st, err := sessionfile.OpenAppend(abs, l)
	if err != nil {
		return nil, rpc.Loaded{}, err
	}
	return st, rpc.Loaded{ID: l.Header.ID, File: abs, Title: l.Header.Title, Created: l.Header.Timestamp,
		Cwd: l.Header.Cwd, Entries: l.Entries, Leaf: l.Leaf}, nil
}

// sessions is what the session commands create and open files with; nil
// with --no-session.
func (ss *sessionSetup) sessions(cwd string, clock engine.Clock, stderr io.Writer) rpc.Sessions {
	if ss.store == nil {
		return nil
	}
	return fileSessions{dir: ss.dir, cwd: cwd, clock: clock, stderr: stderr}
}
