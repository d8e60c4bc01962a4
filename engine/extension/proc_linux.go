//go:build linux

package extension

import "syscall"

// setDeathSignal kills an extension when the agent dies without stopping
// it (SIGKILL, a crash): an extension that ignores its closed stdin would
// otherwise run on. MCP servers get the same rule. Under a reaper the
// reaper's lifeline takes its place (engine/reaper).
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
