package tools

import (
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// Options are shared by the built-in tools.
type Options struct {
	// Cwd is the session's working directory; relative paths resolve
	// against it.
	Cwd string
	// Clock gives the time for relative file ages ("5m ago"): the engine's
	// clock, so a deterministic run lists the same ages. nil means
	// engine.SystemClock.
	Clock engine.Clock
	// HostUI says the host shows dialogs to a user (--ui): the ask tool
	// exists only then. The dialogs themselves come with each call
	// (engine.ToolCall.UI).
	HostUI bool
	// StreamInterval throttles bash's streamed tool_execution_update frames;
	// 0 disables them (deterministic transcripts).
	StreamInterval time.Duration
	// Sandbox, when on, confines write and edit to its writable roots (the
	// same rules the kernel enforces on commands) and explains a bash
	// command's denials; nil is off.
	Sandbox *sandbox.Policy
}

func (o Options) now() time.Time {
	c := o.Clock
	if c == nil {
		c = engine.SystemClock{}
	}
	return time.UnixMilli(c.NowMillis())
}
