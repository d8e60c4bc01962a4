package shellexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// testSup is the supervisor the "supervised" subtests start commands
// through: this test binary re-executed in supervisor mode (TestMain).
var testSup = NewSupervisor(SupervisorConfig{Log: os.Stderr, Required: true})

func TestMain(m *testing.M) {
	if IsSupervisor(os.Args) {
		os.Exit(SupervisorMain())
	}
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = testSup.Close(ctx)
	cancel()
	os.Exit(code)
}

// modes runs f once with direct starts and once through the supervisor,
// in parallel; o carries the choice into Run.
func modes(t *testing.T, f func(t *testing.T, o Options)) {
	t.Helper()
	t.Parallel()
	t.Run("direct", func(t *testing.T) { t.Parallel(); f(t, Options{direct: true}) })
	t.Run("supervised", func(t *testing.T) { t.Parallel(); f(t, Options{via: testSup}) })
}

func TestRunExitCodeAndCombinedOutput(t *testing.T) { modes(t, testRunExitCodeAndCombinedOutput) }

func testRunExitCodeAndCombinedOutput(t *testing.T, o Options) {
	dir := t.TempDir()
	o.Cwd, o.Env = dir, map[string]string{"FOO": "bar"}
	r, err := Run(context.Background(), "echo out; echo err >&2; pwd; echo $PAGER $FOO; exit 3", o)
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

func TestRunTimeout(t *testing.T) { modes(t, testRunTimeout) }

func testRunTimeout(t *testing.T, o Options) {
	// The timeout is long enough that bash has printed "started" before it
	// fires, even on a loaded machine (200 ms once raced bash's start-up).
	o.Timeout = 2 * time.Second
	r, err := Run(context.Background(), "echo started; sleep 30", o)
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

func TestCancelKillsTheWholeGroup(t *testing.T) { modes(t, testCancelKillsTheWholeGroup) }

func testCancelKillsTheWholeGroup(t *testing.T, o Options) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		o.Cwd = dir
		r, _ := Run(ctx, "echo $$ > pid; (sleep 1000; echo never) & sleep 1000 & wait", o)
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

func TestBoundedMemoryForHugeOutput(t *testing.T) { modes(t, testBoundedMemoryForHugeOutput) }

func testBoundedMemoryForHugeOutput(t *testing.T, o Options) {
	o.MaxBytes = 1024
	r, err := Run(context.Background(), "yes 0123456789 | head -c 20000000", o)
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

func TestOnOutputNeverAfterReturn(t *testing.T) { modes(t, testOnOutputNeverAfterReturn) }

func testOnOutputNeverAfterReturn(t *testing.T, o Options) {
	var calls, after atomic.Int32
	var returned atomic.Bool
	o.Interval = time.Millisecond
	o.OnOutput = func(string) {
		calls.Add(1)
		if returned.Load() {
			after.Add(1)
		}
	}
	_, err := Run(context.Background(), "for i in 1 2 3 4 5; do echo $i; sleep 0.02; done", o)
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
func TestOnOutputLeadingAndTrailingEdges(t *testing.T) { modes(t, testOnOutputLeadingAndTrailingEdges) }

func testOnOutputLeadingAndTrailingEdges(t *testing.T, o Options) {
	dir := t.TempDir()
	got := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// "one" then, in the same interval, "two"; then quiet until the
		// test has seen both.
		cmd := "echo one; echo two; while [ ! -e seen ]; do sleep 0.01; done"
		o.Cwd, o.Interval, o.OnOutput = dir, 30*time.Millisecond, func(s string) { got <- s }
		if _, err := Run(context.Background(), cmd, o); err != nil {
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

// Abort ends a group that ignores SIGTERM with SIGKILL after Grace, and
// Run returns only then: nothing it reported ended is still running
// (through the supervisor the group is gone when Run returns; started
// directly, it has had SIGKILL and is reaped in the background).
func TestCancelKillsTermIgnoringGroupAfterGrace(t *testing.T) {
	modes(t, testCancelKillsTermIgnoringGroupAfterGrace)
}

func testCancelKillsTermIgnoringGroupAfterGrace(t *testing.T, o Options) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		o.Cwd = dir
		r, _ := Run(ctx, termIgnoring+" & echo $! > child; wait", o)
		done <- r
	}()
	pgid := readPid(t, filepath.Join(dir, "pid"))
	child := readPid(t, filepath.Join(dir, "child"))
	start := time.Now()
	cancel()
	r := <-done
	took := time.Since(start)
	t.Logf("abort returned after %v", took)
	// A failure guard, not a measure: typically Grace plus a few ms.
	// Only the lower bound is checked: Run must not return before the
	// group was given its grace; a busy machine may take longer.
	if took < Grace {
		t.Fatalf("abort took %v (grace %v)", took, Grace)
	}
	if !r.Cancelled || r.Exited {
		t.Fatalf("got %+v", r)
	}
	if o.via != nil {
		for _, p := range []int{-pgid, child} {
			if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
				t.Fatalf("%d still there when Run returned: %v", p, err)
			}
		}
	}
	pgGone(t, pgid)
}

// KillAll kills every running group at once, however its members treat
// SIGTERM, and Wait then sees them reaped. Not parallel: KillAll would
// kill the other tests' commands.
func TestKillAllKillsRunningGroups(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testKillAll(t, Options{direct: true}) })
	t.Run("supervised", func(t *testing.T) {
		Use(testSup)
		defer Use(nil)
		testKillAll(t, Options{})
	})
}

func testKillAll(t *testing.T, o Options) {
	dirs := []string{t.TempDir(), t.TempDir()}
	done := make(chan Result, len(dirs))
	for _, dir := range dirs {
		go func() {
			o := o
			o.Cwd = dir
			// The escaped child leaves the group: only the supervisor kills it.
			r, _ := Run(context.Background(), "setsid sleep 60 & echo $! > escaped; "+termIgnoring, o)
			done <- r
		}()
	}
	var pgids, escaped []int
	for _, dir := range dirs {
		pgids = append(pgids, readPid(t, filepath.Join(dir, "pid")))
		escaped = append(escaped, readPid(t, filepath.Join(dir, "escaped")))
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
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := Wait(ctx); err != nil {
		t.Fatalf("reapers still running: %v", err)
	}
	for _, pgid := range pgids {
		pgGone(t, pgid)
	}
	if o.direct {
		for _, p := range escaped {
			_ = syscall.Kill(p, syscall.SIGKILL) // not ours to promise
		}
		return
	}
	for _, p := range escaped {
		if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("escaped child %d alive after KillAll and Wait: %v", p, err)
		}
	}
}

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuf) lines() int { return strings.Count(l.String(), "\n") }
