//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts a server in its own process group, so stopping it
// stops what it started (npx runs node, uvx runs python).
func setProcAttr(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(c.SysProcAttr)
}

// killGroup kills the server's process group.
func killGroup(c *exec.Cmd) {
	if c.Process == nil {
		return
	}
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
}
