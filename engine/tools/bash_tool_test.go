package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

func TestBash(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"sub/f.txt": "in sub\n", "plain": "x"})
	bash := NewBash(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"output", `{"command":"echo hello"}`, "hello", false},
		{"stderr merged", `{"command":"echo out; echo err >&2"}`, "out\nerr", false},
		{"exit code", `{"command":"echo out; exit 3"}`, "out\n\nCommand exited with code 3", true},
		{"no output", `{"command":"true"}`, "(no output)", false},
		{"leading cd", `{"command":"cd sub && cat f.txt"}`, "in sub", false},
		{"cwd param", `{"command":"pwd","cwd":"sub"}`, filepath.Join(dir, "sub"), false},
		{"missing cwd", `{"command":"pwd","cwd":"nope"}`, "Working directory does not exist: " + filepath.Join(dir, "nope"), true},
		{"cwd not a dir", `{"command":"pwd","cwd":"plain"}`, "Working directory is not a directory: " + filepath.Join(dir, "plain"), true},
		{"env", `{"command":"echo $GREETING","env":{"GREETING":"hi there"}}`, "hi there", false},
		{"bad env name", `{"command":"true","env":{"1BAD":"x"}}`, "Invalid bash env name: 1BAD", true},
		{"non-interactive env", `{"command":"echo $PAGER $CI $TERM $GIT_TERMINAL_PROMPT"}`, "cat 1 dumb 0", false},
		{"head", `{"command":"seq 1 10","head":2}`, "1\n2", false},
		{"tail", `{"command":"seq 1 10","tail":3}`, "8\n9\n10", false},
		{"empty command", `{"command":"  "}`, "Invalid bash arguments: command must be a non-empty string", true},
		{"stdin is empty", `{"command":"cat; echo done"}`, "done", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, bash, tt.args), tt.want, tt.isErr, false)
		})
	}
}

func TestBashDetails(t *testing.T) {
	t.Parallel()
	res := call(t, NewBash(Options{Cwd: t.TempDir()}), `{"command":"printf 'a\\nb\\n'; exit 2","timeout":99999}`)
	d := details(t, res)
	// The timeout is clamped to 3600 s.
	if d["timeoutSeconds"] != 3600.0 || d["exitCode"] != 2.0 || d["totalLines"] != 2.0 || d["totalBytes"] != 4.0 || d["truncated"] != false {
		t.Errorf("details %v", d)
	}
}

func TestBashTailTruncation(t *testing.T) {
	t.Parallel()
	// 20,000 lines of 6 bytes: the last 8,533 whole lines fit in 50 KB.
	res := call(t, NewBash(Options{Cwd: t.TempDir()}), `{"command":"seq -f '%05g' 1 20000"}`)
	got := text(res)
	if !strings.HasSuffix(got, "\n19999\n20000\n\n[Showing lines 11468-20000 of 20000 (50.0KB limit)]") {
		t.Errorf("tail %q", got[len(got)-80:])
	}
	if d := details(t, res); d["truncated"] != true || d["totalLines"] != 20000.0 || d["totalBytes"] != 120000.0 {
		t.Errorf("details %v", d)
	}
}

func TestBashTimeout(t *testing.T) {
	t.Parallel()
	res := call(t, NewBash(Options{Cwd: t.TempDir()}), `{"command":"echo started; sleep 30","timeout":0.2}`)
	// 0.2 is clamped to the minimum of 1 s.
	wantText(t, res, "[Command timed out after 1 seconds]\nstarted", true, false)
	if _, ok := details(t, res)["exitCode"]; ok {
		t.Errorf("a timed-out command has no exit code: %s", res.Details)
	}
}

// pidAlive reports whether a process exists (signal 0 probes it).
func pidAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestBashAbortKillsTheWholeProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res engine.ToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := NewBash(Options{Cwd: dir}).Run(ctx, engine.ToolCall{Arguments: []byte(`{"command":"sleep 1000 & echo $! > child.pid; wait"}`)}, nil)
		done <- out{res, err}
	}()
	pidFile := filepath.Join(dir, "child.pid")
	pid := 0
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never wrote its child's pid")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !pidAlive(pid) {
		t.Fatalf("child %d not running before the abort", pid)
	}
	cancel()
	o := <-done
	if o.err != nil || !o.res.IsError || text(o.res) != "Command aborted" {
		t.Errorf("abort result %q %v", text(o.res), o.err)
	}
	// The kill is immediate; allow the kernel a bounded moment to reap.
	for deadline := time.Now().Add(5 * time.Second); pidAlive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the abort", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBashAlreadyCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := NewBash(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"command":"touch ran"}`)}, nil)
	if err != nil || text(res) != "Command aborted" || !res.IsError {
		t.Errorf("%q %v", text(res), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a cancelled call must not run the command")
	}
}

func TestBashStreamsUpdates(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var updates []string
	update := func(r engine.ToolResult) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, text(r))
	}
	// The command waits until it has been seen streaming, so the test
	// does not depend on how fast the machine is.
	dir := t.TempDir()
	flag := filepath.Join(dir, "seen")
	cmd := fmt.Sprintf(`echo first; for i in $(seq 1 500); do [ -e %q ] && break; sleep 0.01; done; echo last`, flag)
	done := make(chan engine.ToolResult, 1)
	go func() {
		res, _ := NewBash(Options{Cwd: dir, StreamInterval: 10 * time.Millisecond}).Run(context.Background(),
			engine.ToolCall{Arguments: []byte(fmt.Sprintf(`{"command":%q}`, cmd))}, update)
		done <- res
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		mu.Lock()
		n := len(updates)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no streamed update")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-done
	wantText(t, res, "first\nlast", false, false)
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(updates[0], "first") {
		t.Errorf("first update %q", updates[0])
	}
}
