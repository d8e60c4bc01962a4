// Package shellexec runs shell commands for the bash tool and the RPC bash
// command: bash in its own process group, stdin closed, stdout and stderr
// combined, only a bounded tail kept in memory, and the whole group killed
// on cancellation or timeout so no child outlives the call.
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

// Grace is how long a cancelled command gets between SIGTERM and SIGKILL
// of its process group (the original's hard kill comes 5 s after the
// timeout; a shorter grace keeps abort responsive).
const Grace = 2 * time.Second

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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), nonInteractive...)
	for k, v := range o.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Cancellation signals the whole group: interrupt first, then kill.
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		go func() {
			time.Sleep(Grace)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}()
		return nil
	}
	// A grandchild holding the pipe must not keep Run waiting.
	cmd.WaitDelay = Grace + time.Second
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting %s: %w", shell, err)
	}
	err := cmd.Wait()
	// Whatever happened, leave no member of the group behind.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
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
