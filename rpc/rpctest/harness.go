package rpctest

// The per-script state of the harness, its Setup, and the rpc command.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"
)

// GoldenDirEnv names the variable that tells the golden command where the
// golden directory is; scripts run in a temporary $WORK, so a relative path
// would not do. Setup sets it from its goldenDir argument.
const GoldenDirEnv = "XCSH_GOLDEN_DIR"

// Params returns testscript parameters that run every script in dir with
// the harness: Setup(goldenDir, setup...) and Commands. Callers may set
// more fields (Files, WorkdirRoot, more Cmds) on the result.
func Params(dir, goldenDir string, setup ...func(*testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir: dir,
		// Only rewrites cmp targets that live inside a txtar; goldens are
		// refreshed through GOLDIE_UPDATE.
		UpdateScripts: envTruthy("UPDATE_SCRIPTS"),
		Setup:         Setup(goldenDir, setup...),
		Cmds:          Commands(),
	}
}

// Setup returns a testscript Setup function that gives each script a
// private home, the deterministic switch and $XCSH_GOLDEN_DIR (goldenDir,
// made absolute), runs the extra setup functions in order (they may
// override those variables), and then creates the per-script state of the
// harness commands. The scripts run with one returned function share golden
// names: two of them may not write the same golden.
func Setup(goldenDir string, setup ...func(*testscript.Env) error) func(*testscript.Env) error {
	claims := newGoldenClaims()
	// Absolute, because scripts run in $WORK: a relative $XCSH_GOLDEN_DIR
	// would name a directory there. A test runs in its package's directory.
	if abs, err := filepath.Abs(goldenDir); err == nil {
		goldenDir = abs
	}
	return func(env *testscript.Env) error {
		return setupScript(env, goldenDir, claims, setup)
	}
}

// Commands returns the harness commands (rpc, frames, golden, waitfile,
// pidgone) for testscript.Params.Cmds. They need the per-script state that
// Setup creates.
func Commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"rpc":      scriptRPC,
		"frames":   scriptFrames,
		"golden":   scriptGolden,
		"waitfile": scriptWaitFile,
		"pidgone":  scriptPidGone,
		"epipe":    scriptEPIPE,
	}
}

func setupScript(env *testscript.Env, goldenDir string, claims *goldenClaims, setup []func(*testscript.Env) error) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o777); err != nil {
		return err
	}
	env.Setenv("XCSH_DETERMINISTIC", "1")
	env.Setenv("HOME", home)
	env.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, ".xcsh", "agent"))
	env.Setenv(GoldenDirEnv, goldenDir)
	if os.Getenv("GORACE") == "" {
		// Under -race the installed commands are race-enabled too, and by
		// default each clean exit sleeps a second to catch late reports.
		env.Setenv("GORACE", "atexit_sleep_ms=10")
	}
	for _, f := range setup {
		if err := f(env); err != nil {
			return err
		}
	}

	// testscript does not expose the script's environment, only Getenv, so
	// remember the names known now and read their current values at each
	// `rpc start`.
	seen := make(map[string]bool)
	var keys []string
	for _, kv := range env.Vars {
		k, _, ok := strings.Cut(kv, "=")
		if ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	env.Values[harnessKey{}] = &harness{
		t:            env.T(),
		envKeys:      keys,
		procs:        make(map[string]*liveProc),
		claims:       claims,
		waitTimeout:  10 * time.Second,
		closeTimeout: 20 * time.Second,
	}
	return nil
}

// envTruthy reports whether the test process's variable key is set to a
// true value, with goldie's spelling of "true" so GOLDIE_UPDATE means the
// same thing to goldie and to us.
func envTruthy(key string) bool {
	switch strings.ToLower(os.Getenv(key)) {
	case "1", "true", "t":
		return true
	}
	return false
}

// harnessKey is the testscript Env.Values key of a script's *harness.
type harnessKey struct{}

// harness is the state of the harness commands for one script. testscript
// runs scripts in parallel, so nothing lives in package variables; a
// script's commands run one at a time on its goroutine, so the fields need
// no lock (each liveProc guards what its own goroutines touch).
type harness struct {
	t       testscript.T // the script's subtest, for goldie
	envKeys []string     // variables known after Setup, passed to rpc start
	procs   map[string]*liveProc
	claims  *goldenClaims

	waitTimeout  time.Duration // rpc wait's default bound
	closeTimeout time.Duration // how long rpc close waits for an exit before killing
}

