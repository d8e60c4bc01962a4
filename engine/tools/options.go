package tools

import (
	"time"

	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// Options are shared by the built-in tools.
type Options struct {
	// Cwd is the session's working directory; relative paths resolve
	// against it.
	Cwd string
	// Now gives the wall time for relative file ages ("5m ago"); nil means
	// time.Now.
	Now func() time.Time
	// UI, when set, is the host's user: the ask tool exists only then.
	UI UI
	// StreamInterval throttles bash's streamed tool_execution_update frames;
	// 0 disables them (deterministic transcripts).
	StreamInterval time.Duration
	// Sandbox, when on, confines write and edit to its writable roots (the
	// same rules the kernel enforces on commands) and explains a bash
	// command's denials; nil is off.
	Sandbox *sandbox.Policy
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
