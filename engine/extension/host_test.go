package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/extension/exttest"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// The tests run their own binary as the extensions: with XCSH_EXTTEST=1
// it is exttest's scripted extension, reading the plan file it is given.
func TestMain(m *testing.M) {
	if os.Getenv("XCSH_EXTTEST") == "1" {
		os.Exit(exttest.MainArgs(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// frames is a Sink keeping every encoded event, with a wait on them.
type frames struct {
	mu   sync.Mutex
	all  []string
	wake chan struct{}
}

func newFrames() *frames { return &frames{wake: make(chan struct{}, 1)} }

func (f *frames) Event(ev engine.Event) {
	f.mu.Lock()
	f.all = append(f.all, string(ev.AppendJSON(nil)))
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *frames) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.all, "\n")
}

// await waits for a frame containing s (bounded only as a hang guard).
func (f *frames) await(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if strings.Contains(f.text(), s) {
			return
		}
		select {
		case <-f.wake:
		case <-deadline:
			t.Fatalf("no frame with %s in:\n%s", s, f.text())
		}
	}
}

// autoHost answers dialogs: confirm with confirm, input after release (or
// at once when nil), and counts them.
type autoHost struct {
	confirm bool
	release chan struct{}
	mu      sync.Mutex
	asked   int
}

func (a *autoHost) AwaitTool(ctx context.Context, id string, send func(), update func(engine.ToolResult)) (engine.ToolResult, error) {
	return engine.ToolResult{}, engine.ErrHostGone
}

func (a *autoHost) AwaitDialog(ctx context.Context, id string, send func()) (engine.DialogReply, error) {
	send()
	a.mu.Lock()
	a.asked++
	a.mu.Unlock()
	if a.release != nil {
		select {
		case <-a.release:
		case <-ctx.Done():
			return engine.DialogReply{}, context.Cause(ctx)
		}
		return engine.DialogReply{Value: "typed", HasValue: true, Confirmed: a.confirm}, nil
	}
	return engine.DialogReply{Confirmed: a.confirm, Value: "typed", HasValue: true}, nil
}

// shellTool is a stand-in bash: it reports the command it was given.
type shellTool struct{}

func (shellTool) Name() string                    { return "bash" }
func (shellTool) Description() string             { return "run a command" }
func (shellTool) Schema() []byte                  { return []byte(`{"type":"object"}`) }
func (shellTool) Concurrency() engine.Concurrency { return engine.Exclusive }
func (shellTool) Run(_ context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(call.Arguments, &a)
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock("ran: " + a.Command)}}, nil
}

type rig struct {
	h    *Host
	sess *engine.Session
	out  *frames
	dir  string
	log  *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startBench loads one plan as an extension of a host with no session, for
// benchmarks of its hooks.
func startBench(b *testing.B, plan string, want uint64) *Host {
	b.Helper()
	dir := b.TempDir()
	file := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(file, []byte(plan), 0o644); err != nil {
		b.Fatal(err)
	}
	h := New(Options{Specs: []Spec{{Path: "bench", Command: []string{os.Args[0], file}}}, Cwd: dir,
		Env: append(os.Environ(), "XCSH_EXTTEST=1"), Grace: 500 * time.Millisecond})
	h.Load(context.Background(), nil, "s1", "")
	if len(h.live(want)) == 0 {
		b.Fatal("the extension did not load")
	}
	b.Cleanup(func() { h.Shutdown(context.Background()) })
	return h
}

// start runs the plans as extensions of a fresh session on the demo model.
func start(t *testing.T, host engine.HostLink, deadline time.Duration, plans ...string) *rig {
	t.Helper()
	dir := t.TempDir()
	var specs []Spec
	for i, p := range plans {
		file := filepath.Join(dir, fmt.Sprintf("plan%d.json", i))
		if err := os.WriteFile(file, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, Spec{Path: fmt.Sprintf("ext%d", i), Command: []string{os.Args[0], file}, Deadline: deadline})
	}
	log := &syncBuf{}
	h := New(Options{Specs: specs, Version: "test", Cwd: dir, Env: append(os.Environ(), "XCSH_EXTTEST=1"),
		Log: log, Grace: 500 * time.Millisecond, Handshake: 2 * time.Second})
	builtins := []engine.Tool{shellTool{}}
	tools := h.Load(context.Background(), builtins, "s1", "")
	p := fakeprovider.Demo()
	m := p.Model()
	out := newFrames()
	if host == nil {
		host = &autoHost{}
	}
	sess := engine.New(engine.Config{Provider: p, Model: &m, Tools: append(builtins, tools...), Hooks: h, Sink: h.Tap(out),
		Host: host, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}, SessionID: "s1", Shell: echoShell{},
		Commands: []engine.CommandSource{h}})
	h.Attach(sess)
	done := make(chan struct{})
	go func() { sess.Loop(); close(done) }()
	h.Begin()
	t.Cleanup(func() {
		idle(sess)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		sess.Stop()
		<-done
		sess.Close()
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	})
	return &rig{h: h, sess: sess, out: out, dir: dir, log: log}
}