func harnessOf(ts *testscript.TestScript) *harness {
	h, _ := ts.Value(harnessKey{}).(*harness)
	if h == nil {
		ts.Fatalf("harness state missing: run scripts with rpctest.Params or rpctest.Setup")
	}
	return h
}

const rpcUsage = `usage:
	rpc start   [--name N] [KEY=VALUE...] program [args...]
	rpc send    [--name N] 'json line'
	rpc sendraw [--name N] 'text with Go escapes (\n \r \xNN \uNNNN)'
	rpc sendfile [--name N] file              (the file's bytes, as they are)
	rpc dump    [--name N] [--stderr] file    (the stdout, or stderr, so far)
	rpc wait    [--name N] 'gjson query' [timeout]
	rpc poll    [--name N] 'json line with an id' 'gjson query' [timeout]
	rpc expect  [--name N] 'gjson query'
	rpc signal  [--name N] INT|TERM|HUP|QUIT|KILL
	rpc eof     [--name N]                    (close the child's stdin; it runs on)
	rpc close   [--name N] [--expect-exit N | --expect-signal SIG] [file]
	rpc replay  [--name N] NAME [FILE...]     (after close: golden/replay/NAME.jsonl)`

// scriptRPC implements the rpc command: it drives one or more live
// processes per script, each known by a name ("default" unless --name).
func scriptRPC(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("%s", rpcUsage)
	}
	sub, args := args[0], args[1:]
	name, args := cutNameFlag(ts, args)
	if neg && sub != "expect" {
		if sub == "wait" {
			ts.Fatalf("! rpc wait is not supported: a frame that has not arrived may still arrive; wait for a later frame, then use ! rpc expect")
		}
		ts.Fatalf("! rpc %s is not supported", sub)
	}
	switch sub {
	case "start", "send", "sendraw", "sendfile", "dump", "wait", "poll", "expect", "signal", "close", "eof", "replay":
	default:
		ts.Fatalf("rpc: unknown subcommand %q\n%s", sub, rpcUsage)
	}
	h := harnessOf(ts)
	if sub == "start" {
		h.start(ts, name, args)
		return
	}
	p := h.procs[name]
	if p == nil {
		ts.Fatalf("rpc %s: no process named %q; start one with rpc start", sub, name)
	}
	p.rec.note(ts, sub, args, p.cursor) // for rpc replay (replay.go)
	switch sub {
	case "eof":
		if len(args) != 0 {
			ts.Fatalf("usage: rpc eof [--name N]")
		}
		// A second Close (at rpc close) is harmless.
		p.stdin.Close()
	case "send":
		if len(args) != 1 {
			ts.Fatalf("usage: rpc send [--name N] 'json line' (quote the line with single quotes)")
		}
		p.write(ts, []byte(args[0]+"\n"))
	case "sendraw":
		if len(args) != 1 {
			ts.Fatalf("usage: rpc sendraw [--name N] 'text' (quote the text with single quotes)")
		}
		b, err := unescapeGo(args[0])
		if err != nil {
			ts.Fatalf("rpc sendraw: %v", err)
		}
		p.write(ts, b)
	case "sendfile":
		// A line built by an earlier command (from a value only known
		// then, such as a cursor in a frame received).
		if len(args) != 1 {
			ts.Fatalf("usage: rpc sendfile [--name N] file")
		}
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		if err != nil {
			ts.Fatalf("rpc sendfile: %v", err)
		}
		p.write(ts, b)
	case "dump":
		// What has arrived so far, for a command to read while the
		// process runs on.
		out := p.out.bytes
		if len(args) == 2 && args[0] == "--stderr" {
			out, args = func() []byte { return []byte(p.errOut.String()) }, args[1:]
		}
		if len(args) != 1 {
			ts.Fatalf("usage: rpc dump [--name N] [--stderr] file")
		}
		if err := os.WriteFile(ts.MkAbs(args[0]), out(), 0o666); err != nil {
			ts.Fatalf("rpc dump: %v", err)
		}
	case "wait":
		timeout := h.waitTimeout
		switch len(args) {
		case 2:
			d, err := time.ParseDuration(args[1])
			if err != nil || d <= 0 {
				ts.Fatalf("rpc wait: bad timeout %q (want a duration like 5s)", args[1])
			}
			timeout = d
		case 1:
		default:
			ts.Fatalf("usage: rpc wait [--name N] 'gjson query' [timeout]")
		}
		p.wait(ts, args[0], timeout)
	case "poll":
		timeout := h.waitTimeout
		switch len(args) {
		case 3:
			d, err := time.ParseDuration(args[2])
			if err != nil || d <= 0 {
				ts.Fatalf("rpc poll: bad timeout %q (want a duration like 5s)", args[2])
			}
			timeout = d
		case 2:
		default:
			ts.Fatalf("usage: rpc poll [--name N] 'json line with an id' 'gjson query' [timeout]")
		}
		p.poll(ts, args[0], args[1], timeout)
	case "expect":
		if len(args) != 1 {
			ts.Fatalf("usage: [!] rpc expect [--name N] 'gjson query'")
		}
		p.expect(ts, neg, args[0])
	case "signal":
		if len(args) != 1 {
			ts.Fatalf("usage: rpc signal [--name N] INT|TERM|HUP|QUIT|KILL")
		}
		sig, err := parseScriptSignal(args[0])
		if err != nil {
			ts.Fatalf("rpc signal: %v", err)
		}
		if p.closed {
			ts.Fatalf("rpc signal: process %q is already closed", name)
		}
		if err := p.cmd.Process.Signal(sig); err != nil {
			ts.Fatalf("rpc signal: %v", err)
		}
	case "close":
		h.close(ts, p, args)
	case "replay":
		h.replayGolden(ts, p, args)
	}
}

