package shellexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestRunExitCodeAndCombinedOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := Run(context.Background(), "echo out; echo err >&2; pwd; echo $PAGER $FOO; exit 3", Options{Cwd: dir, Env: map[string]string{"FOO": "bar"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "out\nerr\n" + dir + "\ncat bar\n"
	if r.Output != want || !r.Exited || r.ExitCode != 3 || r.Cancelled || r.TimedOut {
		t.Fatalf("got %+v", r)
	}
	if r.TotalBytes != len(want) || r.TotalLines != 5 {
		t.Fatalf("counts %d %d", r.TotalBytes, r.TotalLines)
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	// The timeout is long enough that bash has printed "started" before it
	// fires, even on a loaded machine (200 ms once raced bash's start-up).
	r, err := Run(context.Background(), "echo started; sleep 30", Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A timeout not enforced would let the sleep finish: Exited, not
	// TimedOut. No bound on the elapsed time is needed to see it.
	if !r.TimedOut || r.Exited || r.Output != "started\n" {
		t.Fatalf("got %+v", r)
	}
}

// pgGone waits until no process of the group is left.
func pgGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		r, _ := Run(ctx, "echo $$ > pid; (sleep 1000; echo never) & sleep 1000 & wait", Options{Cwd: dir})
		done <- r
	}()
	var pid int
	for deadline := time.Now().Add(5 * time.Second); ; {
		b, _ := os.ReadFile(pidFile)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pid = n
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("command did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	r := <-done
	if !r.Cancelled || r.Exited {
		t.Fatalf("got %+v", r)
	}
	pgGone(t, pid) // bash is the group leader: its pid is the pgid
}

func TestBoundedMemoryForHugeOutput(t *testing.T) {
	t.Parallel()
	r, err := Run(context.Background(), "yes 0123456789 | head -c 20000000", Options{MaxBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.TotalBytes != 20000000 || len(r.Output) > 1024 || r.ExitCode != 0 {
		t.Fatalf("truncated=%v total=%d out=%d code=%d", r.Truncated, r.TotalBytes, len(r.Output), r.ExitCode)
	}
	if !strings.HasPrefix(r.Output, "0123456789\n") {
		t.Fatalf("tail does not start at a line: %q", r.Output[:20])
	}
}

func TestOnOutputNeverAfterReturn(t *testing.T) {
	t.Parallel()
	var calls, after atomic.Int32
	var returned atomic.Bool
	_, err := Run(context.Background(), "for i in 1 2 3 4 5; do echo $i; sleep 0.02; done", Options{
		Interval: time.Millisecond,
		OnOutput: func(string) {
			calls.Add(1)
			if returned.Load() {
				after.Add(1)
			}
		},
	})
	returned.Store(true)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() == 0 || after.Load() != 0 {
		t.Fatalf("calls %d, after return %d", calls.Load(), after.Load())
	}
}

func TestShellBashResult(t *testing.T) {
	t.Parallel()
	r, err := Shell{Cwd: t.TempDir()}.Exec(context.Background(), "echo hello")
	if err != nil || r.ExitCode == nil || *r.ExitCode != 0 || r.Output != "hello\n" || r.TotalLines != 2 || r.OutputBytes != 6 {
		t.Fatalf("%+v %v", r, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err = Shell{}.Exec(ctx, "sleep 5")
	if err != nil || r.ExitCode != nil || !r.Cancelled || !strings.HasPrefix(r.Output, "[Command cancelled]\n") {
		t.Fatalf("cancelled: %+v %v", r, err)
	}
}

// The throttle has a leading edge (the first output shows at once, even
// with a long interval) and a trailing edge (the last burst shows even
// when the command then goes quiet).
func TestOnOutputLeadingAndTrailingEdges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// "one" then, in the same interval, "two"; then quiet until the
		// test has seen both.
		cmd := "echo one; echo two; while [ ! -e seen ]; do sleep 0.01; done"
		if _, err := Run(context.Background(), cmd, Options{Cwd: dir, Interval: 30 * time.Millisecond,
			OnOutput: func(s string) { got <- s }}); err != nil {
			t.Error(err)
		}
	}()
	deadline := time.After(10 * time.Second)
	for last := ""; last != "one\ntwo\n"; {
		select {
		case last = <-got:
		case <-deadline:
			t.Fatalf("trailing output never shown; last %q", last)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "seen"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
}

// readPid waits for a command to write its pid to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		b, _ := os.ReadFile(path)
		if s := string(b); strings.HasSuffix(s, "\n") {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("command did not write %s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// termIgnoring is a command whose shell and child both ignore SIGTERM; the
// shell is the group leader, so the pid it writes is the pgid.
const termIgnoring = `trap "" TERM; echo $$ > pid; sleep 60`

// Abort returns at once even when the child ignores SIGTERM: the SIGKILL
// that follows Grace later does not hold the caller, and the group is
// still killed and reaped in the background. The test makes the grace an
// hour, so the group is certainly alive when Run returns: Run returning
// at all shows it did not wait for the kill, with no bound on the time
// (before the fix it waited Grace every time). The test kills the group
// itself.
func TestCancelReturnsAtOnceWhenChildIgnoresTerm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		r, _ := Run(ctx, termIgnoring, Options{Cwd: dir, grace: time.Hour})
		done <- r
	}()
	pgid := readPid(t, filepath.Join(dir, "pid"))
	start := time.Now()
	cancel()
	r := <-done
	t.Logf("abort returned after %v", time.Since(start))
	if !r.Cancelled || r.Exited {
		t.Fatalf("got %+v", r)
	}
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("the group was gone when Run returned (%v): Run waited for the kill", err)
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	pgGone(t, pgid)
	waitCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := Wait(waitCtx); err != nil {
		t.Fatalf("reapers still running: %v", err)
	}
}

// KillAll kills every running group at once, however its members treat
// SIGTERM, and Wait then sees them reaped. Not parallel: KillAll would
// kill the other tests' commands.
func TestKillAllKillsRunningGroups(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	done := make(chan Result, len(dirs))
	for _, dir := range dirs {
		go func() {
			r, _ := Run(context.Background(), termIgnoring, Options{Cwd: dir})
			done <- r
		}()
	}
	var pgids []int
	for _, dir := range dirs {
		pgids = append(pgids, readPid(t, filepath.Join(dir, "pid")))
	}
	KillAll()
	for range dirs {
		select {
		case r := <-done:
			// Killed, not exited: the tool reports a missing exit status.
			if r.Exited || r.Cancelled {
				t.Fatalf("got %+v", r)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after KillAll")
		}
	}
	for _, pgid := range pgids {
		pgGone(t, pgid)
	}
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := Wait(ctx); err != nil {
		t.Fatalf("reapers still running: %v", err)
	}
}