type echoShell struct{}

func (echoShell) Exec(_ context.Context, command string) (engine.BashResult, error) {
	code := 0
	return engine.BashResult{ExitCode: &code, Output: "shell: " + command}, nil
}

func idle(s *engine.Session) {
	ch := make(chan struct{})
	s.Post(func() { s.WhenIdle(func() { close(ch) }) })
	<-ch
}

func (r *rig) prompt(t *testing.T, text string) {
	t.Helper()
	r.sess.Call(func() {
		if err := r.sess.Prompt(text, engine.PromptOptions{Failed: func(err error) { t.Errorf("prompt: %v", err) }}); err != nil {
			t.Fatal(err)
		}
	})
	idle(r.sess)
}

const echoTool = `{"name":"echo","tools":[{"name":"echo","description":"Echo text","parameters":{"type":"object","properties":{"text":{"type":"string"}}},
  "run":[{"update":{"content":[{"type":"text","text":"working"}]}},{"return":{"content":[{"type":"text","text":"echo: ${event.input.text}"}],"details":{"n":1}}}]}]}`

func TestToolRegisteredAndCalled(t *testing.T) {
	t.Parallel()
	r := start(t, nil, 0, echoTool)
	r.prompt(t, `demo:tool echo {"text":"hi"}`)
	out := r.out.text()
	for _, want := range []string{`"type":"tool_execution_update"`, `"text":"working"`, `"text":"echo: hi"`, `"details":{"n":1}`, `Tool echo returned: echo: hi`} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %s in\n%s", want, out)
		}
	}
}

const gatePlan = `{"name":"gate","on":{"tool_call":[
  {"when":"rm -rf","run":[
    {"call":"ui.confirm","params":{"title":"Allow?","message":"${event.input.command}"},"as":"c"},
    {"if":"${c.confirmed}","then":[{"return":null}],"else":[{"return":{"block":true,"reason":"Blocked: ${event.input.command}"}}]}]},
  {"run":[{"return":null}]}]}}`

func TestToolCallGateAsksAndBlocks(t *testing.T) {
	t.Parallel()
	host := &autoHost{confirm: false}
	r := start(t, host, 0, gatePlan)
	r.prompt(t, `demo:tool bash {"command":"rm -rf /"}`)
	r.prompt(t, `demo:tool bash {"command":"ls"}`)
	out := r.out.text()
	if !strings.Contains(out, `"method":"confirm","title":"Allow?","message":"rm -rf /"`) {
		t.Fatalf("no confirm dialog:\n%s", out)
	}
	if !strings.Contains(out, `"text":"Blocked: rm -rf /"`) || !strings.Contains(out, `"text":"ran: ls"`) || strings.Contains(out, "ran: rm") {
		t.Fatalf("gate:\n%s", out)
	}
	if host.asked != 1 {
		t.Fatalf("asked %d times", host.asked)
	}
}

