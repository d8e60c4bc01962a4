package shellexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// agentEnv makes this test binary act as an agent that runs one command
// through a supervisor and then blocks (see TestMain and
// TestAgentSIGKILLLeavesNoOrphans).
const agentEnv = "SHELLEXEC_TEST_AGENT_DIR"

func init() {
	if dir := os.Getenv(agentEnv); dir != "" && !IsSupervisor(os.Args) {
		Use(NewSupervisor(SupervisorConfig{Required: true}))
		_, err := Run(context.Background(), "echo $$ > pid; sleep 60 & echo $! > child; setsid sleep 60 & echo $! > escaped; wait", Options{Cwd: dir})
		fmt.Fprintln(os.Stderr, "agent: Run returned:", err)
		os.Exit(3)
	}
}

// An agent killed with SIGKILL leaves nothing behind: the supervisor sees
// its control socket close and kills the command's group and the child
// that left it (issue 15, S8).
func TestAgentSIGKILLLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := exec.Command(os.Args[0])
	agent.Env = append(os.Environ(), agentEnv+"="+dir)
	agent.Stderr = os.Stderr
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, f := range []string{"pid", "child", "escaped"} {
		pids[f] = readPid(t, filepath.Join(dir, f))
	}
	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	for name, pid := range pids {
		deadline := time.Now().Add(5 * time.Second)
		for {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				break
			}
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("%s (%d) outlived the agent", name, pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// A supervisor that cannot start is an error when required, and a
// fallback to direct starts (said once) when not.
func TestSupervisorUnavailable(t *testing.T) {
	t.Parallel()
	bad := SupervisorConfig{Path: filepath.Join(t.TempDir(), "missing")}
	req := bad
	req.Required = true
	if _, err := Run(context.Background(), "echo hi", Options{via: NewSupervisor(req)}); err == nil {
		t.Fatal("a required supervisor that cannot start ran the command")
	}
	var log logBuf
	bad.Log = &log
	s := NewSupervisor(bad)
	for range 2 {
		r, err := Run(context.Background(), "echo hi", Options{via: s})
		if err != nil || r.Output != "hi\n" {
			t.Fatalf("fallback: %+v %v", r, err)
		}
	}
	if n := log.lines(); n != 1 {
		t.Fatalf("fallback said %d times:\n%s", n, log.String())
	}
}

// The supervisor's own start reports what it applied.
func TestSupervisorStartReportsInfo(t *testing.T) {
	t.Parallel()
	s := NewSupervisor(SupervisorConfig{Required: true})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), "echo $PPID", Options{via: s})
	if err != nil {
		t.Fatal(err)
	}
	ppid, _ := strconv.Atoi(string(r.Output[:len(r.Output)-1]))
	if ppid == os.Getpid() || ppid <= 1 {
		t.Fatalf("the command's parent is %d, not the supervisor", ppid)
	}
}

// BenchmarkStart measures what a command start costs through each
// launcher: `true` in bash, from Run's call to its return.
func BenchmarkStart(b *testing.B) {
	for _, m := range []struct {
		name string
		o    Options
	}{{"direct", Options{direct: true}}, {"supervised", Options{via: testSup}}} {
		b.Run(m.name, func(b *testing.B) {
			if _, err := Run(context.Background(), "true", m.o); err != nil { // warm: the supervisor starts once
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := Run(context.Background(), "true", m.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
