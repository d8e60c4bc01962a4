package tools

import "time"

// Options are shared by the built-in tools.
type Options struct {
	// Cwd is the session's working directory; relative paths resolve
	// against it.
	Cwd string
	// Now gives the wall time for relative file ages ("5m ago"); nil means
	// time.Now.
	Now func() time.Time
	// HostUI says the host shows dialogs to a user (--ui): the ask tool
	// exists only then. The dialogs themselves come with each call
	// (engine.ToolCall.UI).
	HostUI bool
	// StreamInterval throttles bash's streamed tool_execution_update frames;
	// 0 disables them (deterministic transcripts).
	StreamInterval time.Duration
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