func TestOrderedRewritesAndFaults(t *testing.T) {
	t.Parallel()
	first := `{"name":"a","on":{"tool_call":[{"run":[{"return":{"input":{"command":"${event.input.command} A"}}}]}]}}`
	second := `{"name":"b","on":{"tool_call":[{"when":" A\"","run":[{"return":{"input":{"command":"${event.input.command} B"}}}]}]}}`
	broken := `{"name":"c","on":{"tool_call":[{"run":[{"error":"boom"}]}],"tool_result":[{"run":[{"return":{"isError":"no"}}]}]}}`
	r := start(t, nil, 0, first, second, broken)
	r.prompt(t, `demo:tool bash {"command":"x"}`)
	out := r.out.text()
	if !strings.Contains(out, `"text":"ran: x A B"`) {
		t.Fatalf("chain:\n%s", out)
	}
	for _, want := range []string{`{"type":"extension_error","extensionPath":"ext2","event":"tool_call","error":"boom"}`,
		`{"type":"extension_error","extensionPath":"ext2","event":"tool_result","error":"malformed result:`} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %s in\n%s", want, out)
		}
	}
}

func TestHookDeadlineThenDefault(t *testing.T) {
	t.Parallel()
	r := start(t, nil, 200*time.Millisecond, `{"name":"hang","on":{"tool_call":[{"run":[{"hang":true}]}]}}`)
	r.prompt(t, `demo:tool bash {"command":"ls"}`)
	out := r.out.text()
	if !strings.Contains(out, `"event":"tool_call","error":"no answer within 200ms"`) || !strings.Contains(out, `"text":"ran: ls"`) {
		t.Fatalf("deadline:\n%s", out)
	}
}

func TestCrashMidToolRemovesItsTools(t *testing.T) {
	t.Parallel()
	plan := `{"name":"crash","tools":[{"name":"boom","description":"Crashes","parameters":{"type":"object"},"run":[{"exit":3}]}]}`
	r := start(t, nil, 0, plan)
	r.prompt(t, `demo:tool boom {}`)
	r.out.await(t, `"event":"exit"`)
	out := r.out.text()
	if !strings.Contains(out, `"error":"the extension exited (exit status 3) while handling tool/execute"`) ||
		!strings.Contains(out, `Extension tool \"boom\" failed: the extension is not running`) {
		t.Fatalf("crash:\n%s", out)
	}
	var names []string
	r.sess.Call(func() {
		for _, tl := range r.sess.Tools() {
			names = append(names, tl.Name())
		}
	})
	// The removal is posted by the fault: wait for it.
	for i := 0; i < 1000 && strings.Contains(strings.Join(names, ","), "boom"); i++ {
		time.Sleep(5 * time.Millisecond)
		names = nil
		r.sess.Call(func() {
			for _, tl := range r.sess.Tools() {
				names = append(names, tl.Name())
			}
		})
	}
	if strings.Join(names, ",") != "bash" {
		t.Fatalf("tools %v", names)
	}
	r.prompt(t, `after the crash`)
	if !strings.Contains(r.out.text(), "You said: after the crash") {
		t.Fatal("the session did not go on")
	}
}

func TestStdoutNoiseIsDropped(t *testing.T) {
	t.Parallel()
	plan := `{"name":"noisy","init":[{"print":"garbage before the handshake"}],
	  "on":{"tool_call":[{"run":[{"print":"{not json"},{"return":{"input":{"command":"quiet"}}}]}]}}`
	r := start(t, nil, 0, plan)
	r.prompt(t, `demo:tool bash {"command":"loud"}`)
	if out := r.out.text(); strings.Contains(out, "garbage") || strings.Contains(out, "not json") || !strings.Contains(out, "ran: quiet") {
		t.Fatalf("frames:\n%s", out)
	}
	if log := r.log.String(); !strings.Contains(log, "garbage before the handshake") || !strings.Contains(log, "{not json") {
		t.Fatalf("log:\n%s", log)
	}
}

