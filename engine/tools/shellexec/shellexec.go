// Package shellexec runs shell commands for the bash tool and the RPC bash
// command: bash in its own process group, stdin closed, stdout and stderr
// combined, only a bounded tail kept in memory. On cancellation or timeout
// the group gets SIGTERM, then SIGKILL after Grace, and Run returns only
// once the group is gone, so nothing the caller was told ended still runs.
//
// On Linux the agent routes every command through a supervisor process
// (Use, NewSupervisor, SupervisorMain): a re-exec of its own binary that is
// a child subreaper and kills every command and every descendant when the
// agent dies, even by SIGKILL. Without one (other systems, or a program
// that did not opt in) commands start directly and every live group is
// registered, so the agent kills them all on its way out (KillAll).
package shellexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/childenv"
)

// Grace is how long a cancelled command's process group gets between
// SIGTERM and SIGKILL. Run returns only when the group is gone, so an
// abort is answered within Grace plus the reaping (issue 15, S11).
const Grace = 200 * time.Millisecond

// pipeWait bounds how long output is still read after the command's group
// is gone: a process that left the group may hold the pipe open.
const pipeWait = Grace

// nonInteractive is the environment overlay that keeps tools from waiting
// on a terminal: pagers, editors, prompts and colour off.
var nonInteractive = []string{
	"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "TERM=dumb", "NO_COLOR=1", "CI=1",
	"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "EDITOR=true", "VISUAL=true",
	"DEBIAN_FRONTEND=noninteractive", "PIP_NO_INPUT=1", "NPM_CONFIG_YES=true",
}

// Options configure one Run.
type Options struct {
	Cwd      string
	Timeout  time.Duration     // 0: none
	Env      map[string]string // on top of the overlay
	MaxBytes int               // tail kept in memory; 0: 50 KiB
	// OnOutput, if set, gets the current tail at most once per Interval
	// while output arrives, never after Run returns.
	OnOutput func(tail string)
	Interval time.Duration
	// via, set by this package's tests, starts the command through that
	// supervisor (or directly with direct) instead of the one Use chose.
	via    *Supervisor
	direct bool
}

// Result is the outcome of Run.
type Result struct {
	Output     string
	ExitCode   int
	Exited     bool
	Cancelled  bool
	TimedOut   bool
	Truncated  bool
	TotalBytes int
	TotalLines int
}

