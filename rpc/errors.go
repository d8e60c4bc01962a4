package rpc

import (
	"errors"
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
)

// This file is the one place that turns errors into the texts a host
// reads: the engine's typed errors into the original's wire strings, and
// the argument failures of the commands.

// ErrOutputClosed is the cause Run returns when writing stdout failed: the
// host has gone, so the run is aborted and the process should exit.
var ErrOutputClosed = errors.New("stdout closed")

// errUnsupported answers the family's commands this agent has no
// counterpart for (omp's subagents, fast mode, login, handoff).
var errUnsupported = errors.New("Not supported by this agent (xcsh-go); see docs/compat.md")

// notWaitingError answers a reply to a request that waits no more.
type notWaitingError struct{ id string }

func (e *notWaitingError) Error() string {
	return "Request " + e.id + " is not waiting for an answer: another client answered it first, or it was cancelled or timed out"
}

// hostToolFailedText is the result text of a host tool that failed with
// no text of its own (the original's).
const hostToolFailedText = "Host tool execution failed"

// wireSentinels are the engine's errors whose text is already the wire
// string (the original's).
var wireSentinels = []error{
	engine.ErrBusy,
	engine.ErrEmptySessionName,
	engine.ErrAlreadyCompacted,
	engine.ErrNothingToCompact,
	engine.ErrCompactionCancelled,
}

// wireTexts are the wire strings of the engine's other sentinels; the
// texts are the original's where it has one, ours otherwise (omp's session
// query texts are not recorded; their codes are omp's).
var wireTexts = map[error]string{
	engine.ErrNoSessionFiles: "Cannot switch session: sessions are in memory only (--no-session)",
	engine.ErrExportInMemory: "Cannot export in-memory session to HTML",
	engine.ErrSessionBusy:    "Session is busy: a run or a compaction is in progress",
	engine.ErrInvalidCursor:  "Invalid cursor",
	engine.ErrStaleCursor:    "Cursor is stale: the session changed since it was issued",
}

// wireCodes are the machine-readable codes omp sends beside some texts.
var wireCodes = map[error]string{
	engine.ErrSessionBusy:   "session_busy",
	engine.ErrInvalidCursor: "invalid_cursor",
	engine.ErrStaleCursor:   "stale_cursor",
}

// notUserEntryTexts: branching from an entry that is not a user message,
// in the words of the command that asked.
var notUserEntryTexts = map[string]string{
	"branch": "Invalid entry ID for branching",
	"fork":   "Invalid entry ID for forking",
}

// wireError maps an error of the command typ to the text a host sees.
// Sentinels keep their canonical text even when wrapped with context.
func wireError(typ string, err error) string {
	if errors.Is(err, engine.ErrNoModel) {
		if typ == "compact" {
			return "No model selected" // the compaction's own wording
		}
		return engine.ErrNoModel.Error()
	}
	var nk *engine.NoAPIKeyError
	if typ == "compact" && errors.As(err, &nk) {
		return "No API key for " + nk.Provider
	}
	for _, s := range wireSentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	for s, text := range wireTexts {
		if errors.Is(err, s) {
			return text
		}
	}
	if errors.Is(err, engine.ErrNotUserEntry) {
		return notUserEntryTexts[typ]
	}
	var se *engine.SwitchError
	if errors.As(err, &se) {
		return "Cannot switch session: " + se.Err.Error()
	}
	var re *engine.RenameError
	if errors.As(err, &re) {
		return "Cannot rename session: " + re.Err.Error()
	}
	var xe *engine.ExportError
	if errors.As(err, &xe) {
		return "Cannot export session: " + xe.Err.Error()
	}
	var me *engine.ModelError
	if errors.As(err, &me) {
		if me.NoKey {
			return fmt.Sprintf("No API key for %s/%s", me.Provider, me.ID)
		}
		return fmt.Sprintf("Model not found: %s/%s", me.Provider, me.ID)
	}
	var he *engine.HostToolError
	if errors.As(err, &he) {
		return hostToolText(he)
	}
	return err.Error()
}

// wireCode is the code sent beside err's text, "" for none.
func wireCode(err error) string {
	for s, code := range wireCodes {
		if errors.Is(err, s) {
			return code
		}
	}
	return ""
}

// hostToolText is the original's text for a refused set_host_tools.
func hostToolText(e *engine.HostToolError) string {
	switch e.Problem {
	case engine.HostToolNoName:
		return fmt.Sprintf("Host tool at index %d must provide a non-empty name", e.Index)
	case engine.HostToolNoDescription:
		return fmt.Sprintf("Host tool %q must provide a non-empty description", e.Name)
	case engine.HostToolNoSchema:
		return fmt.Sprintf("Host tool %q must provide a JSON Schema object", e.Name)
	case engine.HostToolBadSchema: // ours: the original does not check
		return fmt.Sprintf("Host tool %q has an unusable JSON Schema: %v", e.Name, e.Err)
	case engine.HostToolNotUnique:
		return "RPC host tool names must be unique"
	}
	return fmt.Sprintf("RPC host tool %q conflicts with an existing tool", e.Name)
}

// The argument failures of the commands (their texts are the original's).

// errInvalid: a command whose fields do not decode; detail is the
// decoder's message.
func errInvalid(typ, detail string) error {
	return fmt.Errorf("Invalid %s command: %s", typ, detail)
}

// errMustBe: a field of the wrong kind; kind reads "a string", "an array".
func errMustBe(typ, field, kind string) error {
	return fmt.Errorf("Invalid %s command: %q must be %s", typ, field, kind)
}

// errInvalidMode: a queue or interrupt mode the command does not know.
func errInvalidMode(typ, mode string) error {
	return fmt.Errorf("Invalid mode %q for %s", mode, typ)
}
