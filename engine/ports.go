package engine

import "context"

// The ports of the session's verbs: what the engine needs from the rest of
// the program to carry them out, defined here by their consumer and wired
// by cmd/xcsh (engine/sessionfile, engine/models, engine/export). The
// methods that touch a disk are only ever called off the executor.

// SessionFiles creates and opens the files that session records live in.
// A nil SessionFiles (--no-session) keeps every session in memory.
type SessionFiles interface {
	// Create starts the record of a new session id, recording parent as
	// its parent session. With entries (a branch, a fork, a clone) the file
	// is written at once, holding them; with none it is written when its
	// first assistant message exists.
	Create(id, parent string, entries []*Entry) (store Store, file string, err error)
	// Open loads the session file at path to continue it. A missing or
	// unreadable file is an error and creates nothing.
	Open(path string) (*LoadedSession, error)
}

// LoadedSession is a session record read from a file, and the store that
// appends to it.
type LoadedSession struct {
	ID, File string
	Name     string // from the file's header; "" for none
	Store    Store
	// Entries are the record (file order) and Leaf its current leaf.
	Entries []*Entry
	Leaf    string
}

// ModelCatalog is the model registry as the verbs see it. Its methods must
// be safe for concurrent use (discovery adds models in the background).
type ModelCatalog interface {
	// Available lists the models a host may select: providers that need no
	// key or have one, in registry order.
	Available() []Model
	// Find returns the model with exactly this provider and id.
	Find(provider, id string) (Model, bool)
	// HasKey reports whether m's provider can be called (a key, or none
	// needed).
	HasKey(m Model) bool
}

// ScopedModel is one entry of the --models scope that CycleModel walks: a
// model and, optionally, the thinking level cycling to it applies.
type ScopedModel struct {
	Model    Model
	Thinking ThinkingLevel // "": keep the session's level, clamped
}

// Exporter renders a session to a file (engine/export's HTML page). It is
// called off the executor with a snapshot taken on it.
type Exporter interface {
	// Export writes snap to path, or to a default path derived from the
	// session file when path is "", and returns the path as written.
	Export(ctx context.Context, path string, snap ExportSnapshot) (string, error)
}

// ExportSnapshot is what an export shows: the whole record (every branch),
// the current leaf, the system prompt and the tools offered.
type ExportSnapshot struct {
	SessionID, SessionFile, Name string
	Entries                      []*Entry
	Leaf                         string
	SystemPrompt                 string
	Tools                        []ToolSpec
}
