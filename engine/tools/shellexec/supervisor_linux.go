package shellexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/xcsh-go/xcsh/engine/childenv"
)

// ErrSupervisorGone is the failure of a command whose supervisor died or
// whose control socket broke before the command's end was reported.
var ErrSupervisorGone = errors.New("the command supervisor is gone")

// ErrSandboxApply is the failure of a supervisor that started (in its
// namespaces, if any) but could not apply its sandbox configuration to
// itself; the error text says what failed (Landlock, the loopback).
var ErrSandboxApply = errors.New("the command supervisor could not apply the sandbox")

// SupervisorConfig says how the supervisor process is started.
type SupervisorConfig struct {
	// Path is the binary to run in supervisor mode; "" is /proc/self/exe,
	// the agent's own binary (even when it was replaced on disk since).
	Path string
	// Arg0 is its argv[0]; "" is os.Args[0] (testscript dispatches the
	// installed test binary on it).
	Arg0 string
	// Config is sent to the supervisor before anything else (the sandbox
	// it applies to itself and so to every command; nil for none).
	Config json.RawMessage
	// SysProcAttr, when set, adds to the supervisor's start: the namespaces
	// of the sandbox. Setpgid and Pdeathsig are always set.
	SysProcAttr *syscall.SysProcAttr
	// Log gets one line when a lazily started supervisor cannot start and
	// commands fall back to direct starts; nil discards it.
	Log io.Writer
	// Required makes a failed start an error for the command instead of a
	// fallback (a sandbox that cannot be applied must not be skipped).
	Required bool
}

// Supervisor starts commands through a supervisor process (see
// SupervisorMain), started on first use or by Start. Use routes Run
// through it. It is safe for concurrent use.
type Supervisor struct {
	cfg SupervisorConfig
	mu  sync.Mutex
	// cl is the live connection; nil before the first start and after it
	// broke (the next command starts a new supervisor). Guarded by mu.
	cl *client
	// fallback is set once a lazy start failed: commands then start
	// directly without trying again. Guarded by mu.
	fallback bool
	// killed are the acknowledgements of the killall requests Wait has
	// not waited for yet. Guarded by mu.
	killed []<-chan struct{}
}

// NewSupervisor returns a supervisor that is started on first use.
func NewSupervisor(cfg SupervisorConfig) *Supervisor { return &Supervisor{cfg: cfg} }

// Start starts the supervisor now if it is not running, and returns what
// it reported about its configuration (the sandbox it enforces).
func (s *Supervisor) Start() (json.RawMessage, error) {
	cl, err := s.client()
	if err != nil {
		return nil, err
	}
	return cl.info, nil
}

// client returns the live connection, starting a supervisor when needed.
func (s *Supervisor) client() (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl != nil && !s.cl.broken() {
		return s.cl, nil
	}
	cl, err := startClient(s.cfg)
	if err != nil {
		return nil, err
	}
	s.cl = cl
	return cl, nil
}

