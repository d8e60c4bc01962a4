package shellexec

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"github.com/xcsh-go/xcsh/engine/reaper"
)

// supervisorArg, as argv[1], selects the supervisor mode of the agent's
// own binary (see IsSupervisor).
const supervisorArg = "__xcsh_supervisor__"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (not in package syscall).
const prSetChildSubreaper = 36

// controlFD is the supervisor's end of the socket pair (ExtraFiles[0]).
const controlFD = 3

// goneWait bounds how long the supervisor waits, after SIGKILL, for the
// last member of a group to be reaped. Only a member whose parent left the
// group and does not reap it can stay (as a zombie, which runs nothing).
const goneWait = time.Second

// drainWait bounds a killall: a process stuck in an uninterruptible sleep
// must not keep the supervisor (and the agent's exit) forever.
const drainWait = 5 * time.Second

// IsSupervisor reports whether args (os.Args) start the supervisor mode:
// main must then call SupervisorMain before anything else.
func IsSupervisor(args []string) bool {
	return len(args) == 2 && args[1] == supervisorArg
}

// SupervisorMain runs the supervisor: a re-exec of the agent's binary that
// starts the agent's commands, each in its own process group, and holds
// them so that none outlives the agent however it dies. It is a child
// subreaper, so every process a command leaves behind is re-parented to it
// rather than to init. When the agent's end of the control socket closes
// (the agent exited or was killed with SIGKILL) or the agent asks
// (killall), it kills every command's group and every descendant it has
// inherited, reaps them all, and (at end of stream) exits. It returns the
// process exit status.
func SupervisorMain() int {
	sv, err := newSupervisor()
	if err != nil {
		fmt.Fprintln(os.Stderr, "xcsh supervisor:", err)
		return 1
	}
	return sv.run()
}

// command is a running command's group, from the supervisor's side.
type command struct {
	id     uint64
	pgid   int // the leader's pid
	status syscall.WaitStatus
	reaped bool // the leader has been reaped
	killed bool // the group got SIGKILL
	// killAt is when an aborted group gets SIGKILL (zero: not aborted).
	killAt time.Time
	// goneBy bounds the wait for the group to disappear once killed.
	goneBy time.Time
}

type supervisor struct {
	w       *wire
	ppid    int
	devnull *os.File
	cmds    map[uint64]*command // the commands whose exit is not reported yet
	byPid   map[int]*command
}

func newSupervisor() (*supervisor, error) {
	if err := prctl(prSetChildSubreaper, 1); err != nil {
		return nil, fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	// Started as /proc/self/exe, it would show as "exe" in ps.
	name := []byte("xcsh-supervisor\x00")
	_ = prctl(syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])))
	f := os.NewFile(controlFD, "control")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("control socket is not a Unix socket")
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	return &supervisor{w: newWire(uc), ppid: os.Getppid(), devnull: devnull,
		cmds: map[uint64]*command{}, byPid: map[int]*command{}}, nil
}

type inbound struct {
	m   message
	fd  int
	err error
}

// run is the supervisor's single event loop: every command's state is
// owned by it, so no signal can reach a group after the loop saw it gone
// (the kernel may reuse a pgid only then).
func (sv *supervisor) run() int {
	// The agent's signals are not ours: a terminal's ^C goes to the agent's
	// group (we have our own), and the agent decides what to abort. SIGTERM
	// is our parent-death signal; SIGHUP may come with a closing terminal.
	// They are caught and dropped, not ignored: an ignored signal stays
	// ignored in the commands we exec.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTSTP)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP)
	if os.Getppid() != sv.ppid || sv.ppid == 1 {
		return 0 // the agent died before we started
	}

	in := make(chan inbound, 16)
	go func() {
		for {
			m, fd, err := sv.w.recv()
			in <- inbound{m, fd, err}
			if err != nil {
				return
			}
		}
	}()

	// The first message configures the sandbox (Part of the handshake:
	// the agent waits for ready before it starts a command).
	first := <-in
	if first.err != nil || first.m.Op != opConfig {
		return 1
	}
	info, err := applyConfig(first.m.Config)
	reply := message{Op: opReady, Info: info}
	if err != nil {
		reply.Error = err.Error()
	}
	if sv.w.send(reply, -1) != nil || err != nil {
		return 1
	}

	tick := time.NewTimer(time.Hour)
	tick.Stop()
	for {
		select {
		case ev := <-in:
			if ev.err != nil {
				// The agent is gone (or the socket broke): nothing may outlive it.
				sv.drain()
				return 0
			}
			sv.handle(ev.m, ev.fd)
		case <-chld:
			sv.reap()
		case <-term:
			if os.Getppid() != sv.ppid {
				// Re-parented: the parent-death signal, the agent is gone.
				sv.drain()
				return 0
			}
			// The agent's forking thread ended, or someone signalled us:
			// the agent lives, so its commands do too.
		case <-tick.C:
			sv.reap() // belt and braces: a coalesced SIGCHLD
		}
		sv.check()
		if d, ok := sv.nextWake(); ok {
			tick.Reset(d)
		}
	}
}

