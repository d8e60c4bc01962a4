package reaper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (not in package syscall).
const prSetChildSubreaper = 36

// lifelineFD is the read end of the lifeline in the reaper (ExtraFiles[0]).
const lifelineFD = 3

// drainWait bounds the last kill-and-reap: a process stuck in an
// uninterruptible sleep must not keep the reaper (and so the agent's Wait)
// forever.
const drainWait = 5 * time.Second

// lifeline is the agent's pipe: every reaper gets the read end, and only
// the agent holds the write end (close-on-exec), which is never written
// nor closed: it closes when the agent ends, however it ends. Both ends
// stay referenced here so no finalizer closes them.
var lifeline struct {
	once sync.Once
	r, w *os.File
	err  error
}

func lifelineEnd() (*os.File, error) {
	lifeline.once.Do(func() { lifeline.r, lifeline.w, lifeline.err = os.Pipe() })
	return lifeline.r, lifeline.err
}

func wrap(cmd *exec.Cmd, grace time.Duration) {
	r, err := lifelineEnd()
	if err != nil {
		return // start directly: better than not at all
	}
	args := make([]string, 0, 4+len(cmd.Args))
	args = append(args, os.Args[0], reaperArg, strconv.FormatInt(grace.Milliseconds(), 10), cmd.Path)
	cmd.Args = append(args, cmd.Args...)
	// The agent's own binary, even if it was replaced on disk since; its
	// argv[0] is the agent's (testscript dispatches a test binary on it).
	cmd.Path = "/proc/self/exe"
	cmd.ExtraFiles = []*os.File{r}
	if cmd.SysProcAttr != nil {
		a := *cmd.SysProcAttr
		a.Pdeathsig = 0 // a death signal would kill the reaper before it can clean up
		cmd.SysProcAttr = &a
	}
}

// Main runs the reaper (see the package doc) and returns its exit status;
// it may instead die of the signal its program died of.
// os.Args: argv[0], reaperArg, grace in ms, path, the program's argv.
func Main() int {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "xcsh reaper: no command to run")
		return 2
	}
	graceMs, _ := strconv.ParseInt(os.Args[2], 10, 64)
	path, argv := os.Args[3], os.Args[4:]
	// Without it what detaches goes to init: only the program's group can
	// then be killed. Still better than not starting the program.
	_ = prctl(prSetChildSubreaper, 1)
	// Started as /proc/self/exe, it would show as "exe" in ps.
	name := []byte("xcsh-reaper\x00")
	_ = prctl(syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])))
	syscall.CloseOnExec(lifelineFD) // the program must not hold the agent's pipe

	// Caught before the program starts, so none is lost. Caught, not
	// ignored: an ignored signal would stay ignored in the program.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)

	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Its own group: the agent's signals reach it through us. Should
		// we be killed outright, it dies with us.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "xcsh: cannot start %s: %v\n", path, err)
		return 127
	}
	// Our copies of its stdin and stdout would hide their closing from the
	// agent (stderr stays: it carries our own messages).
	if devnull, err := syscall.Open(os.DevNull, syscall.O_RDWR, 0); err == nil {
		_ = syscall.Dup3(devnull, 0, 0)
		_ = syscall.Dup3(devnull, 1, 0)
		syscall.Close(devnull)
	}

	gone := make(chan struct{})
	go func() {
		f := os.NewFile(lifelineFD, "lifeline")
		b := make([]byte, 1)
		for {
			if _, err := f.Read(b); err != nil {
				close(gone)
				return
			}
		}
	}()

	h := &held{pid: pid}
	var killAt <-chan time.Time
loop:
	for {
		select {
		case <-gone: // the agent is gone
			break loop
		case s := <-sigs:
			if s == syscall.SIGUSR1 {
				break loop
			}
			_ = syscall.Kill(-pid, s.(syscall.Signal))
			if s == syscall.SIGTERM && killAt == nil {
				killAt = time.After(time.Duration(graceMs) * time.Millisecond)
			}
		case <-killAt:
			break loop
		case <-chld:
			if h.reap(); h.exited {
				break loop
			}
		}
	}
	h.drain()
	if !h.exited {
		return dieOf(syscall.SIGKILL)
	}
	if h.status.Signaled() {
		return dieOf(h.status.Signal())
	}
	return h.status.ExitStatus()
}

// held is the program from the reaper's side.
type held struct {
	pid    int
	status syscall.WaitStatus
	exited bool // reaped; status is valid
}

// reap collects every child that has exited: the program (its status is
// kept) and what was re-parented to us.
func (h *held) reap() {
	for {
		var st syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if pid == h.pid {
			h.status, h.exited = st, true
		}
	}
}

// drain kills the program's group and every child (each orphan that
// detached is one of ours), again as their own children are re-parented
// to us, and reaps them all: when it returns nothing the program started
// is running. Bounded by drainWait.
func (h *held) drain() {
	deadline := time.Now().Add(drainWait)
	for {
		_ = syscall.Kill(-h.pid, syscall.SIGKILL)
		for _, pid := range Children() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		var st syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case errors.Is(err, syscall.ECHILD):
			// No child left, so no descendant: one would have a chain of
			// parents ending at a child of ours (we are its subreaper).
			return
		case err == nil && pid > 0:
			if pid == h.pid {
				h.status, h.exited = st, true
			}
			continue
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// dieOf ends the reaper by sig, so its parent's Wait reads what the
// program's would have ("signal: killed"); it returns 128+sig only for a
// signal whose default action is not to end a process.
func dieOf(sig syscall.Signal) int {
	signal.Reset()
	if sig != syscall.SIGKILL {
		// The default action, set directly: the Go runtime's own handling
		// of some signals (SIGQUIT's stack dump) is not the default. A
		// zeroed sigaction is SIG_DFL with no flags on every architecture.
		var sa [4]uint64
		_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
		// No core file of ours: the program's dump, if any, was its own.
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	}
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond) // delivery, should it not be at once
	return 128 + int(sig)
}

// Children lists this process's children, from each thread's children
// list, or where the kernel has none (CONFIG_PROC_CHILDREN), by the parent
// pid of every process. A subreaper kills what it inherited through it.
func Children() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	if len(tasks) == 0 {
		return childrenByScan()
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// childrenByScan finds the processes whose parent is this one in /proc.
func childrenByScan() []int {
	self := strconv.Itoa(os.Getpid())
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == self {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(st))); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

func prctl(option int, arg uintptr) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, uintptr(option), arg, 0); e != 0 {
		return e
	}
	return nil
}
