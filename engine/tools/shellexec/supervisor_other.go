//go:build !linux

package shellexec

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"syscall"
)

// ErrSupervisorGone is the failure of a command whose supervisor died.
var ErrSupervisorGone = errors.New("the command supervisor is gone")

// ErrSandboxApply: the supervisor could not apply its sandbox (Linux only).
var ErrSandboxApply = errors.New("the command supervisor could not apply the sandbox")

var errNoSupervisor = errors.New("the command supervisor needs Linux")

// SupervisorConfig says how the supervisor process is started (Linux only).
type SupervisorConfig struct {
	Path, Arg0  string
	Config      json.RawMessage
	SysProcAttr *syscall.SysProcAttr
	Log         io.Writer
	Required    bool
}

// Supervisor is unavailable here: commands start directly.
type Supervisor struct{ cfg SupervisorConfig }

// NewSupervisor returns a supervisor that never starts.
func NewSupervisor(cfg SupervisorConfig) *Supervisor { return &Supervisor{cfg: cfg} }

// Start fails: there is no supervisor on this system.
func (s *Supervisor) Start() (json.RawMessage, error) { return nil, errNoSupervisor }

// Close does nothing.
func (s *Supervisor) Close(context.Context) error { return nil }

// IsSupervisor is always false here.
func IsSupervisor([]string) bool { return false }

// SupervisorMain is never called here.
func SupervisorMain() int { return 1 }

func (s *Supervisor) launch(context.Context, spec, io.Writer) (<-chan exitInfo, error, bool) {
	if s.cfg.Required {
		return nil, errNoSupervisor, false
	}
	return nil, nil, true
}

func (s *Supervisor) killAll()                   {}
func (s *Supervisor) wait(context.Context) error { return nil }