func TestFloodIsBounded(t *testing.T) {
	t.Parallel()
	plan := `{"name":"flood","commands":[{"name":"flood","run":[
	  {"flood":"ui.confirm","params":{"title":"x","message":"y"},"count":100,"as":"f"},
	  {"call":"ui.notify","params":{"message":"refused ${f.refused}"}}]}]}`
	host := &autoHost{release: make(chan struct{})}
	r := start(t, host, 0, plan)
	r.sess.Call(func() { _ = r.sess.Prompt("/flood", engine.PromptOptions{}) })
	// 32 dialogs wait for the host; the rest were refused at once.
	for i := 0; ; i++ {
		host.mu.Lock()
		n := host.asked
		host.mu.Unlock()
		if n == maxAsync {
			break
		}
		if i > 4000 {
			t.Fatalf("%d dialogs", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(host.release)
	// Calls that arrive after the first ones were answered are served, so
	// the count depends on timing; what is fixed is that none waited in a
	// queue: every call was served or refused, and some were refused.
	r.out.await(t, `"message":"refused `)
	out := r.out.text()
	i := strings.Index(out, `"message":"refused `) + len(`"message":"refused `)
	refused, _ := strconv.Atoi(out[i : i+strings.IndexByte(out[i:], '"')])
	host.mu.Lock()
	asked := host.asked
	host.mu.Unlock()
	if refused == 0 || refused+asked != 100 {
		t.Fatalf("refused %d, asked %d", refused, asked)
	}
}

func TestStaleSessionCallFails(t *testing.T) {
	t.Parallel()
	plan := `{"name":"slow","commands":[{"name":"slow","run":[
	  {"call":"ui.input","params":{"title":"wait"}},
	  {"call":"ui.notify","params":{"message":"late"},"as":"n"},
	  {"file":"stale.txt","write":"${n.error}"}]}]}`
	host := &autoHost{release: make(chan struct{})}
	r := start(t, host, 0, plan)
	r.sess.Call(func() { _ = r.sess.Prompt("/slow", engine.PromptOptions{}) })
	r.out.await(t, `"method":"input"`)
	done := make(chan error, 1)
	r.sess.Call(func() { r.sess.NewSession("", func(err error) { done <- err }) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(host.release)
	file := filepath.Join(r.dir, "stale.txt")
	for i := 0; i < 4000; i++ {
		if b, _ := os.ReadFile(file); len(b) > 0 {
			if !strings.Contains(string(b), "stale session: s1 is no longer the current session") {
				t.Fatalf("stale call: %s", b)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the command never wrote its result")
}

func TestShutdownLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "child.pid")
	plan := `{"name":"parent","init":[{"spawn":["sleep","600"],"pidfile":"` + pidfile + `"}],"on":{"session_shutdown":[{"run":[]}]}}`
	r := start(t, nil, 0, plan)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(b))
	r.h.mu.RLock()
	ext := r.h.exts[0]
	r.h.mu.RUnlock()
	pid := ext.proc.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.h.Shutdown(ctx)
	for _, p := range []int{pid, child} {
		gone := false
		for i := 0; i < 2000 && !gone; i++ {
			gone = syscall.Kill(p, 0) != nil || zombie(p)
			if !gone {
				time.Sleep(5 * time.Millisecond)
			}
		}
		if !gone {
			t.Fatalf("process %d outlived the shutdown", p)
		}
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestHandshakeFailuresAreReportedAfterBegin(t *testing.T) {
	t.Parallel()
	r := start(t, nil, 100*time.Millisecond,
		`{"name":"mute","init":[{"hang":true}]}`,
		`{"name":"clash","tools":[{"name":"bash","description":"another bash","parameters":{"type":"object"},"run":[]}]}`)
	r.out.await(t, `"extensionPath":"ext1"`)
	out := r.out.text()
	if !strings.Contains(out, `{"type":"extension_error","extensionPath":"ext0","event":"initialize","error":"initialize: no answer within 2s"}`) ||
		!strings.Contains(out, `"error":"tool \"bash\" conflicts with an existing tool; not registered"`) {
		t.Fatalf("frames:\n%s", out)
	}
}

// An extension that dies during its handshake is reported once: the exit
// (with what it was handling), not the failed initialize as well.
func TestCrashInHandshakeReportedOnce(t *testing.T) {
	t.Parallel()
	r := start(t, nil, 0,
		`{"name":"gone","init":[{"exit":3}]}`,
		`{"name":"clash","tools":[{"name":"bash","description":"another bash","parameters":{"type":"object"},"run":[]}]}`)
	r.out.await(t, `"extensionPath":"ext1"`) // reported after ext0's
	out := r.out.text()
	if n := strings.Count(out, `"extensionPath":"ext0"`); n != 1 ||
		!strings.Contains(out, `{"type":"extension_error","extensionPath":"ext0","event":"exit","error":"the extension exited (exit status 3) while handling initialize"}`) {
		t.Fatalf("%d frames for ext0:\n%s", n, out)
	}
}

// An extension's timeout is capped (MaxDeadline), and its handshake, which
// ready waits for, at MaxHandshake whatever the timeout.
func TestDeadlinesCapped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec, hooks, handshake time.Duration
	}{
		{0, DefaultDeadline, MaxHandshake},
		{200 * time.Millisecond, 200 * time.Millisecond, MaxHandshake},
		{8 * time.Second, 8 * time.Second, MaxHandshake},
		{20 * time.Second, 20 * time.Second, MaxHandshake},
		{10 * time.Minute, MaxDeadline, MaxHandshake},
		{millis(math.MaxInt64), MaxDeadline, MaxHandshake},
	}
	for _, c := range cases {
		e := &ext{h: &Host{}, spec: Spec{Deadline: c.spec}}
		if e.deadline() != c.hooks || e.handshakeDeadline() != c.handshake {
			t.Errorf("timeout %v: hooks %v handshake %v, want %v %v", c.spec, e.deadline(), e.handshakeDeadline(), c.hooks, c.handshake)
		}
	}
	for ms, want := range map[int64]time.Duration{-5: 0, 0: 0, 1500: 1500 * time.Millisecond, math.MaxInt64: time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond} {
		if got := millis(ms); got != want || got < 0 {
			t.Errorf("millis(%d) = %v, want %v", ms, got, want)
		}
	}
}

var _ = io.Discard

// The compaction hook: an extension cancels a manual compaction, adds
// context to a threshold one, and a second supplies the summary of an
// overflow one.
func TestCompactionHook(t *testing.T) {
	t.Parallel()
	r := start(t, nil, 0, `{"name":"a","on":{"session_before_compact":[
	  {"when":"\"reason\":\"manual\"","run":[{"return":{"cancel":true}}]},
	  {"run":[{"return":{"additionalContext":["keep the plan (${event.tokensBefore} tokens)"]}}]}]}}`,
		`{"name":"b","on":{"session_before_compact":[
	  {"when":"overflow","run":[{"return":{"compaction":{"summary":"by b","details":{"by":"b"}}}}]}]}}`)
	prep := &engine.CompactionPreparation{TokensBefore: 1200}
	if v := r.h.compactionHook(context.Background(), &engine.CompactionRequest{Reason: "manual", Preparation: prep}); !v.Cancel {
		t.Fatalf("manual: %+v", v)
	}
	v := r.h.compactionHook(context.Background(), &engine.CompactionRequest{Reason: "threshold", Preparation: prep})
	if v.Cancel || v.Result != nil || len(v.AdditionalContext) != 1 || v.AdditionalContext[0] != "keep the plan (1200 tokens)" {
		t.Fatalf("threshold: %+v", v)
	}
	v = r.h.compactionHook(context.Background(), &engine.CompactionRequest{Reason: "overflow", Preparation: prep})
	if v.Result == nil || v.Result.Summary != "by b" || string(v.Result.Details) != `{"by":"b"}` {
		t.Fatalf("overflow: %+v", v)
	}
}
