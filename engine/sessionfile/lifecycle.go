package sessionfile

import (
	"context"
	"path/filepath"

	"github.com/xcsh-go/xcsh/engine"
)

// The life of a session file, in one place for every caller (start-up,
// the engine's SessionFiles port, the session host): Create a new one,
// Open one to continue.

// Create returns the store of a new session in dir, named after h's
// timestamp and id (FileName). With entries (a fork, a clone) the file is
// written at once; without, at the session's first assistant message.
func Create(dir string, h Header, entries []*engine.Entry) (*Store, error) {
	st := New(filepath.Join(dir, FileName(h.Timestamp, h.ID)), h)
	if entries == nil {
		return st, nil
	}
	for _, e := range entries {
		if err := st.Append(context.Background(), e); err != nil {
			return nil, err
		}
	}
	if err := st.Flush(); err != nil {
		return nil, err
	}
	return st, nil
}

// Open loads the session file at path and opens it for appends: the
// record to continue (its Store is the file's, locked) and the file's
// header. warn, if set, hears each line Load skipped or took as it is.
func Open(path string, warn func(string)) (*engine.LoadedSession, Header, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, Header{}, err
	}
	l, err := Load(abs)
	if err != nil {
		return nil, Header{}, err
	}
	if warn != nil {
		for _, w := range l.Warnings {
			warn(w)
		}
	}
	st, err := OpenAppend(abs, l)
	if err != nil {
		return nil, Header{}, err
	}
	return &engine.LoadedSession{ID: l.Header.ID, File: abs, Name: l.Header.Title, Store: st, Entries: l.Entries, Leaf: l.Leaf}, l.Header, nil
}
