package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// waitUntil polls cond every few milliseconds until it holds, failing the
// test after limit: a bound on a wait, not a timing assertion.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// processGone reports whether pid has exited: no such process, or a zombie
// waiting for a reaper (it runs no code any more).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...; comm may hold spaces, so split after the ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// readPid waits for the command under test to write a pid (and newline)
// into file.
func readPid(t *testing.T, file string) int {
	t.Helper()
	pid := 0
	waitUntil(t, 10*time.Second, "the command to write its child's pid", func() bool {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

type bashOutcome struct {
	res engine.ToolResult
	err error
}

// startBash runs a bash call in the background.
func startBash(ctx context.Context, o Options, args string, update func(engine.ToolResult)) <-chan bashOutcome {
	done := make(chan bashOutcome, 1)
	go func() {
		res, err := NewBash(o).Run(ctx, engine.ToolCall{ID: "b1", Name: "bash", Arguments: []byte(args)}, update)
		done <- bashOutcome{res, err}
	}()
	return done
}

func awaitBash(t *testing.T, done <-chan bashOutcome) engine.ToolResult {
	t.Helper()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("bash returned a Go error: %v", o.err)
		}
		return o.res
	case <-time.After(30 * time.Second):
		t.Fatal("bash did not return")
	}
	return engine.ToolResult{}
}

func TestBashResults(t *testing.T) {
	t.Parallel()
	bash := NewBash(Options{Cwd: t.TempDir()})
	tests := []struct {
		name, args, want string
		isErr            bool
		exitCode         any // details.exitCode; nil: absent
	}{
		{"output", `{"command":"echo hello"}`, "hello", false, 0.0},
		{"several lines, final newline dropped", `{"command":"printf 'a\\nb\\n'"}`, "a\nb", false, 0.0},
		{"stderr merged in order", `{"command":"echo 1; echo 2 >&2; echo 3"}`, "1\n2\n3", false, 0.0},
		{"stderr only", `{"command":"echo oops >&2"}`, "oops", false, 0.0},
		{"no output", `{"command":"true"}`, "(no output)", false, 0.0},
		{"non-zero exit", `{"command":"echo out; exit 3"}`, "out\n\nCommand exited with code 3", true, 3.0},
		{"non-zero exit without output", `{"command":"exit 1"}`, "(no output)\n\nCommand exited with code 1", true, 1.0},
		{"failing command's stderr", `{"command":"echo nope >&2; false"}`, "nope\n\nCommand exited with code 1", true, 1.0},
		{"killed by a signal: no exit status", `{"command":"kill -9 $$"}`, "(no output)\n\nCommand failed: missing exit status", true, nil},
		{"stdin is closed", `{"command":"cat; echo after"}`, "after", false, 0.0},
		{"invalid UTF-8 is replaced", `{"command":"printf 'a\\377b'"}`, "a\uFFFDb", false, 0.0},
		{"empty command", `{"command":""}`, "Invalid bash arguments: command must be a non-empty string", true, nil},
		{"missing command", `{}`, "Invalid bash arguments: command must be a non-empty string", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, bash, tt.args)
			wantText(t, res, tt.want, tt.isErr, false)
			if strings.HasPrefix(tt.want, "Invalid") {
				return
			}
			if got := details(t, res)["exitCode"]; got != tt.exitCode {
				t.Errorf("exitCode %v, want %v (%s)", got, tt.exitCode, res.Details)
			}
		})
	}
	res := call(t, bash, `{"command":5}`)
	if !res.IsError || !strings.HasPrefix(text(res), "Invalid bash arguments: ") {
		t.Errorf("wrong type: %q", text(res))
	}
}

func TestBashTimeoutClamp(t *testing.T) {
	t.Parallel()
	bash := NewBash(Options{Cwd: t.TempDir()})
	for _, tt := range []struct {
		timeout string // JSON, "" for absent
		want    float64
	}{
		{"", 300}, {"-5", 1}, {"0", 1}, {"0.5", 1}, {"1", 1}, {"10.9", 10}, {"3600", 3600}, {"5000", 3600},
	} {
		args := `{"command":"true"}`
		if tt.timeout != "" {
			args = fmt.Sprintf(`{"command":"true","timeout":%s}`, tt.timeout)
		}
		res := call(t, bash, args)
		if d := details(t, res); res.IsError || d["timeoutSeconds"] != tt.want || d["exitCode"] != 0.0 {
			t.Errorf("timeout %q: %q %s, want timeoutSeconds %v", tt.timeout, text(res), res.Details, tt.want)
		}
	}
}

func TestBashTimeoutKillsTheCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// timeout 0.1 is clamped to 1 s; the background child must die too.
	res := call(t, NewBash(Options{Cwd: dir}), `{"command":"echo started; sleep 1000 & echo $! > pid; wait","timeout":0.1}`)
	if got := text(res); !strings.HasPrefix(got, "[Command timed out after 1 seconds]") || !strings.Contains(got, "started") || !res.IsError {
		t.Errorf("result %q isError=%v", got, res.IsError)
	}
	d := details(t, res)
	if _, ok := d["exitCode"]; ok || d["timeoutSeconds"] != 1.0 {
		t.Errorf("details %s", res.Details)
	}
	pid := readPid(t, filepath.Join(dir, "pid"))
	waitUntil(t, 10*time.Second, fmt.Sprintf("child %d to die after the timeout", pid), func() bool { return processGone(pid) })
}

// TestBashAbortLeavesNoChild proves that cancelling a call kills the
// whole process tree, not just bash: the background sleep must be gone.
func TestBashAbortLeavesNoChild(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, command string }{
		{"background child", `sleep 1000 & echo $! > pid; wait`},
		{"child in a subshell", `( sleep 1000 & echo $! > pid; wait ); echo unreachable`},
		{"everything ignores SIGTERM", `trap '' TERM; sleep 1000 & echo $! > pid; wait`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := startBash(ctx, Options{Cwd: dir}, fmt.Sprintf(`{"command":%q}`, tt.command), nil)
			pid := readPid(t, filepath.Join(dir, "pid"))
			if processGone(pid) {
				t.Fatalf("child %d not running before the abort", pid)
			}
			cancel()
			res := awaitBash(t, done)
			wantText(t, res, "Command aborted", true, false)
			if _, ok := details(t, res)["exitCode"]; ok {
				t.Errorf("an aborted command has no exit code: %s", res.Details)
			}
			waitUntil(t, 10*time.Second, fmt.Sprintf("child %d to die after the abort", pid), func() bool { return processGone(pid) })
		})
	}
}

func TestBashAbortKeepsOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := startBash(ctx, Options{Cwd: dir}, `{"command":"echo partial; touch ready; sleep 1000"}`, nil)
	waitUntil(t, 10*time.Second, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ready"))
		return err == nil
	})
	cancel()
	wantText(t, awaitBash(t, done), "partial\n\nCommand aborted", true, false)

	// A call whose context is already done runs nothing.
	res, err := NewBash(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"command":"touch ran"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, res, "Command aborted", true, false)
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a cancelled call ran its command")
	}
}

func TestBashBackgroundChildReaped(t *testing.T) {
	t.Parallel()
	// A command that leaves a daemon behind succeeds, and the daemon is
	// killed with the rest of the process group when the call ends.
	dir := t.TempDir()
	res := call(t, NewBash(Options{Cwd: dir}), `{"command":"sleep 1000 >/dev/null 2>&1 & echo $! > pid; echo launched"}`)
	wantText(t, res, "launched", false, false)
	pid := readPid(t, filepath.Join(dir, "pid"))
	waitUntil(t, 10*time.Second, fmt.Sprintf("background child %d to die", pid), func() bool { return processGone(pid) })
}

