// Package tools holds xcsh's built-in model-facing tools (read, write,
// edit, bash, grep, find, todo_write, and ask, which exists only when the
// host has a UI: --ui, Options.HostUI), one per file. Each implements
// engine.Tool; a failure the model should see is a result with IsError
// set, never a Go error. Limits, notices and error texts follow
// agent-core.md §4. The file tools touch regular files only and read them
// with bounded memory (regular.go); each tool's describing methods come
// from an embedded spec. A new tool is listed in builtins.go (Names, the
// order offered to the model, and constructors).
package tools
