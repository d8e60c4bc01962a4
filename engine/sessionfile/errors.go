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

// ErrNotSaved: an entry could not be written; it waits in memory, with
// those after it, and is written by the next append that can.
var ErrNotSaved = errors.New("session not saved")