// cutNameFlag removes a leading --name N (or --name=N) from args.
func cutNameFlag(ts *testscript.TestScript, args []string) (string, []string) {
	name := "default"
	switch {
	case len(args) > 0 && args[0] == "--name":
		if len(args) < 2 {
			ts.Fatalf("rpc: --name needs a value")
		}
		name, args = args[1], args[2:]
	case len(args) > 0 && strings.HasPrefix(args[0], "--name="):
		name, args = strings.TrimPrefix(args[0], "--name="), args[1:]
	}
	if name == "" || strings.ContainsAny(name, `/\`) {
		ts.Fatalf("rpc: bad process name %q", name)
	}
	return name, args
}

// procOutputBase is the stem of the files rpc close writes for a process.
func procOutputBase(name string) string {
	if name == "default" {
		return "rpc"
	}
	return "rpc-" + name
}

func (h *harness) start(ts *testscript.TestScript, name string, args []string) {
	if p := h.procs[name]; p != nil && !p.closed {
		ts.Fatalf("rpc start: process %q is still running; rpc close it or pick another --name", name)
	}
	// Leading KEY=VALUE words add to the environment, because variables set
	// with the env command after Setup cannot be enumerated (see setupScript).
	var extra []string
	for len(args) > 0 && isEnvAssignment(args[0]) {
		extra, args = append(extra, args[0]), args[1:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: rpc start [--name N] [KEY=VALUE...] program [args...]")
	}
	path, err := scriptLookPath(ts, args[0])
	if err != nil {
		ts.Fatalf("rpc start: %v", err)
	}
	dir := ts.MkAbs(".")
	env := make([]string, 0, len(h.envKeys)+len(extra)+1)
	for _, k := range h.envKeys {
		env = append(env, k+"="+ts.Getenv(k))
	}
	env = append(env, "PWD="+dir)
	env = append(env, extra...)

	p, err := startProc(name, path, args[1:], dir, env)
	if err != nil {
		ts.Fatalf("rpc start: %v", err)
	}
	p.rec = newRecording(ts.Getenv("WORK"), dir, args[0], args[1:], extra)
	h.procs[name] = p
	ts.Defer(func() { p.stop(ts) })
}

// isEnvAssignment reports whether w looks like KEY=VALUE with an identifier KEY.
func isEnvAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for i, c := range k {
		if c != '_' && !('A' <= c && c <= 'Z') && !('a' <= c && c <= 'z') && (i == 0 || !('0' <= c && c <= '9')) {
			return false
		}
	}
	return true
}

// scriptLookPath resolves prog through the script's $PATH (not the test
// process's), which is where testscript installs xcsh and the helpers.
func scriptLookPath(ts *testscript.TestScript, prog string) (string, error) {
	if strings.ContainsAny(prog, `/\`) {
		p := ts.MkAbs(prog)
		if !scriptIsExecutable(p) {
			return "", fmt.Errorf("%s is not an executable file", p)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if dir == "" {
			continue
		}
		cand := filepath.Join(ts.MkAbs(dir), prog)
		if runtime.GOOS == "windows" && !strings.HasSuffix(cand, ".exe") {
			cand += ".exe"
		}
		if scriptIsExecutable(cand) {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%q not found in the script's $PATH", prog)
}

func scriptIsExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

func parseScriptSignal(s string) (os.Signal, error) {
	switch strings.TrimPrefix(strings.ToUpper(s), "SIG") {
	case "INT":
		return syscall.SIGINT, nil
	case "TERM":
		return syscall.SIGTERM, nil
	case "HUP":
		return syscall.SIGHUP, nil
	case "QUIT":
		return syscall.SIGQUIT, nil
	case "KILL":
		return syscall.SIGKILL, nil
	}
	return nil, fmt.Errorf("unknown signal %q (want INT, TERM, HUP, QUIT or KILL)", s)
}

// liveProc is one process started by rpc start.
type liveProc struct {
	name   string
	cmd    *exec.Cmd
	cancel context.CancelFunc // interrupts the process, then kills it after cmd.WaitDelay
	stdin  *os.File           // our end of the child's stdin; script goroutine only
	out    *frameLog          // stdout; written by exec's copying goroutine
	errOut *stderrFile        // stderr; written by the child itself; script goroutine only

	// exited is closed by the waiter goroutine once cmd.Wait has returned,
	// which is after all of stdout has been written to out; waitErr is set
	// before, so it may be read after <-exited.
	exited  chan struct{}
	waitErr error

	cursor int  // frames before it have been consumed by rpc wait; script goroutine only
	closed bool // rpc close (or the end of the script) has reaped it; script goroutine only
	// rec is what the script did, for rpc replay; nil for epipe start.
	// Script goroutine only.
	rec *recording
}

// procWaitDelay bounds how long Wait keeps reading after the process exited
// (a grandchild may hold stdout) and how long an interrupted process gets
// before it is killed.
const procWaitDelay = 3 * time.Second

func startProc(name, path string, args []string, dir string, env []string) (*liveProc, error) {
	// Our own pipe, not StdinPipe, because an *os.File pipe supports write
	// deadlines: a child that stops reading cannot hang the script.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errOut, errFile, err := newStderrFile()
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = pr
	p := &liveProc{
		name:   name,
		cmd:    cmd,
		cancel: cancel,
		stdin:  pw,
		out:    newFrameLog(),
		errOut: errOut,
		exited: make(chan struct{}),
	}
	cmd.Stdout = p.out
	cmd.Stderr = errFile
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = procWaitDelay
	if err := cmd.Start(); err != nil {
		cancel()
		pr.Close()
		pw.Close()
		errFile.Close()
		errOut.release()
		return nil, err
	}
	// The child has its copies. Ours of the stdin pipe would keep it open and
	// hide a child's exit from our writes (EPIPE); the stderr file is read
	// by name.
	pr.Close()
	errFile.Close()
	go func() {
		p.waitErr = cmd.Wait()
		p.out.finish()
		close(p.exited)
	}()
	return p, nil
}

// writeTimeout bounds one write to a child's stdin.
const writeTimeout = 10 * time.Second

func (p *liveProc) write(ts *testscript.TestScript, b []byte) {
	if p.closed {
		ts.Fatalf("rpc: process %q is closed", p.name)
	}
	if err := p.stdin.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		ts.Fatalf("rpc: %v", err)
	}
	if _, err := p.stdin.Write(b); err != nil {
		select {
		case <-p.exited:
			ts.Fatalf("rpc: writing to %q: %v (the process has exited: %v)\n%s", p.name, err, procExitDescription(p), p.dump())
		default:
			ts.Fatalf("rpc: writing to %q: %v\n%s", p.name, err, p.dump())
		}
	}
}

// wait blocks until a frame after the cursor matches query, then moves the
// cursor past it. It sleeps on the frame log's change channel, never polls.
func (p *liveProc) wait(ts *testscript.TestScript, query string, timeout time.Duration) {
	checkQuery(ts, query)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	next := p.cursor
	for {
		frames, done, changed := p.out.snapshot()
		for ; next < len(frames); next++ {
			if frames[next].matches(query) {
				p.cursor = next + 1
				ts.Logf("rpc wait: frame %d matched: %s", next+1, clipFrame(frames[next].line))
				return
			}
		}
		if done {
			ts.Fatalf("rpc wait: %q exited (%s) before a frame matched %s\n%s", p.name, procExitDescription(p), query, p.dump())
		}
		select {
		case <-changed:
		case <-timer.C:
			ts.Fatalf("rpc wait: no frame matched %s within %v\n%s", query, timeout, p.dump())
		}
	}
}

// pollInterval is how long poll waits between two questions.
const pollInterval = 5 * time.Millisecond

// poll asks line (a command with an id) again and again until its answer
// matches query, within timeout: the condition is a state of the process
// that no frame announces (a served session evicted after a while). Each
// answer moves the cursor past it. Like waitfile, a bounded poll.
func (p *liveProc) poll(ts *testscript.TestScript, line, query string, timeout time.Duration) {
	checkQuery(ts, query)
	id := gjson.Get(line, "id")
	if !gjson.Valid(line) || !id.Exists() {
		ts.Fatalf("rpc poll: %s is not a JSON command with an id (its answer is how poll knows it was answered)", line)
	}
	deadline := time.Now().Add(timeout)
	for asked := 1; ; asked++ {
		p.write(ts, []byte(line+"\n"))
		f := p.answer(ts, id.Raw, deadline)
		if f.matches(query) {
			ts.Logf("rpc poll: answer %d matched: %s", asked, clipFrame(f.line))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("rpc poll: no answer to %s matched %s within %v (%d asked); the last: %s\n%s", line, query, timeout, asked, clipFrame(f.line), p.dump())
		}
		time.Sleep(pollInterval)
	}
}

// answer waits until deadline for the frame after the cursor whose id is
// id (raw JSON), and moves the cursor past it.
func (p *liveProc) answer(ts *testscript.TestScript, id string, deadline time.Time) scriptFrame {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		frames, done, changed := p.out.snapshot()
		for ; p.cursor < len(frames); p.cursor++ {
			if f := frames[p.cursor]; f.json && gjson.GetBytes(f.line, "id").Raw == id {
				p.cursor++
				return f
			}
		}
		if done {
			ts.Fatalf("rpc poll: %q exited (%s) before answering %s\n%s", p.name, procExitDescription(p), id, p.dump())
		}
		select {
		case <-changed:
		case <-timer.C:
			ts.Fatalf("rpc poll: no answer to id %s within the bound\n%s", id, p.dump())
		}
	}
}

// expect checks the frames received so far, cursor or not, without waiting.
func (p *liveProc) expect(ts *testscript.TestScript, neg bool, query string) {
	checkQuery(ts, query)
	frames, _, _ := p.out.snapshot()
	for i, f := range frames {
		if f.matches(query) {
			if neg {
				ts.Fatalf("rpc expect: frame %d matches %s, want none\n%s", i+1, query, p.dump())
			}
			return
		}
	}
	if !neg {
		ts.Fatalf("rpc expect: no frame matches %s\n%s", query, p.dump())
	}
}

func (h *harness) close(ts *testscript.TestScript, p *liveProc, args []string) {
	const usage = "usage: rpc close [--name N] [--expect-exit N | --expect-signal SIG] [file]"
	wantCode, wantSig := 0, os.Signal(nil)
	file := procOutputBase(p.name) + ".stdout"
	for len(args) > 0 {
		switch {
		case args[0] == "--expect-exit" && len(args) > 1:
			n, err := strconv.Atoi(args[1])
			if err != nil {
				ts.Fatalf("rpc close: bad exit code %q", args[1])
			}
			wantCode, args = n, args[2:]
		case args[0] == "--expect-signal" && len(args) > 1:
			sig, err := parseScriptSignal(args[1])
			if err != nil {
				ts.Fatalf("rpc close: %v", err)
			}
			wantSig, args = sig, args[2:]
		case len(args) == 1 && !strings.HasPrefix(args[0], "--"):
			file, args = args[0], nil
		default:
			ts.Fatalf("%s", usage)
		}
	}
	if p.closed {
		ts.Fatalf("rpc close: process %q is already closed", p.name)
	}

	p.stdin.Close()
	killed := false
	timer := time.NewTimer(h.closeTimeout)
	select {
	case <-p.exited:
	case <-timer.C:
		killed = true
		p.cmd.Process.Kill()
		<-p.exited
	}
	timer.Stop()
	p.cancel()
	p.closed = true

	// Write the outputs before judging the exit, so a failing script leaves
	// them in $WORK (with -testwork) for inspection.
	raw := p.out.bytes()
	p.errOut.release()
	stderr := p.errOut.String()
	ts.Check(os.WriteFile(ts.MkAbs(file), raw, 0o666))
	ts.Check(os.WriteFile(ts.MkAbs(procOutputBase(p.name)+".stderr"), []byte(stderr), 0o666))
	// Also as the command's stdout and stderr, so the stdout, stderr and
	// cmp stdout builtins (and UPDATE_SCRIPTS) apply to them.
	ts.Stdout().Write(raw)
	ts.Stderr().Write([]byte(stderr))

	if killed {
		ts.Fatalf("rpc close: %q did not exit within %v of stdin closing; killed\n%s", p.name, h.closeTimeout, p.dump())
	}
	var exitErr *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exitErr) {
		ts.Fatalf("rpc close: %q: %v\n%s", p.name, p.waitErr, p.dump())
	}
	code, sig := procExitStatus(p.cmd.ProcessState)
	switch {
	case wantSig != nil && sig != wantSig:
		ts.Fatalf("rpc close: %q %s, want killed by signal %v\n%s", p.name, procExitDescription(p), wantSig, p.dump())
	case wantSig == nil && (sig != nil || code != wantCode):
		ts.Fatalf("rpc close: %q %s, want exit code %d\n%s", p.name, procExitDescription(p), wantCode, p.dump())
	}
}

// stop reaps a process the script did not close: it is interrupted, then
// killed after procWaitDelay, like testscript's own background commands. It
// runs deferred, outside any command, so it can only log.
func (p *liveProc) stop(ts *testscript.TestScript) {
	if p.closed {
		return
	}
	p.closed = true
	p.stdin.Close()
	p.cancel()
	<-p.exited
	p.errOut.release()
	ts.Logf("rpc: %q was not closed by the script; stopped it (%s)", p.name, procExitDescription(p))
}

// procExitStatus returns the exit code, or the signal that killed the process.
func procExitStatus(ps *os.ProcessState) (int, os.Signal) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return ps.ExitCode(), nil
}

// procExitDescription must only be called after <-p.exited.
func procExitDescription(p *liveProc) string {
	ps := p.cmd.ProcessState
	if ps == nil {
		return fmt.Sprintf("not started: %v", p.waitErr)
	}
	code, sig := procExitStatus(ps)
	if sig != nil {
		return "killed by signal " + sig.String()
	}
	return "exit code " + strconv.Itoa(code)
}

// dump renders every frame received so far, marking the cursor and lines
// that are not well-formed frames, followed by stderr: what a reader of a
// failed script needs to see.
func (p *liveProc) dump() string {
	frames, done, _ := p.out.snapshot()
	var b strings.Builder
	state := "running"
	if done {
		state = procExitDescription(p)
	}
	fmt.Fprintf(&b, "process %q (%s), %d frames, cursor after frame %d:\n", p.name, state, len(frames), p.cursor)
	for i, f := range frames {
		mark := " "
		if i == p.cursor {
			mark = ">"
		}
		var flags []string
		if !f.json {
			flags = append(flags, "not JSON")
		}
		if f.partial {
			flags = append(flags, "no trailing newline")
		}
		note := ""
		if len(flags) > 0 {
			note = " [" + strings.Join(flags, ", ") + "]"
		}
		fmt.Fprintf(&b, "%s%4d %s%s\n", mark, i+1, clipFrame(f.line), note)
	}
	if s := p.errOut.String(); s != "" {
		fmt.Fprintf(&b, "stderr:\n%s", s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	} else {
		b.WriteString("stderr: (empty)\n")
	}
	return b.String()
}

// clip keeps failure output readable when a frame is huge.
func clipFrame(line []byte) string {
	const max = 4096
	if len(line) <= max {
		return string(line)
	}
	return fmt.Sprintf("%s... (%d more bytes)", line[:max], len(line)-max)
}
