package shellexec

import "syscall"

// sysProcAttr puts the shell in its own process group, so a signal to the
// group reaches everything it starts, and asks the kernel to SIGKILL the
// shell if the agent dies without running its exit path (SIGKILL, a
// crash). That backstop covers the shell only: its children in the group
// are covered by KillAll, which a killed agent cannot run. Pdeathsig fires
// when the thread that forked the shell exits; the Go runtime keeps its
// threads for the process's life unless a goroutine exits while locked to
// one, which nothing in this process does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