// Close ends the connection: the supervisor kills whatever is left and
// exits; Close waits for it (bounded by ctx).
func (s *Supervisor) Close(ctx context.Context) error {
	s.mu.Lock()
	cl := s.cl
	s.cl = nil
	s.mu.Unlock()
	if cl == nil {
		return nil
	}
	cl.w.c.CloseWrite()
	select {
	case <-cl.exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// client is one supervisor process and its control connection.
type client struct {
	w      *wire
	info   json.RawMessage
	exited chan struct{} // closed once the supervisor process is reaped

	mu   sync.Mutex
	next uint64
	// jobs are the commands started and not yet reported ended; kills the
	// killall requests not yet acknowledged; err is set once the
	// connection is gone. All guarded by mu.
	jobs  map[uint64]*supJob
	kills []chan struct{}
	err   error
}

// supJob is one command from the agent's side.
type supJob struct {
	started chan message // the started reply (pid or error)
	ended   chan struct{}
	status  syscall.WaitStatus // valid once ended, when err is nil
	err     error
}

func startClient(cfg SupervisorConfig) (*client, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "control")
	defer theirs.Close()
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	path, arg0 := cfg.Path, cfg.Arg0
	if path == "" {
		path = "/proc/self/exe"
	}
	if arg0 == "" {
		arg0 = os.Args[0]
	}
	cmd := &exec.Cmd{Path: path, Args: []string{arg0, supervisorArg}, Env: childenv.Environ(),
		ExtraFiles: []*os.File{theirs}, Stderr: os.Stderr}
	attr := &syscall.SysProcAttr{}
	if cfg.SysProcAttr != nil {
		a := *cfg.SysProcAttr
		attr = &a
	}
	// Its own group, so a signal to the agent's group (a terminal's ^C, a
	// harness killing the group) leaves it to clean up; SIGTERM when the
	// agent dies, which it checks against its parent pid.
	attr.Setpgid, attr.Pdeathsig = true, syscall.SIGTERM
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("starting the supervisor: %w", err)
	}
	cl := &client{w: newWire(c.(*net.UnixConn)), exited: make(chan struct{}), jobs: map[uint64]*supJob{}}
	go func() {
		_ = cmd.Wait()
		close(cl.exited)
	}()
	fail := func(err error) (*client, error) {
		cl.w.close()
		<-cl.exited
		return nil, err
	}
	if err := cl.w.send(message{Op: opConfig, Config: cfg.Config}, -1); err != nil {
		return fail(fmt.Errorf("configuring the supervisor: %w", err))
	}
	m, _, err := cl.w.recv()
	switch {
	case err != nil:
		return fail(fmt.Errorf("the supervisor did not start: %w", err))
	case m.Op != opReady:
		return fail(fmt.Errorf("the supervisor said %q instead of ready", m.Op))
	case m.Error != "":
		return fail(fmt.Errorf("%w: %s", ErrSandboxApply, m.Error))
	}
	cl.info = m.Info
	go cl.read()
	return cl, nil
}

// read dispatches the supervisor's replies until the connection ends;
// then every command still waiting fails with ErrSupervisorGone.
func (cl *client) read() {
	for {
		m, fd, err := cl.w.recv()
		if fd >= 0 {
			syscall.Close(fd)
		}
		if err != nil {
			cl.mu.Lock()
			cl.err = ErrSupervisorGone
			for id, j := range cl.jobs {
				delete(cl.jobs, id)
				j.err = ErrSupervisorGone
				close(j.ended)
				select {
				case j.started <- message{Op: opStarted, Error: ErrSupervisorGone.Error()}:
				default:
				}
			}
			for _, k := range cl.kills {
				close(k)
			}
			cl.kills = nil
			cl.mu.Unlock()
			cl.w.close()
			return
		}
		cl.mu.Lock()
		switch m.Op {
		case opStarted:
			if j := cl.jobs[m.ID]; j != nil {
				j.started <- m
				if m.Error != "" {
					delete(cl.jobs, m.ID)
				}
			}
		case opExit:
			if j := cl.jobs[m.ID]; j != nil {
				delete(cl.jobs, m.ID)
				j.status = syscall.WaitStatus(m.Status)
				close(j.ended)
			}
		case opKilledAl:
			if len(cl.kills) > 0 {
				close(cl.kills[0])
				cl.kills = cl.kills[1:]
			}
		}
		cl.mu.Unlock()
	}
}

func (cl *client) broken() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.err != nil
}

// start asks for a command with out as its stdout and stderr.
func (cl *client) start(path string, argv []string, dir string, env []string, out *os.File) (uint64, *supJob, error) {
	cl.mu.Lock()
	if cl.err != nil {
		cl.mu.Unlock()
		return 0, nil, cl.err
	}
	cl.next++
	id := cl.next
	j := &supJob{started: make(chan message, 1), ended: make(chan struct{})}
	cl.jobs[id] = j
	cl.mu.Unlock()
	// Fd puts the descriptor back in blocking mode: the command must not
	// see EAGAIN on its stdout.
	err := cl.w.send(message{Op: opStart, ID: id, Path: path, Argv: argv, Dir: dir, Env: env}, int(out.Fd()))
	if err != nil {
		cl.forget(id)
		return 0, nil, fmt.Errorf("%w: %v", ErrSupervisorGone, err)
	}
	m := <-j.started
	if m.Error != "" {
		cl.forget(id)
		return 0, nil, errors.New(m.Error)
	}
	return id, j, nil
}

