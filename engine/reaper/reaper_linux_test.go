package reaper

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentEnv makes the test binary a stand-in agent (agentMain): it starts
// the command in $REAPER_TEST_CMD under a reaper, prints the reaper's pid
// and waits to be killed.
const agentEnv = "REAPER_TEST_AGENT"

func TestMain(m *testing.M) {
	if IsReaper(os.Args) {
		os.Exit(Main())
	}
	if os.Getenv(agentEnv) != "" {
		os.Exit(agentMain())
	}
	Enable()
	os.Exit(m.Run())
}

func agentMain() int {
	Enable()
	cmd := exec.Command("sh", "-c", os.Getenv("REAPER_TEST_CMD"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Wrap(cmd, time.Second)
	if err := cmd.Start(); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Hour) // until killed (an empty select would be a deadlock the runtime ends)
	return 0
}

// escaper is a shell script that starts a grandchild which leaves its
// session and group and loses its parent, writing its pid to dir/gc.pid,
// and a child in its group writing dir/child.pid; then it runs rest.
func escaper(dir, rest string) string {
	return fmt.Sprintf(`cd %q
sleep 600 </dev/null >/dev/null 2>&1 &
echo $! > child.pid
(setsid sh -c 'echo $$ > gc.tmp; mv gc.tmp gc.pid; exec sleep 600' </dev/null >/dev/null 2>&1 &)
while [ ! -s gc.pid ]; do sleep 0.01; done
%s`, dir, rest)
}

// pidIn reads the pid a script wrote.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gone waits (10 s at most) until pid is dead (a zombie counts as dead).
func gone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i > 0 && strings.HasPrefix(s[i+1:], " Z") {
				return
			}
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) outlived what should have ended it", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func underReaper(t *testing.T, script string, grace time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	Wrap(cmd, grace)
	if cmd.Path != "/proc/self/exe" || cmd.SysProcAttr.Pdeathsig != 0 || len(cmd.ExtraFiles) != 1 {
		t.Fatalf("not wrapped: %s %q, pdeathsig %d", cmd.Path, cmd.Args, cmd.SysProcAttr.Pdeathsig)
	}
	return cmd
}

// When the program exits, what it left behind dies with it, in its group
// or detached; the reaper exits with the program's status.
func TestProgramExitEndsWhatItStarted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := underReaper(t, escaper(dir, "exit 3"), time.Second)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Run = %v, want exit status 3", err)
	}
	gone(t, "the child", pidIn(t, filepath.Join(dir, "child.pid")))
	gone(t, "the detached grandchild", pidIn(t, filepath.Join(dir, "gc.pid")))
}

// A program that dies of a signal: the reaper dies of the same one, so
// Wait reads what it would have read without the reaper.
func TestStatusBySignalMirrored(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGKILL} {
		cmd := underReaper(t, fmt.Sprintf("kill -%d $$", int(sig)), time.Second)
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: Run = %v", sig, err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig || ws.CoreDump() {
			t.Errorf("%v: the reaper ended with %v", sig, err)
		}
	}
}

// SIGTERM reaches the program's group through the reaper; a program that
// honours it exits with its own status. SIGKILL (sent as Signal's SIGUSR1)
// kills everything at once.
func TestSignals(t *testing.T) {
	t.Parallel()
	t.Run("term", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd := underReaper(t, escaper(dir, "trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done"), time.Minute)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n')
		Signal(cmd, syscall.SIGTERM)
		var ee *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
			t.Fatalf("Wait = %v, want exit status 7 (the trap's)", err)
		}
		gone(t, "the detached grandchild", pidIn(t, filepath.Join(dir, "gc.pid")))
	})
	t.Run("term ignored", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd := underReaper(t, escaper(dir, "trap '' TERM; echo ready; while :; do sleep 0.05; done"), 100*time.Millisecond)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n')
		Signal(cmd, syscall.SIGTERM) // the grace passes: everything is killed
		if err := cmd.Wait(); err == nil || err.Error() != "signal: killed" {
			t.Fatalf("Wait = %v, want signal: killed", err)
		}
		gone(t, "the child", pidIn(t, filepath.Join(dir, "child.pid")))
		gone(t, "the detached grandchild", pidIn(t, filepath.Join(dir, "gc.pid")))
	})
	t.Run("kill", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd := underReaper(t, escaper(dir, "trap '' TERM; echo ready; while :; do sleep 0.05; done"), time.Minute)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n')
		Signal(cmd, syscall.SIGKILL)
		if err := cmd.Wait(); err == nil || err.Error() != "signal: killed" {
			t.Fatalf("Wait = %v, want signal: killed", err)
		}
		gone(t, "the child", pidIn(t, filepath.Join(dir, "child.pid")))
		gone(t, "the detached grandchild", pidIn(t, filepath.Join(dir, "gc.pid")))
		Signal(cmd, syscall.SIGKILL) // after Wait: nothing to hit
	})
}

// The reaper keeps no copy of the program's stdin and stdout: the program
// sees its stdin close, and the agent sees its stdout close.
func TestStreamsPassThrough(t *testing.T) {
	t.Parallel()
	cmd := underReaper(t, "cat; echo done", time.Second)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, "hello\n")
	in.Close()
	b, err := io.ReadAll(out) // EOF only once every holder closed it
	if err != nil || string(b) != "hello\ndone\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A program that cannot be executed: the reaper says so on stderr and
// exits 127, as a shell would.
func TestExecFailure(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("\x00\x01 not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bad)
	Wrap(cmd, time.Second)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(stderr.String(), "xcsh: cannot start "+bad+": exec format error") {
		t.Fatalf("Run = %v, stderr %q", err, stderr.String())
	}
}

// An agent killed with SIGKILL: its reapers see the lifeline close and
// kill the program and all it started.
func TestAgentKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := exec.Command(os.Args[0])
	agent.Env = append(os.Environ(), agentEnv+"=1", "REAPER_TEST_CMD="+escaper(dir, "echo $$ > prog.pid; trap '' TERM HUP INT; while :; do sleep 0.05; done"))
	out, _ := agent.StdoutPipe()
	agent.Stderr = os.Stderr
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer agent.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	reaperPid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the agent said %q", line)
	}
	prog := pidIn(t, filepath.Join(dir, "prog.pid"))
	child, gc := pidIn(t, filepath.Join(dir, "child.pid")), pidIn(t, filepath.Join(dir, "gc.pid"))
	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	agent.Wait()
	gone(t, "the program", prog)
	gone(t, "the child", child)
	gone(t, "the detached grandchild", gc)
	gone(t, "the reaper", reaperPid)
}

// Disabled, or for a command that cannot start anyway, Wrap changes
// nothing.
func TestWrapLeavesAlone(t *testing.T) {
	cmd := exec.Command("no-such-program-xcsh-reaper")
	Wrap(cmd, time.Second)
	if cmd.Args[0] != "no-such-program-xcsh-reaper" || len(cmd.Args) != 1 {
		t.Errorf("a command that cannot start was wrapped: %q", cmd.Args)
	}
	cmd = exec.Command("true")
	cmd.ExtraFiles = []*os.File{os.Stdin}
	Wrap(cmd, time.Second)
	if len(cmd.Args) != 1 {
		t.Errorf("a command with extra files was wrapped: %q", cmd.Args)
	}
}