func TestBashWorkingDirectory(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"sub/f.txt": "in sub\n", "with space/g.txt": "spaced\n", "a/b/": "", "plain": "x"})
	bash := NewBash(Options{Cwd: dir})
	j := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"default is the session's", `{"command":"pwd"}`, dir, false},
		{"leading cd becomes the cwd", `{"command":"cd sub && pwd"}`, j("sub"), false},
		{"leading cd, then a relative path", `{"command":"cd sub && cat f.txt"}`, "in sub", false},
		{"leading cd with a double-quoted dir", `{"command":"cd \"with space\" && cat g.txt"}`, "spaced", false},
		{"leading cd with a single-quoted dir", `{"command":"cd 'with space' && pwd"}`, j("with space"), false},
		{"leading cd without spaces around &&", `{"command":"  cd sub&&pwd"}`, j("sub"), false},
		{"leading cd to an absolute dir", fmt.Sprintf(`{"command":"cd %s && pwd"}`, j("a")), j("a"), false},
		{"leading cd to a missing dir", `{"command":"cd nope && pwd"}`, "Working directory does not exist: " + j("nope"), true},
		{"cd with ; is left to the shell", `{"command":"cd sub; pwd"}`, j("sub"), false},
		{"cwd param", `{"command":"pwd","cwd":"sub"}`, j("sub"), false},
		{"cwd param wins; the cd runs in the shell", `{"command":"cd b && pwd","cwd":"a"}`, j("a", "b"), false},
		{"absolute cwd param", fmt.Sprintf(`{"command":"pwd","cwd":%q}`, j("a", "b")), j("a", "b"), false},
		{"missing cwd", `{"command":"pwd","cwd":"nope"}`, "Working directory does not exist: " + j("nope"), true},
		{"cwd is a file", `{"command":"pwd","cwd":"plain"}`, "Working directory is not a directory: " + j("plain"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, bash, tt.args), tt.want, tt.isErr, false)
		})
	}
}

func TestBashEnvironment(t *testing.T) {
	t.Parallel()
	bash := NewBash(Options{Cwd: t.TempDir()})
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"env passed", `{"command":"echo \"$FOO\"","env":{"FOO":"bar  baz"}}`, "bar  baz", false},
		{"several", `{"command":"echo $A$B","env":{"A":"1","B":"2"}}`, "12", false},
		{"env overrides the overlay", `{"command":"echo $PAGER","env":{"PAGER":"less"}}`, "less", false},
		{"underscore and digits", `{"command":"echo $_X9","env":{"_X9":"ok"}}`, "ok", false},
		{"non-interactive overlay",
			`{"command":"echo \"$PAGER|$GIT_PAGER|$TERM|$NO_COLOR|$CI|$GIT_TERMINAL_PROMPT|$EDITOR|$DEBIAN_FRONTEND|$PIP_NO_INPUT\""}`,
			"cat|cat|dumb|1|1|0|true|noninteractive|1", false},
		{"name starting with a digit", `{"command":"true","env":{"1BAD":"x"}}`, "Invalid bash env name: 1BAD", true},
		{"name with a dash", `{"command":"true","env":{"A-B":"x"}}`, "Invalid bash env name: A-B", true},
		{"name with a space", `{"command":"true","env":{"A B":"x"}}`, "Invalid bash env name: A B", true},
		{"empty name", `{"command":"true","env":{"":"x"}}`, "Invalid bash env name: ", true},
		{"name with =", `{"command":"true","env":{"A=B":"x"}}`, "Invalid bash env name: A=B", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, bash, tt.args), tt.want, tt.isErr, false)
		})
	}
}

