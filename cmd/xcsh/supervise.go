package main

import (
	"io"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

// procFlags are the flags about the processes the agent starts: provider
// keys kept out of them (keys.go), and the sandbox they run in.
type procFlags struct {
	keys keyFlags
}

// addProcFlags registers the flags of procFlags.
func addProcFlags(f *pflag.FlagSet, p *procFlags) {
	addKeyFlags(f, &p.keys)
}

// procSetup is what the CLI wires about child processes.
type procSetup struct{}

// setupProcs prepares every process the agent will start: the provider
// keys are removed from their environment (unless --keep-key-env), and
// commands run through the supervisor.
func setupProcs(p *procFlags, reg *models.Registry, stderr io.Writer) (*procSetup, error) {
	scrubKeyEnv(&p.keys, reg)
	useSupervisor(stderr)
	return &procSetup{}, nil
}

// useSupervisor routes every command (bash tool, RPC bash) through the
// supervisor process, started at the first command: a re-exec of this
// binary (main checks shellexec.IsSupervisor first) that kills every
// command and its descendants when the agent dies, even by SIGKILL. Where
// it cannot start, commands start directly (said once on stderr).
func useSupervisor(stderr io.Writer) {
	shellexec.Use(shellexec.NewSupervisor(shellexec.SupervisorConfig{Log: stderr}))
}
