package engine

import "errors"

// Sentinel errors of the engine. Their texts are the original's wire
// strings; rpc maps errors to wire text in one place and relies on these.
var (
	// ErrBusy: a prompt arrived while a run is active and no streaming
	// behaviour was given.
	ErrBusy = errors.New("Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion.")
	// ErrEmptySessionName: set_session_name with nothing left after cleaning.
	ErrEmptySessionName = errors.New("Session name cannot be empty")
	// ErrNoModel: a prompt with no model configured.
	// The original sends users to a /login command and a /model selector
	// an RPC host does not have; this text names what exists (compat.md).
	ErrNoModel = errors.New("No model selected.\n\nStart xcsh with --model <provider>/<id> (xcsh --list-models lists the models), or configure a provider in ~/.xcsh/agent/models.json (see docs/providers.md). An RPC host can also choose one with set_model.")
	// ErrInvalidMode: an unknown queue or interrupt mode.
	ErrInvalidMode = errors.New("invalid mode")
	// ErrNoShell: the session has no Shell wired (the RPC bash command).
	ErrNoShell = errors.New("bash is not available in this session")
	// ErrHostGone: the host closed its input while a request to it was
	// pending (or before it was sent). Its text is the original's message
	// for a host tool call that can no longer complete.
	ErrHostGone = errors.New("RPC client disconnected before host tool execution completed")
	// ErrNoEntry: a leaf or branch point names no entry of the session.
	ErrNoEntry = errors.New("no such entry")
	// ErrBusySwitch: a session switch was asked while the session is busy
	// (callers abort first).
	ErrBusySwitch = errors.New("session is busy")
)

// ErrMessageRole: a message to decode has no role, or not the role of the
// type it is decoded into.
var ErrMessageRole = errors.New("engine: bad message role")

// NoAPIKeyError: a prompt for a model whose provider has no key. Its first
// line is the original's; the rest says where a key comes from (the
// original names a /login command that does not exist here).
type NoAPIKeyError struct {
	Provider string
	Hint     string // how to give the provider a key; "" for none known
}

func (e *NoAPIKeyError) Error() string {
	if e.Hint == "" {
		return "No API key found for " + e.Provider + "."
	}
	return "No API key found for " + e.Provider + ".\n\n" + e.Hint
}

// KeyHinter is a ModelCatalog that can say how a provider gets its key:
// the no-key error then names the environment variables, the flag and
// the configuration field.
type KeyHinter interface {
	KeyHint(provider string) string
}

// Failures of the session verbs. Their texts are for logs and Go callers;
// a front maps them to its wire texts (rpc/errors.go).
var (
	// ErrNoSessionFiles: switch_session with sessions in memory only.
	ErrNoSessionFiles = errors.New("sessions are in memory only")
	// ErrNotUserEntry: branch or fork from an entry that is not a user
	// message.
	ErrNotUserEntry = errors.New("not a user message entry")
	// ErrExportInMemory: export of a session that has no file.
	ErrExportInMemory = errors.New("cannot export an in-memory session")
	// ErrSessionBusy: a query that needs a still session (a messages page)
	// while a run or a compaction is under way.
	ErrSessionBusy = errors.New("session is busy")
	// ErrInvalidCursor and ErrStaleCursor: a messages page cursor that is
	// not one, or was made for another state of the session.
	ErrInvalidCursor = errors.New("invalid cursor")
	ErrStaleCursor   = errors.New("stale cursor")
)

// SwitchError: switch_session could not load its file; nothing changed.
type SwitchError struct{ Err error }

func (e *SwitchError) Error() string { return "switch session: " + e.Err.Error() }
func (e *SwitchError) Unwrap() error { return e.Err }

// ModelError: a model asked for by provider and id cannot be selected.
type ModelError struct {
	Provider, ID string
	NoKey        bool // the model exists but its provider has no key
}

func (e *ModelError) Error() string {
	if e.NoKey {
		return "no API key for " + e.Provider + "/" + e.ID
	}
	return "model not found: " + e.Provider + "/" + e.ID
}

// ExportError: export_html could not write its page.
type ExportError struct{ Err error }

func (e *ExportError) Error() string { return "export: " + e.Err.Error() }
func (e *ExportError) Unwrap() error { return e.Err }
