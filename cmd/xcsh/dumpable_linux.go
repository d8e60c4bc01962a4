package main

import (
	"fmt"
	"io"
	"syscall"
)

// dumpableEnv set to 1 keeps the agent dumpable (see protectAgent): for a
// debugger or a tool that inspects the agent as the same user.
const dumpableEnv = "XCSH_DUMPABLE"

// protectAgent makes the agent's process not dumpable (PR_SET_DUMPABLE 0),
// as ssh-agent does. Another process of the same user, a command the
// model runs with --sandbox off among them, can then no longer open the
// agent's descriptors through /proc/<pid>/fd (write frames into the
// host's stdout, read its stdin), read its environment or memory (where
// provider keys sit), or trace it; root still can. The agent itself loses
// nothing: its own /proc/self stays open to it, and what it executes (the
// supervisor, reapers, commands) is dumpable again after the exec. What
// changes for the user: no core dump, and attaching a debugger or reading
// the agent's /proc files needs root, unless XCSH_DUMPABLE=1.
//
// It must not be called while the command supervisor may be started in
// new user namespaces: the agent writes the child's uid_map between fork
// and exec, and a child of a non-dumpable process is not the user's to
// write to. There Landlock's ptrace scoping keeps commands out instead.
func protectAgent(env func(string) string, stderr io.Writer) {
	if env(dumpableEnv) == "1" {
		return
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		fmt.Fprintf(stderr, "xcsh: warning: PR_SET_DUMPABLE: %v; commands can reach the agent through /proc\n", e)
	}
}

// dumpable reports the process's PR_GET_DUMPABLE (for tests).
func dumpable() bool {
	r, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	return r == 1
}
