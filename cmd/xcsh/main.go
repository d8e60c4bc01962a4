// Command xcsh is a headless coding agent; `xcsh --mode rpc` speaks the
// newline-delimited JSON RPC protocol on stdio.
package main

import (
	"os"

	"github.com/xcsh-go/xcsh/engine/reaper"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

func main() {
	// The command supervisor is this binary re-executed (shellexec): it
	// must not parse flags or touch the terminal.
	if shellexec.IsSupervisor(os.Args) {
		os.Exit(shellexec.SupervisorMain())
	}
	// So is the wrapper that runs a project's MCP server or extension in
	// the sandbox (engine/tools/sandbox, Wrap).
	if sandbox.IsExec(os.Args) {
		os.Exit(sandbox.ExecMain())
	}
	// The reaper of an extension or MCP server is this binary too.
	if reaper.IsReaper(os.Args) {
		os.Exit(reaper.Main())
	}
	reaper.Enable()
	os.Exit(run())
}