// tail keeps the last max bytes written to it, and counts everything.
type tail struct {
	mu       sync.Mutex
	buf      []byte
	max      int
	total    int
	newlines int
	dropped  bool
	last     time.Time
	every    time.Duration
	notify   func(string)
	closed   bool
	timer    *time.Timer // pending trailing notification, nil when none
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += len(p)
	for _, c := range p {
		if c == '\n' {
			t.newlines++
		}
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.dropped = true
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	if t.notify != nil && !t.closed {
		// Throttle with a leading and a trailing edge: the first output is
		// shown at once, later output at most once per interval, and the
		// last burst is shown even when nothing follows it (a command that
		// prints a line and then works quietly).
		if wait := t.every - time.Since(t.last); wait <= 0 {
			t.flushLocked()
		} else if t.timer == nil {
			t.timer = time.AfterFunc(wait, func() {
				t.mu.Lock()
				defer t.mu.Unlock()
				t.timer = nil
				if !t.closed {
					t.flushLocked()
				}
			})
		}
	}
	return len(p), nil
}

func (t *tail) flushLocked() {
	t.last = time.Now()
	t.notify(t.text())
}

// close stops notifications; Run calls it before returning.
func (t *tail) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

// text returns the kept tail, starting at a line boundary when output was
// dropped (as the original's tail truncation keeps whole lines).
func (t *tail) text() string {
	b := t.buf
	if t.dropped {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Run runs command with bash (sh when bash is missing).
func Run(ctx context.Context, command string, o Options) (Result, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 50 * 1024
	}
	if ctx.Err() != nil {
		return Result{Cancelled: true}, nil
	}
	shell := "bash"
	path, err := exec.LookPath(shell)
	if err != nil {
		shell = "sh"
		if path, err = exec.LookPath(shell); err != nil {
			return Result{}, fmt.Errorf("starting %s: %w", shell, err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	if o.Timeout > 0 {
		timer := time.AfterFunc(o.Timeout, func() { timedOut.Store(true); cancel() })
		defer timer.Stop()
	}
	out := &tail{max: o.MaxBytes, notify: o.OnOutput, every: o.Interval}
	env := make([]string, 0, len(nonInteractive)+len(o.Env))
	env = append(env, nonInteractive...)
	for k, v := range o.Env {
		env = append(env, k+"="+v)
	}
	sp := spec{path: path, argv: []string{shell, "-c", command}, dir: o.Cwd, env: childenv.Environ(env...)}
	via := o.via
	if via == nil && !o.direct {
		via = active.Load()
	}
	ended, err := launch(runCtx, via, sp, out)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Cancelled: true}, nil
		}
		return Result{}, fmt.Errorf("starting %s: %w", shell, err)
	}
	// The launcher aborts the command when runCtx ends and reports only
	// once its group is gone and its output read.
	ex := <-ended
	out.close()
	out.mu.Lock()
	res := Result{Output: out.text(), Truncated: out.dropped, TotalBytes: out.total}
	if out.total > 0 {
		res.TotalLines = out.newlines + 1
	}
	out.mu.Unlock()
	switch {
	case timedOut.Load():
		res.TimedOut = true
	case ctx.Err() != nil:
		res.Cancelled = true
	case ex.err != nil:
		return res, ex.err
	case ex.known && ex.status.Exited():
		res.Exited, res.ExitCode = true, ex.status.ExitStatus()
	}
	// Otherwise killed (KillAll, a signal, a lost supervisor): no exit
	// status, which the bash tool reports as such.
	return res, nil
}

// spec is a command to start: an absolute path, its argv, where, and its
// whole environment.
type spec struct {
	path string
	argv []string
	dir  string
	env  []string
}

// exitInfo is how a command ended: its shell's wait status when known; err
// an infrastructure failure.
type exitInfo struct {
	status syscall.WaitStatus
	known  bool
	err    error
}

// active is the supervisor Run starts commands through; nil starts them
// directly.
var active atomic.Pointer[Supervisor]

// Use routes every later Run through s (nil: direct starts). cmd/xcsh
// calls it once at start-up.
func Use(s *Supervisor) { active.Store(s) }

// launch starts sp with out as its stdout and stderr, through s when it is
// not nil. The command is
// aborted when ctx ends; the channel delivers once its group is gone.
func launch(ctx context.Context, s *Supervisor, sp spec, out io.Writer) (<-chan exitInfo, error) {
	if s != nil {
		ch, err, fellBack := s.launch(ctx, sp, out)
		if !fellBack {
			return ch, err
		}
	}
	return launchDirect(ctx, sp, out)
}

// launchDirect starts the shell as a child of the agent. Cancellation
// interrupts the whole group; if the shell is still there Grace later,
// Wait kills it and cuts its pipes, and the reaper then kills the rest of
// the group. WaitDelay also bounds how long a grandchild holding the
// output pipe keeps Wait waiting after the shell exited on its own.
func launchDirect(ctx context.Context, sp spec, out io.Writer) (<-chan exitInfo, error) {
	cmd := exec.CommandContext(ctx, sp.path)
	cmd.Args = sp.argv
	cmd.Dir = sp.dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.Env = sp.env
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error {
		groups.signal(cmd.Process.Pid, syscall.SIGTERM)
		return nil
	}
	cmd.WaitDelay = Grace
	pgid, _, err := groups.start(cmd)
	if err != nil {
		return nil, err
	}
	// The reaper owns the group from here: it waits for the shell, kills
	// what is left of the group and unregisters it.
	ended := make(chan exitInfo, 1)
	go func() {
		err := cmd.Wait()
		groups.finish(pgid)
		ex := exitInfo{}
		if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			ex.status, ex.known = st, true
		}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil {
			ex.err = err
		}
		ended <- ex
	}()
	return ended, nil
}

// Shell implements engine.Shell for the RPC bash command: 300 s timeout,
// the session's working directory.
type Shell struct {
	Cwd     string
	Timeout time.Duration // 0: 300 s
}

// Exec implements engine.Shell.
func (s Shell) Exec(ctx context.Context, command string) (engine.BashResult, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 300 * time.Second
	}
	r, err := Run(ctx, command, Options{Cwd: s.Cwd, Timeout: timeout})
	if err != nil {
		return engine.BashResult{}, err
	}
	out := engine.BashResult{Output: r.Output, Truncated: r.Truncated, TotalLines: r.TotalLines, TotalBytes: r.TotalBytes, WorkingDir: s.Cwd}
	switch {
	case r.TimedOut:
		out.Cancelled = true
		out.Output = fmt.Sprintf("[Command timed out after %d seconds]\n", int(timeout.Seconds())) + out.Output
	case r.Cancelled:
		out.Cancelled = true
		out.Output = "[Command cancelled]\n" + out.Output
	default:
		code := r.ExitCode
		out.ExitCode = &code
	}
	out.OutputBytes = len(out.Output)
	if out.Output != "" {
		out.OutputLines = strings.Count(out.Output, "\n") + 1
	}
	return out, nil
}
