package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

type writeTool struct {
	spec
	o Options
}

// NewWrite returns the write tool: it creates or overwrites a file,
// creating missing parent directories.
func NewWrite(o Options) engine.Tool { return &writeTool{spec: writeSpec, o: o} }

var writeSpec = spec{
	name:        "write",
	concurrency: engine.Exclusive,
	description: "Write content to a file, creating it (and missing parent directories) or overwriting it entirely. " +
		"Prefer edit for changing part of an existing file.",
	schema: []byte(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path of the file to write"},` +
		`"content":{"type":"string","description":"The complete new content of the file"}` +
		`},"required":["path","content"],"additionalProperties":false}`),
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Run is not abortable once it has started writing: the file is replaced
// atomically (or, when hard-linked, rewritten in one go), so an abort
// cannot leave it half-written.
func (t *writeTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a writeArgs
	if r, ok := decodeArgs("write", call.Arguments, &a); !ok {
		return r, nil
	}
	if strings.TrimSpace(a.Path) == "" {
		return failResult("Path must not be empty"), nil
	}
	requested := resolveCwd(t.o.Cwd, a.Path)
	target, fi, err := writeTarget(requested)
	if err != nil {
		return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
	}
	if t.o.Editor != nil && !t.o.Sandbox.On() {
		// The editor writes it (and creates it, with its directories).
		if err := t.o.Editor.WriteText(ctx, target, a.Content); err != nil {
			return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, err.Error())), nil
		}
		return textResult(fmt.Sprintf("Successfully wrote %d bytes to %s", jsLength(a.Content), a.Path), nil), nil
	}
	if t.o.Sandbox.On() {
		// The directory is opened (made) and checked first; the write goes
		// through the open descriptor.
		dir, err := t.o.Sandbox.OpenParent(requested, target, fi == nil)
		if err != nil {
			return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
		}
		defer dir.Close()
		target = filepath.Join(dir.Path, filepath.Base(target))
	} else if fi == nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return failResult(fmt.Sprintf("Cannot create the directory for %s: %s", a.Path, describeFSError(err))), nil
		}
	}
	if err := replaceFile(target, fi, []byte(a.Content)); err != nil {
		return failResult(fmt.Sprintf("Cannot write %s: %s", a.Path, describeFSError(err))), nil
	}
	return textResult(fmt.Sprintf("Successfully wrote %d bytes to %s", jsLength(a.Content), a.Path), nil), nil
}
