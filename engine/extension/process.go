package extension

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/xcsh-go/xcsh/engine/reaper"
)

// process is an extension's operating-system process. It runs in a
// process group of its own, under a reaper where there is one (see
// engine/reaper): stopping it, or the agent's end however it comes, stops
// everything it started, even what left its group and session.
type process struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when it has been reaped
	err    error         // Wait's result, written before exited is closed
}

// start runs spec's command in dir with env. It returns the agent's ends
// of the extension's stdin and stdout; stderr is copied to log, a line at
// a time, under the extension's path. grace is the time the extension has
// after a SIGTERM (stop's step) before the reaper kills it.
func (p *process) start(spec Spec, dir string, env []string, grace time.Duration, log func(format string, args ...any)) (io.WriteCloser, *os.File, error) {
	if len(spec.Command) == 0 {
		return nil, nil, errors.New("no command")
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	if spec.Wrap != nil {
		if err := spec.Wrap(cmd); err != nil {
			return nil, nil, err
		}
	}
	// The reaper wraps it all: it ends whatever the extension (or the
	// sandbox's wrapper) starts, with it or with the agent.
	reaper.Wrap(cmd, grace)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		stdoutR.Close()
		stdoutW.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, errW
	err = cmd.Start()
	// The child has its copies; ours of its ends are closed either way.
	stdinR.Close()
	stdoutW.Close()
	errW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		errR.Close()
		return nil, nil, err
	}
	p.mu.Lock()
	p.cmd = cmd
	p.exited = make(chan struct{})
	p.mu.Unlock()
	go func() {
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			log("extension %s: %s", spec.Path, sc.Text())
		}
		// A line over 64 KiB ends the copy; drain the rest unread so the
		// extension never blocks on its stderr.
		_, _ = io.Copy(io.Discard, errR)
	}()
	go func() {
		err := cmd.Wait()
		p.err = err
		close(p.exited)
	}()
	return stdinW, stdoutR, nil
}

// signal sends sig to the extension's process group (SIGKILL: to it and
// everything it left behind, under a reaper).
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	reaper.Signal(cmd, sig)
}

// kill ends the process group, and under a reaper what left it, at once.
func (p *process) kill() { p.signal(syscall.SIGKILL) }

// done is closed once the process has been reaped (never for a process
// that did not start).
func (p *process) done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == nil {
		return nil
	}
	return p.exited
}

// stop ends a process that was asked to exit (its stdin closed): it waits
// up to grace for the exit, then sends TERM to the group and waits grace
// again, then KILL, and waits for the reaping (bounded too: a process in
// uninterruptible sleep cannot hold the agent). The group is killed in the
// end whatever happened, so nothing it started outlives it.
func (p *process) stop(grace time.Duration) {
	exited := p.done()
	if exited == nil {
		return
	}
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-exited:
			return true
		case <-t.C:
			return false
		}
	}
	if !wait(grace) {
		p.signal(syscall.SIGTERM)
		if !wait(grace) {
			p.kill()
			wait(grace)
		}
	}
	p.kill() // what it started, if it left anything behind
}

// exitText says how the process ended, for extension_error.
func (p *process) exitText() string {
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return "the extension exited (exit status 0)"
	case errors.As(p.err, &ee):
		return fmt.Sprintf("the extension exited (%v)", ee)
	}
	return fmt.Sprintf("the extension ended: %v", p.err)
}
