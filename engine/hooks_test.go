package engine

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// fakeHooks is a Hooks whose handled points are the non-nil functions.
type fakeHooks struct {
	mu       sync.Mutex
	observed []string
	asked    []Hook // Has calls for points with no handler

	input      func(InputHook) InputResult
	start      func(AgentStartHook) AgentStartResult
	context    func([]Message) []Message
	request    func(*Request)
	toolCall   func(ToolCallHook) ToolCallResult
	toolResult func(ToolCallHook, ToolResult) ToolResult
	userBash   func(string) *BashResult
	switching  func(SwitchHook) bool
	commands   []SlashCommand // listed as a CommandSource
	ran        chan string    // RunCommand: "name args"
}

func (f *fakeHooks) Has(h Hook) bool {
	var ok bool
	switch h {
	case HookInput:
		ok = f.input != nil
	case HookBeforeAgentStart:
		ok = f.start != nil
	case HookContext:
		ok = f.context != nil
	case HookBeforeProviderRequest:
		ok = f.request != nil
	case HookToolCall:
		ok = f.toolCall != nil
	case HookToolResult:
		ok = f.toolResult != nil
	case HookUserBash:
		ok = f.userBash != nil
	case HookBeforeSwitch, HookBeforeFork:
		ok = f.switching != nil
	case HookCommands:
		ok = f.commands != nil
	}
	if !ok {
		f.mu.Lock()
		f.asked = append(f.asked, h)
		f.mu.Unlock()
	}
	return ok
}

func (f *fakeHooks) Observe(ev SessionEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := ev.Kind
	if ev.Reason != "" {
		s += ":" + ev.Reason
	}
	if ev.Source != "" {
		s += ":" + ev.Source
	}
	if ev.Level != "" {
		s += ":" + string(ev.Level)
	}
	f.observed = append(f.observed, s)
}

func (f *fakeHooks) Input(_ context.Context, in InputHook) InputResult { return f.input(in) }
func (f *fakeHooks) BeforeAgentStart(_ context.Context, in AgentStartHook) AgentStartResult {
	return f.start(in)
}
func (f *fakeHooks) Context(_ context.Context, msgs []Message) []Message   { return f.context(msgs) }
func (f *fakeHooks) BeforeProviderRequest(_ context.Context, req *Request) { f.request(req) }
func (f *fakeHooks) ToolCall(_ context.Context, c ToolCallHook) ToolCallResult {
	return f.toolCall(c)
}
func (f *fakeHooks) ToolResult(_ context.Context, c ToolCallHook, r ToolResult) ToolResult {
	return f.toolResult(c, r)
}
func (f *fakeHooks) UserBash(_ context.Context, cmd string) *BashResult { return f.userBash(cmd) }
func (f *fakeHooks) BeforeSwitch(_ context.Context, sw SwitchHook) bool { return f.switching(sw) }
func (f *fakeHooks) Commands() []SlashCommand                           { return f.commands }
func (f *fakeHooks) Expand(name, args string) (string, bool)            { return "", false }
func (f *fakeHooks) RunCommand(_ context.Context, name, args string)    { f.ran <- name + " " + args }

// requestLog is a provider that answers "ok" and records each request.
type requestLog struct {
	mu   sync.Mutex
	reqs []*Request
	hold chan struct{} // when set, each call waits for it (or its context) before replying
}

func (p *requestLog) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	if p.hold != nil {
		select {
		case <-p.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return textReply("ok").Stream(ctx, req, fn)
}

func lastUserTextOf(req *Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if u, ok := req.Messages[i].(*UserMessage); ok {
			return u.Text()
		}
	}
	return ""
}

// Without hooks for a point, the session asks Has and nothing else: no
// payload is built, no goroutine started.
func TestUnhandledHooksCostAQuestion(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{}
	rec := &recorder{}
	s := startSession(t, Config{Provider: textReply("hi"), Hooks: h, Sink: rec})
	prompted(t, s, "hello")
	want := "agent_start turn_start message_start message_end message_start message_update message_update message_update message_end turn_end agent_end"
	if got := strings.Join(rec.types, " "); got != want {
		t.Fatalf("events %s", got)
	}
	if len(h.asked) == 0 {
		t.Fatal("Has was never asked")
	}
}

