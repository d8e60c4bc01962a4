package main

import (
	"io"
	"os"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// procFlags are the flags about the processes the agent starts: provider
// keys kept out of them (keys.go), and the sandbox they run in.
type procFlags struct {
	keys    keyFlags
	sandbox sandboxFlags
}

// addProcFlags registers the flags of procFlags.
func addProcFlags(f *pflag.FlagSet, p *procFlags) {
	addKeyFlags(f, &p.keys)
	addSandboxFlags(f, &p.sandbox)
}

// procSetup is what the CLI wires about child processes.
type procSetup struct {
	sandbox *sandbox.Policy      // for the file tools; nil when off
	state   *engine.SandboxState // get_state.sandbox; nil when off
	// project decides what of a project's own MCP servers and extensions
	// runs (trust.go); nil when the sandbox is off.
	project *projectPolicy
}

// setupProcs prepares every process the agent will start: the provider
// keys are removed from their environment (unless --keep-key-env), and
// commands (bash tool, RPC bash) run through the supervisor: a re-exec of
// this binary (main checks shellexec.IsSupervisor first) that kills every
// command and its descendants when the agent dies, even by SIGKILL. Off
// the sandbox it starts at the first command, and where it cannot start
// commands start directly (said once on stderr); in a sandbox mode it
// starts now, in the sandbox (sandbox.go).
func setupProcs(p *procFlags, reg *models.Registry, cwd string, stderr io.Writer) (*procSetup, error) {
	scrubKeyEnv(&p.keys, reg)
	sb, err := setupSandbox(&p.sandbox, cwd, os.Getenv, stderr)
	if err != nil {
		return nil, err
	}
	return &procSetup{sandbox: sb.policy, state: sb.state, project: newProjectPolicy(&p.sandbox, sb, stderr)}, nil
}
