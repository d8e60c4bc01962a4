//go:build !linux

package shellexec

import "syscall"

// sysProcAttr puts the shell in its own process group, so a signal to the
// group reaches everything it starts. Without Linux's Pdeathsig, only the
// agent's exit path (KillAll) kills the group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