func TestBashHeadTail(t *testing.T) {
	t.Parallel()
	bash := NewBash(Options{Cwd: t.TempDir()})
	tests := []struct{ extra, want string }{
		{`,"head":3`, "1\n2\n3"},
		{`,"tail":2`, "9\n10"},
		{`,"head":5,"tail":2`, "4\n5"},
		{`,"head":100`, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"},
		{`,"tail":10`, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"},
		{`,"head":0,"tail":0`, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"},
	}
	for _, tt := range tests {
		t.Run(tt.extra, func(t *testing.T) {
			t.Parallel()
			res := call(t, bash, `{"command":"seq 1 10"`+tt.extra+`}`)
			wantText(t, res, tt.want, false, false)
			// details describe the whole output, not the filtered view.
			if d := details(t, res); d["totalLines"] != 10.0 || d["totalBytes"] != 21.0 {
				t.Errorf("details %s", res.Details)
			}
		})
	}
	wantText(t, call(t, bash, `{"command":"seq 1 10; exit 4","tail":1}`), "10\n\nCommand exited with code 4", true, false)
}

func TestBashTruncationNotice(t *testing.T) {
	t.Parallel()
	// Line i of seq's output is i, so the first kept line must be the
	// notice's start line.
	res := call(t, NewBash(Options{Cwd: t.TempDir()}), `{"command":"seq 1 30000"}`)
	got := text(res)
	m := regexp.MustCompile(`\n\n\[Showing lines (\d+)-(\d+) of (\d+) \(50\.0KB limit\)\]$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no truncation notice at the end of %q", got[max(0, len(got)-120):])
	}
	kept := strings.Split(strings.TrimSuffix(got, m[0]), "\n")
	if m[2] != "30000" || m[3] != "30000" || kept[0] != m[1] || kept[len(kept)-1] != "30000" {
		t.Errorf("notice %q, kept lines %s..%s", m[0], kept[0], kept[len(kept)-1])
	}
	if start, _ := strconv.Atoi(m[1]); len(kept) != 30000-start+1 {
		t.Errorf("notice says %s-30000 but %d lines kept", m[1], len(kept))
	}
	if n := len(strings.Join(kept, "\n")); n > DefaultMaxBytes {
		t.Errorf("kept %d bytes, over the 50KB window", n)
	}
	if d := details(t, res); d["truncated"] != true || d["totalLines"] != 30000.0 || d["exitCode"] != 0.0 || res.IsError {
		t.Errorf("details %s", res.Details)
	}
	// Short output is not truncated and has no notice.
	small := call(t, NewBash(Options{Cwd: t.TempDir()}), `{"command":"seq 1 100"}`)
	if strings.Contains(text(small), "[Showing") || details(t, small)["truncated"] != false {
		t.Errorf("small output: %q %s", text(small)[:20], small.Details)
	}
}

func TestBashStreamedUpdates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	var updates []engine.ToolResult
	update := func(r engine.ToolResult) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, r)
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(updates)
	}
	// The command holds until the test has seen an update, so nothing
	// depends on how fast the machine is (it gives up after ~10 s).
	gate := filepath.Join(dir, "go-on")
	cmd := fmt.Sprintf(`echo first; i=0; while [ ! -e %q ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; echo second`, gate)
	done := startBash(context.Background(), Options{Cwd: dir, StreamInterval: 20 * time.Millisecond}, fmt.Sprintf(`{"command":%q}`, cmd), update)
	waitUntil(t, 10*time.Second, "a streamed update", func() bool { return count() > 0 })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := awaitBash(t, done)
	wantText(t, res, "first\nsecond", false, false)
	mu.Lock()
	defer mu.Unlock()
	first := updates[0]
	if !strings.HasPrefix(text(first), "first") || string(first.Details) != "{}" || first.IsError {
		t.Errorf("first update %q %s", text(first), first.Details)
	}
}

func TestBashNoUpdatesWithoutStreaming(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := 0
	res, err := NewBash(Options{Cwd: dir}).Run(context.Background(),
		engine.ToolCall{Arguments: []byte(`{"command":"echo one; echo two"}`)}, func(engine.ToolResult) { calls++ })
	if err != nil || calls != 0 {
		t.Errorf("StreamInterval 0: %d updates, err %v", calls, err)
	}
	wantText(t, res, "one\ntwo", false, false)
	// Streaming on but no callback: nothing to call, nothing breaks.
	res, err = NewBash(Options{Cwd: dir, StreamInterval: time.Millisecond}).Run(context.Background(),
		engine.ToolCall{Arguments: []byte(`{"command":"echo one"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, res, "one", false, false)
}

// TestBashTraceParent: under a traced call the command finds the call's
// traceparent in TRACEPARENT; a model's own value wins; untraced, the
// variable is whatever the agent's environment had.
func TestBashTraceParent(t *testing.T) {
	t.Setenv("TRACEPARENT", "")
	bash := NewBash(Options{Cwd: t.TempDir()})
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traced := engine.WithTraceParent(context.Background(), tp)
	for _, c := range []struct {
		ctx        context.Context
		args, want string
	}{
		{traced, `{"command":"echo \"[$TRACEPARENT]\""}`, "[" + tp + "]"},
		{traced, `{"command":"echo \"[$TRACEPARENT]\"","env":{"TRACEPARENT":"mine"}}`, "[mine]"},
		{traced, `{"command":"echo \"[$TRACEPARENT][$A]\"","env":{"A":"1"}}`, "[" + tp + "][1]"},
		{context.Background(), `{"command":"echo \"[$TRACEPARENT]\""}`, "[]"},
	} {
		res, err := bash.Run(c.ctx, engine.ToolCall{ID: "c1", Name: "bash", Arguments: []byte(c.args)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantText(t, res, c.want, false, false)
	}
}
