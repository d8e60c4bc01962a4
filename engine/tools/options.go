package tools

import (
	"context"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

// Editor reads and writes the text of files in the editor that drives the
// agent (ACP's fs/read_text_file and fs/write_text_file): the agent then
// sees unsaved buffers, and the editor keeps its own undo. Paths are
// absolute. Its errors are reported to the model as the tool's failure.
type Editor interface {
	ReadText(ctx context.Context, path string) (string, error)
	WriteText(ctx context.Context, path, content string) error
}

// Exec runs one bash command and reports it as shellexec.Run does.
type Exec func(ctx context.Context, command string, o shellexec.Options) (shellexec.Result, error)

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
	// Editor, when set, is where read, write and edit read and write the
	// text of regular files (delegation to an ACP editor); directories,
	// existence and the path rules stay local. nil: the disk.
	Editor Editor
	// Exec, when set, runs bash's commands instead of a local shell (an
	// ACP editor's terminal); nil: shellexec.Run.
	Exec Exec
}

func (o Options) now() time.Time {
	c := o.Clock
	if c == nil {
		c = engine.SystemClock{}
	}
	return time.UnixMilli(c.NowMillis())
}
