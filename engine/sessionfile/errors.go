package sessionfile

import "errors"

var (
	// ErrNotSession: the file is missing, unreadable or does not start with
	// a session header (type "session" and a string id).
	ErrNotSession = errors.New("not a session file")
	// ErrNoSession: no session file matches (Latest, FindByID).
	ErrNoSession = errors.New("no session found")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("session store closed")
)
