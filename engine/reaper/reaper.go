// Package reaper starts a long-lived child of the agent (an extension, a
// stdio MCP server) so that nothing it starts outlives the agent: not a
// process that left its group and session (setsid) and its parent (a
// double fork), on the agent's normal exit or when the agent is killed
// with SIGKILL.
//
// A process group or a parent-death signal cannot do that: a setsid'd
// grandchild is in neither the group nor the child. So, on Linux, Wrap
// rewrites the exec.Cmd to start the agent's own binary in a hidden mode
// (argv[1] is "__xcsh_reaper__", dispatched first thing in main, as the
// command supervisor is) that starts the real program and holds it:
//
//   - it is a child subreaper (PR_SET_CHILD_SUBREAPER), so every process
//     the program leaves behind, however it detached, is re-parented to it;
//   - it reads a pipe whose only write end the agent holds (the lifeline):
//     end of file means the agent is gone, however it ended, and it then
//     kills the program's group and every process re-parented to it, reaps
//     them and exits;
//   - when the program exits it does the same to what is left, and exits
//     with the program's status (dying of the same signal if it died of
//     one), so the agent's Wait reads what it would have read;
//   - SIGTERM, SIGINT, SIGHUP and SIGQUIT are passed on to the program's
//     group (it runs in a group of its own); after SIGTERM the program has
//     the grace given to Wrap before everything is killed, so a caller
//     that escalates to SIGKILL on a timer of its own (the MCP SDK) finds
//     the reaper gone, never kills it first; SIGUSR1 kills everything at
//     once (Signal with SIGKILL sends it).
//
// The reaper keeps no copy of the program's stdin and stdout, so the agent
// sees them close when the program closes them. What can defeat it is a
// SIGKILL aimed at the reaper itself by someone else: the program then
// dies of its parent-death signal, and what it left behind is re-parented
// further up.
//
// Wrap does nothing until Enable is called (by a main that dispatches
// IsReaper), off Linux, or for a command that cannot start anyway; the
// command then starts directly, as before.
package reaper

import (
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// reaperArg, as argv[1], selects the reaper mode of the agent's binary.
const reaperArg = "__xcsh_reaper__"

// enabled is set by Enable.
var enabled atomic.Bool

// Enable makes Wrap start commands under a reaper. Only a main that
// dispatches IsReaper first may call it: the reaper is that binary.
func Enable() { enabled.Store(true) }

// IsReaper reports whether args (os.Args) start the reaper mode: main must
// then call Main before anything else.
func IsReaper(args []string) bool { return len(args) > 1 && args[1] == reaperArg }

// wrapped reports whether cmd was rewritten by Wrap.
func wrapped(cmd *exec.Cmd) bool { return len(cmd.Args) > 1 && cmd.Args[1] == reaperArg }

// Signal sends sig to what cmd runs. Under a reaper, SIGKILL kills the
// program, its group and every process it left behind (the reaper then
// exits), and any other signal goes to the program's group through the
// reaper; otherwise sig goes to the command's process group (started with
// Setpgid). A command that has been waited for gets nothing.
func Signal(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if wrapped(cmd) {
		if sig == syscall.SIGKILL {
			sig = syscall.SIGUSR1
		}
		// os.Process tracks the reaper's exit: a reused pid is never hit.
		_ = cmd.Process.Signal(sig)
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

// Wrap makes cmd (made by exec.Command, not started) run under a reaper
// when the reaper is enabled; grace is how long the program has after a
// SIGTERM before the reaper kills everything. cmd's Path, Args, Env, Dir
// and standard streams keep their meaning: the reaper runs in Dir with
// Env and passes the streams on. Its Setpgid stays (the reaper has a
// group of its own); a Pdeathsig is dropped, the lifeline taking its
// place. A command with ExtraFiles, or whose path did not resolve, is
// left alone.
func Wrap(cmd *exec.Cmd, grace time.Duration) {
	if !enabled.Load() || cmd.Err != nil || cmd.Process != nil || len(cmd.ExtraFiles) > 0 || wrapped(cmd) {
		return
	}
	wrap(cmd, grace)
}
