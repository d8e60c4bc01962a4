package rpc

import (
	"errors"

	"github.com/xcsh-go/xcsh/engine"
)

// ErrOutputClosed is the cause Run returns when writing stdout failed: the
// host has gone, so the run is aborted and the process should exit.
var ErrOutputClosed = errors.New("stdout closed")

// errNotYet marks a protocol command this build does not implement yet.
var errNotYet = errors.New("not supported yet")

// Model selection failures; the texts are the original's.
var (
	errModelNotFound = errors.New("Model not found")
	errNoAPIKey      = errors.New("No API key")
)

// wireSentinels are the errors whose text is a fixed wire string.
var wireSentinels = []error{
	engine.ErrBusy,
	engine.ErrEmptySessionName,
	engine.ErrNoModel,
}

// wireError maps an error to the text a host sees: the one place that does.
// Sentinels keep their canonical text even when wrapped with context.
func wireError(err error) string {
	for _, s := range wireSentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return err.Error()
}

// Failures of the session and host-tool commands. The texts are the
// original's where it has one; the session query texts are ours (omp's are
// not recorded), their codes omp's.
var (
	errInvalidBranch      = errors.New("Invalid entry ID for branching")
	errInvalidFork        = errors.New("Invalid entry ID for forking")
	errExportMemory       = errors.New("Cannot export in-memory session to HTML")
	errSessionBusy        = errors.New("Session is busy: a run or a compaction is in progress")
	errInvalidCursor      = errors.New("Invalid cursor")
	errStaleCursor        = errors.New("Cursor is stale: the session changed since it was issued")
	errHostToolsNotUnique = errors.New("RPC host tool names must be unique")
)

// hostToolFailedText is the result text of a host tool that failed with
// no text of its own (the original's).
const hostToolFailedText = "Host tool execution failed"
