//go:build linux

package extension

import "syscall"

// setDeathSignal kills an extension when the agent dies without stopping
// it (SIGKILL, a crash): an extension that ignores its closed stdin would
// otherwise run on. MCP servers get the same rule.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