func (sv *supervisor) handle(m message, fd int) {
	switch m.Op {
	case opStart:
		sv.start(m, fd)
	case opAbort:
		c := sv.cmds[m.ID]
		if c == nil || c.killAt != (time.Time{}) || c.killed {
			return
		}
		grace := time.Duration(m.GraceMs) * time.Millisecond
		c.killAt = time.Now().Add(grace)
		_ = syscall.Kill(-c.pgid, syscall.SIGTERM)
	case opKillAll:
		sv.drain()
		_ = sv.w.send(message{Op: opKilledAl}, -1)
	default:
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// start runs a command in its own process group with stdin /dev/null and
// stdout and stderr the pipe fd. The leader also gets SIGKILL should the
// supervisor itself die (it is killed only by SIGKILL: it handles the
// rest).
func (sv *supervisor) start(m message, fd int) {
	if fd < 0 {
		_ = sv.w.send(message{Op: opStarted, ID: m.ID, Error: "no output descriptor"}, -1)
		return
	}
	pid, err := syscall.ForkExec(m.Path, m.Argv, &syscall.ProcAttr{
		Dir: m.Dir, Env: m.Env,
		Files: []uintptr{sv.devnull.Fd(), uintptr(fd), uintptr(fd)},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	syscall.Close(fd)
	if err != nil {
		_ = sv.w.send(message{Op: opStarted, ID: m.ID, Error: err.Error()}, -1)
		return
	}
	c := &command{id: m.ID, pgid: pid}
	sv.cmds[m.ID] = c
	sv.byPid[pid] = c
	_ = sv.w.send(message{Op: opStarted, ID: m.ID, Pid: pid}, -1)
}

// reap collects every child that has exited: command leaders (their
// status is kept for the report) and the orphans re-parented to us.
func (sv *supervisor) reap() {
	for {
		var st syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if c := sv.byPid[pid]; c != nil {
			delete(sv.byPid, pid)
			c.status, c.reaped = st, true
		}
	}
}

// check moves every command on: an aborted group past its grace gets
// SIGKILL; once the leader is reaped, what is left of the group gets
// SIGKILL (a background job of a finished command dies with it, as it did
// before the supervisor); a killed group whose last member is gone is
// reported.
func (sv *supervisor) check() {
	now := time.Now()
	for id, c := range sv.cmds {
		if !c.killed && (c.reaped || c.killAt != (time.Time{}) && !now.Before(c.killAt)) {
			_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
			c.killed, c.goneBy = true, now.Add(goneWait)
		}
		if !c.reaped || !c.killed {
			continue
		}
		if err := syscall.Kill(-c.pgid, 0); err == syscall.ESRCH || !now.Before(c.goneBy) {
			delete(sv.cmds, id)
			_ = sv.w.send(message{Op: opExit, ID: id, Status: int(c.status)}, -1)
		}
	}
}

// nextWake is how long the loop may sleep when no event comes: until the
// next abort's SIGKILL, or a short poll while a killed group has members
// left (their reaping, by us or by their own parent, sends no event we can
// wait on).
func (sv *supervisor) nextWake() (time.Duration, bool) {
	var d time.Duration
	ok := false
	for _, c := range sv.cmds {
		var w time.Duration
		switch {
		case c.killed:
			w = time.Millisecond
		case c.killAt != (time.Time{}):
			w = max(time.Until(c.killAt), 0)
		default:
			continue
		}
		if !ok || w < d {
			d, ok = w, true
		}
	}
	return d, ok
}

// drain kills every command's group and every descendant, reaps them all,
// and reports each command's exit: after it nothing the agent started is
// running. Bounded by drainWait.
func (sv *supervisor) drain() {
	deadline := time.Now().Add(drainWait)
	for {
		for _, c := range sv.cmds {
			_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
			c.killed = true
		}
		kids := reaper.Children()
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		var st syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.ECHILD:
			// No child left, so no descendant: one would have a chain of
			// parents ending at a child of ours (we are its subreaper).
			for id, c := range sv.cmds {
				delete(sv.cmds, id)
				_ = sv.w.send(message{Op: opExit, ID: id, Status: int(c.status)}, -1)
			}
			return
		case err == nil && pid > 0:
			if c := sv.byPid[pid]; c != nil {
				delete(sv.byPid, pid)
				c.status, c.reaped = st, true
			}
			continue
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func prctl(option int, arg uintptr) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, uintptr(option), arg, 0); e != 0 {
		return e
	}
	return nil
}
