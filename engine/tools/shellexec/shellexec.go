// Package shellexec runs shell commands for the bash tool and the RPC bash
// command: bash in its own process group, stdin closed, stdout and stderr
// combined, only a bounded tail kept in memory. On cancellation or timeout
// the group gets SIGTERM and Run returns at once; SIGKILL follows after
// Grace in the background. Every live group is registered, so the agent
// kills them all on its way out (KillAll): no child outlives the agent.
package shellexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// Grace is how long a cancelled command's process group gets between
// SIGTERM and SIGKILL (the original's hard kill comes 5 s after the
// timeout). It no longer holds the caller: a cancelled Run returns after
// AbortWait at most and the escalation finishes in the background.
const Grace = 2 * time.Second

// AbortWait is how long a cancelled Run waits for its process group to
// exit after SIGTERM before it returns and leaves the escalation to
// SIGKILL and the reaping to the background. It keeps abort within its
// 100 ms promise (DECISIONS.md, Tools) even when the child ignores SIGTERM,
// while a child that honours SIGTERM is usually reaped before Run returns.
const AbortWait = 25 * time.Millisecond

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
	// grace replaces Grace when set: a test makes it long so that the
	// group is certainly alive when a cancelled Run returns.
	grace time.Duration
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
	if _, err := exec.LookPath(shell); err != nil {
		shell = "sh"
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	if o.Timeout > 0 {
		timer := time.AfterFunc(o.Timeout, func() { timedOut.Store(true); cancel() })
		defer timer.Stop()
	}
	out := &tail{max: o.MaxBytes, notify: o.OnOutput, every: o.Interval}
	cmd := exec.CommandContext(runCtx, shell, "-c", command)
	cmd.Dir = o.Cwd
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	cmd.Env = append(os.Environ(), nonInteractive...)
	for k, v := range o.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Cancellation (abort or timeout) interrupts the whole group. If the
	// shell is still there WaitDelay later, Wait kills it and cuts its
	// pipes; the reaper then kills the rest of the group. WaitDelay also
	// bounds how long a grandchild holding the output pipe keeps Wait
	// waiting after the shell exited on its own.
	cmd.Cancel = func() error {
		groups.signal(cmd.Process.Pid, syscall.SIGTERM)
		return nil
	}
	cmd.WaitDelay = Grace
	if o.grace > 0 {
		cmd.WaitDelay = o.grace
	}
	pgid, done, err := groups.start(cmd)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Cancelled: true}, nil
		}
		return Result{}, fmt.Errorf("starting %s: %w", shell, err)
	}
	// The reaper owns the group from here: it waits for the shell, kills
	// what is left of the group and unregisters it, whether or not Run is
	// still there to see it. waitErr is written before done is closed.
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		groups.finish(pgid)
	}()
	select {
	case <-done:
	case <-runCtx.Done():
		// Cancel has sent (or is sending) SIGTERM. Give the group a moment
		// to exit, so its last output is kept, but never hold the caller
		// for a child that ignores the signal.
		t := time.NewTimer(AbortWait)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
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
	default:
		// Neither cancelled nor timed out: the reaper has finished.
		err := waitErr
		var ee *exec.ExitError
		if err == nil || errors.As(err, &ee) {
			if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Exited() {
				res.Exited, res.ExitCode = true, st.ExitStatus()
			} else if cmd.ProcessState.Exited() {
				res.Exited, res.ExitCode = true, cmd.ProcessState.ExitCode()
			}
		} else if !errors.Is(err, exec.ErrWaitDelay) {
			return res, err
		} else {
			res.Exited, res.ExitCode = true, cmd.ProcessState.ExitCode()
		}
	}
	return res, nil
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
	out := engine.BashResult{Output: r.Output, Truncated: r.Truncated, TotalLines: r.TotalLines, TotalBytes: r.TotalBytes}
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
