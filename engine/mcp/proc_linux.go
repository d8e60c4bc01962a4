//go:build linux

package mcp

import "syscall"

// setDeathSignal kills a server when xcsh dies without closing it.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