func (cl *client) forget(id uint64) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	delete(cl.jobs, id)
}

func (cl *client) abort(id uint64, grace time.Duration) {
	_ = cl.w.send(message{Op: opAbort, ID: id, GraceMs: grace.Milliseconds()}, -1)
}

// killAll asks the supervisor to kill everything; the channel is closed
// once it has (or the connection is gone).
func (cl *client) killAll() <-chan struct{} {
	ch := make(chan struct{})
	cl.mu.Lock()
	if cl.err != nil {
		cl.mu.Unlock()
		close(ch)
		return ch
	}
	cl.kills = append(cl.kills, ch)
	cl.mu.Unlock()
	if err := cl.w.send(message{Op: opKillAll}, -1); err != nil {
		// The reader sees the broken connection and closes ch.
		cl.w.c.Close()
	}
	return ch
}

// pending lists the end channels of the commands still running.
func (cl *client) pending() []chan struct{} {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	out := make([]chan struct{}, 0, len(cl.jobs))
	for _, j := range cl.jobs {
		out = append(out, j.ended)
	}
	return out
}

// launch starts sp through the supervisor. fellBack reports that the
// supervisor could not start and is not required: the caller then starts
// the command directly (said once on the log).
func (s *Supervisor) launch(ctx context.Context, sp spec, out io.Writer) (ended <-chan exitInfo, err error, fellBack bool) {
	s.mu.Lock()
	fb := s.fallback
	s.mu.Unlock()
	if fb {
		return nil, nil, true
	}
	cl, err := s.client()
	if err != nil {
		if s.cfg.Required {
			return nil, err, false
		}
		s.mu.Lock()
		first := !s.fallback
		s.fallback = true
		s.mu.Unlock()
		if first && s.cfg.Log != nil {
			fmt.Fprintf(s.cfg.Log, "xcsh: command supervisor unavailable (%v); commands start directly\n", err)
		}
		return nil, nil, true
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err, false
	}
	id, j, err := cl.start(sp.path, sp.argv, sp.dir, sp.env, w)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err, false
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, r)
	}()
	ch := make(chan exitInfo, 1)
	go func() {
		select {
		case <-j.ended:
		case <-ctx.Done():
			cl.abort(id, Grace)
			<-j.ended
		}
		// The group is gone; a process that left it may still hold the
		// pipe: read what is there, within pipeWait.
		_ = r.SetReadDeadline(time.Now().Add(pipeWait))
		<-copied
		r.Close()
		if j.err != nil {
			// Treated as killed: no exit status.
			ch <- exitInfo{}
			return
		}
		ch <- exitInfo{status: j.status, known: true}
	}()
	return ch, nil, false
}

// killAll kills every command and descendant the supervisor holds; wait
// then waits for that.
func (s *Supervisor) killAll() {
	s.mu.Lock()
	cl := s.cl
	s.mu.Unlock()
	if cl == nil {
		return
	}
	done := cl.killAll()
	s.mu.Lock()
	s.killed = append(s.killed, done)
	s.mu.Unlock()
}

// wait blocks until every command has been reported ended and every
// killall acknowledged, or ctx is done.
func (s *Supervisor) wait(ctx context.Context) error {
	s.mu.Lock()
	cl := s.cl
	pending := append([]<-chan struct{}(nil), s.killed...)
	s.killed = nil
	s.mu.Unlock()
	if cl != nil {
		for _, c := range cl.pending() {
			pending = append(pending, c)
		}
	}
	for _, c := range pending {
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
