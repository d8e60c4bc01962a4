//go:build !linux

package extension

import "syscall"

// setDeathSignal has no portable counterpart off Linux: there an
// extension learns of the agent's death from its closed stdin.
func setDeathSignal(*syscall.SysProcAttr) {}