func TestInputHookTransformsAndHandles(t *testing.T) {
	t.Parallel()
	p := &requestLog{}
	h := &fakeHooks{input: func(in InputHook) InputResult {
		if in.Source != "rpc" {
			t.Errorf("source %q", in.Source)
		}
		switch {
		case strings.HasPrefix(in.Text, "t:"):
			return InputResult{Action: InputTransform, Text: "transformed " + in.Text[2:]}
		case in.Text == "stop":
			return InputResult{Action: InputHandled}
		}
		return InputResult{}
	}}
	rec := &recorder{}
	s := startSession(t, Config{Provider: p, Hooks: h, Sink: rec})
	prompted(t, s, "t:me")
	prompted(t, s, "stop")
	prompted(t, s, "plain")
	if len(p.reqs) != 2 || lastUserTextOf(p.reqs[0]) != "transformed me" || lastUserTextOf(p.reqs[1]) != "plain" {
		t.Fatalf("requests %d", len(p.reqs))
	}
	if n := strings.Count(strings.Join(rec.types, " "), "agent_start"); n != 2 {
		t.Fatalf("%d runs; a handled prompt must start none", n)
	}
}

// While a prompt is in its Input hook the session is busy: another prompt
// fails (reported through Failed), and abort drops the held prompt.
func TestInputHookKeepsTheSessionBusy(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := &fakeHooks{input: func(in InputHook) InputResult {
		entered <- struct{}{}
		<-release
		return InputResult{}
	}}
	p := &requestLog{hold: make(chan struct{})} // the first run lasts until the second prompt has failed
	s := startSession(t, Config{Provider: p, Hooks: h})
	failed := make(chan error, 1)
	s.Call(func() {
		if err := s.Prompt("first", PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	<-entered
	var streaming bool
	s.Call(func() {
		streaming = s.IsStreaming()
		_ = s.Prompt("second", PromptOptions{Failed: func(err error) { failed <- err }})
	})
	if !streaming {
		t.Fatal("not streaming while a prompt is in its Input hook")
	}
	<-entered
	release <- struct{}{} // first goes on and starts its run
	release <- struct{}{} // second finds it running
	if err := <-failed; !errors.Is(err, ErrBusy) {
		t.Fatalf("second prompt: %v", err)
	}
	close(p.hold)
	waitIdle(s)

	// Abort while held: the prompt is dropped.
	s.Call(func() { _ = s.Prompt("dropped", PromptOptions{}) })
	<-entered
	aborted := make(chan struct{})
	s.Call(func() { s.Abort(func() { close(aborted) }) })
	close(release) // the fake hook ignores its context; a real one returns on it
	<-aborted
	waitIdle(s)
	if len(p.reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(p.reqs))
	}
}

// Prompts leave their Input hooks in the order they came: when the second
// one's hook answers first, it still waits for the first, which runs; the
// second then finds the session running and fails as busy.
func TestInputHookAnswersOutOfOrderKeepArrivalOrder(t *testing.T) {
	t.Parallel()
	gates := map[string]chan struct{}{"first": make(chan struct{}), "second": make(chan struct{})}
	entered := make(chan string, 2)
	h := &fakeHooks{input: func(in InputHook) InputResult {
		entered <- in.Text
		<-gates[in.Text]
		return InputResult{}
	}}
	p := &requestLog{}
	s := startSession(t, Config{Provider: p, Hooks: h})
	firstFailed := make(chan error, 1)
	secondFailed := make(chan error, 1)
	s.Call(func() {
		_ = s.Prompt("first", PromptOptions{Failed: func(err error) { firstFailed <- err }})
		_ = s.Prompt("second", PromptOptions{Failed: func(err error) { secondFailed <- err }})
	})
	<-entered
	<-entered
	close(gates["second"])
	for answered := false; !answered; { // until the second's answer has reached the executor
		runtime.Gosched()
		s.Call(func() {
			if len(s.hooked) != 2 {
				t.Errorf("%d prompts held, want 2: the second waits for the first", len(s.hooked))
				answered = true
				return
			}
			answered = s.hooked[1].done
		})
	}
	close(gates["first"])
	if err := <-secondFailed; !errors.Is(err, ErrBusy) {
		t.Fatalf("second prompt: %v", err)
	}
	waitIdle(s)
	select {
	case err := <-firstFailed:
		t.Fatalf("first prompt failed: %v", err)
	default:
	}
	if len(p.reqs) != 1 || lastUserTextOf(p.reqs[0]) != "first" {
		t.Fatalf("%d model calls; the first prompt must be the one that runs", len(p.reqs))
	}
}

func TestBeforeAgentStartAddsMessageAndSystemPrompt(t *testing.T) {
	t.Parallel()
	p := &requestLog{}
	h := &fakeHooks{start: func(in AgentStartHook) AgentStartResult {
		if in.Prompt != "go" || in.SystemPrompt != "base" {
			t.Errorf("hook saw %+v", in)
		}
		return AgentStartResult{SystemPrompt: "replaced", Messages: []*CustomMessage{{CustomType: "note", Content: []ContentBlock{TextBlock("extra")}, Display: true}}}
	}}
	st := &MemoryStore{}
	s := startSession(t, Config{Provider: p, Hooks: h, SystemPrompt: "base", Store: st})
	prompted(t, s, "go")
	if sp := p.reqs[0].SystemPrompt; sp != "replaced" {
		t.Fatalf("system prompt %q", sp)
	}
	if got := lastUserTextOf(p.reqs[0]); got != "goextra" { // consecutive user texts merge
		t.Fatalf("last user text %q", got)
	}
	var types []string
	for _, e := range st.Entries() {
		types = append(types, e.Type)
	}
	if strings.Join(types, ",") != "message,custom_message,message" {
		t.Fatalf("entries %v", types)
	}
	s.Call(func() {
		if s.SystemPrompt() != "base" {
			t.Errorf("the session's prompt changed: %q", s.SystemPrompt())
		}
	})
}

func TestContextHookChangesTheRequestNotTheRecord(t *testing.T) {
	t.Parallel()
	p := &requestLog{}
	h := &fakeHooks{
		context: func(msgs []Message) []Message {
			return []Message{&UserMessage{Content: []ContentBlock{TextBlock("rewritten")}}}
		},
		request: func(req *Request) { req.SystemPrompt += " and more" },
	}
	s := startSession(t, Config{Provider: p, Hooks: h, SystemPrompt: "sp"})
	prompted(t, s, "original")
	if got := lastUserTextOf(p.reqs[0]); got != "rewritten" {
		t.Fatalf("sent %q", got)
	}
	if p.reqs[0].SystemPrompt != "sp and more" {
		t.Fatalf("system prompt %q", p.reqs[0].SystemPrompt)
	}
	s.Call(func() {
		if u, ok := s.Messages()[0].(*UserMessage); !ok || u.Text() != "original" {
			t.Errorf("record changed: %v", s.Messages()[0])
		}
	})
}

func TestToolHooksBlockRewriteAndPatch(t *testing.T) {
	t.Parallel()
	var seen []string
	var mu sync.Mutex
	tool := funcTool{name: "t", run: func(call ToolCall) ToolResult {
		mu.Lock()
		seen = append(seen, string(call.Arguments))
		mu.Unlock()
		return ToolResult{Content: []ContentBlock{TextBlock("ran")}}
	}}
	h := &fakeHooks{
		toolCall: func(c ToolCallHook) ToolCallResult {
			if c.ID == "c1" {
				return ToolCallResult{Block: true}
			}
			return ToolCallResult{Input: []byte(`{"x":1}`)}
		},
		toolResult: func(c ToolCallHook, r ToolResult) ToolResult {
			if string(c.Input) != `{"x":1}` {
				t.Errorf("result hook saw input %s", c.Input)
			}
			r.Content = []ContentBlock{TextBlock("patched")}
			return r
		},
	}
	rec := &recorder{}
	s := startSession(t, Config{Provider: callsThenText([2]string{"c1", "t"}, [2]string{"c2", "t"}), Hooks: h, Sink: rec, Tools: []Tool{tool}})
	prompted(t, s, "go")
	if len(seen) != 1 || seen[0] != `{"x":1}` {
		t.Fatalf("tool ran with %v", seen)
	}
	all := strings.Join(rec.frames, "\n")
	if !strings.Contains(all, BlockedMessage) || !strings.Contains(all, `"text":"patched"`) {
		t.Fatalf("frames:\n%s", all)
	}
}

// funcTool is a shared tool running a function.
type funcTool struct {
	name string
	run  func(ToolCall) ToolResult
}

func (f funcTool) Name() string             { return f.name }
func (f funcTool) Description() string      { return "func tool" }
func (f funcTool) Schema() []byte           { return []byte(`{"type":"object"}`) }
func (f funcTool) Concurrency() Concurrency { return Shared }
func (f funcTool) Run(_ context.Context, call ToolCall, _ func(ToolResult)) (ToolResult, error) {
	return f.run(call), nil
}

type fixedShell struct{ ran *[]string }

func (f fixedShell) Exec(_ context.Context, command string) (BashResult, error) {
	*f.ran = append(*f.ran, command)
	code := 0
	return BashResult{ExitCode: &code, Output: "real"}, nil
}

func TestUserBashHookSuppliesTheResult(t *testing.T) {
	t.Parallel()
	var ran []string
	h := &fakeHooks{userBash: func(cmd string) *BashResult {
		if cmd == "mine" {
			return &BashResult{Output: "supplied"}
		}
		return nil
	}}
	s := startSession(t, Config{Provider: textReply("x"), Hooks: h, Shell: fixedShell{&ran}})
	for _, cmd := range []string{"mine", "yours"} {
		res := call(s, func(done func(BashResult)) {
			s.ExecuteBash(cmd, func(r BashResult, err error) { done(r) })
		})
		want := map[string]string{"mine": "supplied", "yours": "real"}[cmd]
		if res.Output != want {
			t.Fatalf("%s: %q", cmd, res.Output)
		}
	}
	if len(ran) != 1 || ran[0] != "yours" {
		t.Fatalf("shell ran %v", ran)
	}
}

func TestBeforeSwitchCancelsAndSessionEventsAreObserved(t *testing.T) {
	t.Parallel()
	cancel := true
	var asked []SwitchHook
	h := &fakeHooks{switching: func(sw SwitchHook) bool {
		asked = append(asked, sw)
		return cancel
	}}
	s := startSession(t, Config{Provider: textReply("x"), Hooks: h})
	prompted(t, s, "one")
	if err := call(s, func(done func(error)) { s.NewSession("", done) }); !errors.Is(err, ErrSwitchCancelled) {
		t.Fatalf("new session: %v", err)
	}
	var entry string
	s.Call(func() { entry = s.UserEntries()[0].EntryID })
	type br struct {
		text string
		err  error
	}
	got := call(s, func(done func(br)) { s.Branch(entry, func(text string, err error) { done(br{text, err}) }) })
	if got.text != "one" || !errors.Is(got.err, ErrSwitchCancelled) {
		t.Fatalf("branch: %+v", got)
	}
	cancel = false
	if err := call(s, func(done func(error)) { s.NewSession("", done) }); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 3 || asked[0].Reason != "new" || asked[1].Reason != "fork" || asked[1].EntryID != entry {
		t.Fatalf("asked %+v", asked)
	}
	s.Call(func() { s.setModel(Model{ID: "other", Provider: "fake"}, "set") })
	h.mu.Lock()
	defer h.mu.Unlock()
	if got := strings.Join(h.observed, " "); got != "session_shutdown session_start:new model_select:set" {
		t.Fatalf("observed %s", got)
	}
}

func TestSlashCommandsRunAndCannotBeQueued(t *testing.T) {
	t.Parallel()
	h := &fakeHooks{commands: []SlashCommand{{Name: "hello", Source: CommandExtension}}, ran: make(chan string, 1)}
	p := &requestLog{}
	s := startSession(t, Config{Provider: p, Hooks: h, Commands: []CommandSource{h}})
	s.Call(func() {
		if err := s.Prompt("/hello big world", PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	if got := <-h.ran; got != "hello big world" {
		t.Fatalf("ran %q", got)
	}
	var steerErr, followErr error
	s.Call(func() {
		steerErr = s.Steer("/hello", nil)
		followErr = s.FollowUp("/hello x", nil)
	})
	var cq *CommandQueueError
	if !errors.As(steerErr, &cq) || !errors.As(followErr, &cq) || cq.Name != "hello" {
		t.Fatalf("steer %v, follow-up %v", steerErr, followErr)
	}
	prompted(t, s, "/unknown stays a prompt")
	if len(p.reqs) != 1 {
		t.Fatalf("%d model calls", len(p.reqs))
	}
}

func TestSendMessageDeliveries(t *testing.T) {
	t.Parallel()
	p := &requestLog{}
	rec := &recorder{}
	st := &MemoryStore{}
	s := startSession(t, Config{Provider: p, Sink: rec, Store: st})
	msg := func(text string) *CustomMessage {
		return &CustomMessage{CustomType: "x", Content: []ContentBlock{TextBlock(text)}}
	}
	s.Call(func() {
		if err := s.SendMessage(msg("recorded"), SendOptions{}); err != nil {
			t.Error(err)
		}
		_ = s.SendMessage(msg("later"), SendOptions{DeliverAs: DeliverNextTurn})
		_ = s.SendMessage(msg("trigger"), SendOptions{TriggerTurn: true})
	})
	waitIdle(s)
	if len(p.reqs) != 1 {
		t.Fatalf("%d model calls", len(p.reqs))
	}
	if got := lastUserTextOf(p.reqs[0]); got != "recordedtriggerlater" { // merged user texts
		t.Fatalf("sent %q", got)
	}
	s.Call(func() {
		s.AppendCustomEntry("state", []byte(`{"n":1}`))
		if err := s.SetLabel("nope", "x"); !errors.Is(err, ErrNoEntry) {
			t.Errorf("label on a missing entry: %v", err)
		}
		if err := s.SetLabel(s.Leaf(), "mark"); err != nil {
			t.Error(err)
		}
	})
	var line []string
	for _, e := range st.Entries() {
		line = append(line, string(e.AppendJSON(nil)))
	}
	all := strings.Join(line, "\n")
	for _, want := range []string{`"type":"custom_message","customType":"x","content":[{"type":"text","text":"recorded"}]`,
		`"type":"custom","customType":"state","data":{"n":1}`, `"type":"label"`, `"label":"mark"`} {
		if !strings.Contains(all, want) {
			t.Fatalf("no %s in\n%s", want, all)
		}
	}
}
