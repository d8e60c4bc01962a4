package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// orderCheck is a Store and a Sink at once: at every message_end it checks
// that the store already holds the message the event announces.
type orderCheck struct {
	MemoryStore
	mu     sync.Mutex
	missed []string
	ends   int
}

func (o *orderCheck) Event(ev Event) {
	end, ok := ev.(MessageEnd)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ends++
	for _, e := range o.Entries() {
		if e.Message == end.Message {
			return
		}
	}
	o.missed = append(o.missed, end.Message.Role())
}

func startSession(t *testing.T, cfg Config) *Session {
	t.Helper()
	if cfg.Model == nil {
		cfg.Model = &Model{ID: "m", API: "fake", Provider: "fake"}
	}
	if cfg.Clock == nil {
		cfg.Clock = DeterministicEpoch
	}
	if _, manual := cfg.Clock.(*ManualClock); manual && cfg.StreamIdleTimeout == 0 {
		// The stream watchdog's ticks are timers on this clock: a test that
		// advances once "something waits" could fire a tick instead of the
		// wait it means, and that wait would never end. Tests of the
		// watchdog set the timeout themselves.
		cfg.StreamIdleTimeout = -1
	}
	if cfg.IDs == nil {
		cfg.IDs = &SequentialIDs{}
	}
	s := New(cfg)
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	t.Cleanup(func() { waitIdle(s); s.Stop(); <-done; s.Close() })
	return s
}

// Every message reaches the store before its message_end, as a tree of
// entries with parent links, and the context is the branch's messages.
func TestEntriesReachStoreBeforeTheirEvent(t *testing.T) {
	t.Parallel()
	o := &orderCheck{}
	tool := &gateTool{name: "t", conc: Shared, log: new([]string)}
	s := startSession(t, Config{Provider: callsThenText([2]string{"c1", "t"}), Sink: o, Store: o, Tools: []Tool{tool}})
	s.Call(func() {
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
	o.mu.Lock()
	if o.ends != 4 || len(o.missed) != 0 { // user, assistant, toolResult, assistant
		t.Fatalf("message_end events %d, announced before being stored: %v", o.ends, o.missed)
	}
	o.mu.Unlock()
	s.Call(func() {
		entries := s.Entries()
		if len(entries) != 4 {
			t.Fatalf("%d entries", len(entries))
		}
		parent := ""
		for i, e := range entries {
			if e.ParentID != parent || e.Type != EntryMessage || e.ID == "" {
				t.Fatalf("entry %d: %+v (want parent %q)", i, e, parent)
			}
			parent = e.ID
		}
		if s.Leaf() != parent {
			t.Fatalf("leaf %q, want %q", s.Leaf(), parent)
		}
		if got := len(s.Messages()); got != 4 {
			t.Fatalf("context has %d messages", got)
		}
		stored := o.Entries()
		if len(stored) != 4 || stored[3] != entries[3] {
			t.Fatal("the store did not receive every entry in order")
		}
	})
}

// The context is derived from the branch that ends at the leaf: moving the
// leaf back drops the later messages from the context, not from the
// record, and appending then starts a new branch.
func TestContextFollowsTheLeaf(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("a")})
	for _, p := range []string{"one", "two"} {
		s.Call(func() {
			if err := s.Prompt(p, PromptOptions{}); err != nil {
				t.Fatal(err)
			}
		})
		waitIdle(s)
	}
	s.Call(func() {
		entries := s.Entries()
		if len(entries) != 4 {
			t.Fatalf("%d entries", len(entries))
		}
		if err := s.rec.setLeaf(entries[1].ID); err != nil {
			t.Fatal(err)
		}
		if n := len(s.Messages()); n != 2 {
			t.Fatalf("context after moving the leaf: %d messages", n)
		}
		if err := s.rec.setLeaf("nope"); !errors.Is(err, ErrNoEntry) {
			t.Fatalf("setLeaf(unknown) = %v", err)
		}
		s.appendMessage(&UserMessage{Content: []ContentBlock{TextBlock("three")}})
		all := s.Entries()
		if len(all) != 5 || all[4].ParentID != entries[1].ID {
			t.Fatalf("new branch entry %+v", all[len(all)-1])
		}
		ctx := s.Messages()
		if len(ctx) != 3 || ctx[2].(*UserMessage).Text() != "three" {
			t.Fatalf("context %v", ctx)
		}
		if len(s.rec.branch(entries[3].ID)) != 4 {
			t.Fatal("the old branch is still in the record")
		}
	})
}

// An RPC bash execution is recorded through the same append: at once when
// idle, and deferred to the next prompt (before its user message) when a
// run is active.
func TestBashRecordsGoThroughAppend(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		<-gate
		return textReply("ok")(ctx, req, fn)
	})
	store := &MemoryStore{}
	s := startSession(t, Config{Provider: p, Store: store, Shell: shellFunc(func(cmd string) BashResult {
		code := 0
		return BashResult{ExitCode: &code, Output: cmd}
	})})
	bashDone := func() chan struct{} {
		ch := make(chan struct{})
		s.Call(func() { s.ExecuteBash("echo x", func(BashResult, error) { close(ch) }) })
		return ch
	}
	<-bashDone()
	s.Call(func() {
		if len(store.Entries()) != 1 || store.Entries()[0].Message.Role() != "bashExecution" {
			t.Fatalf("idle bash not recorded: %v", store.Entries())
		}
		if err := s.Prompt("first", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	<-bashDone() // while the run waits on the gate
	s.Call(func() {
		if len(store.Entries()) != 2 { // bash, user
			t.Fatalf("bash during a run recorded at once: %d entries", len(store.Entries()))
		}
	})
	close(gate)
	waitIdle(s)
	s.Call(func() {
		if err := s.Prompt("second", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
	var roles []string
	for _, e := range store.Entries() {
		roles = append(roles, e.Message.Role())
	}
	// The deferred execution joins when the next prompt starts, before its
	// user message.
	if got := strings.Join(roles, ","); got != "bashExecution,user,assistant,bashExecution,user,assistant" {
		t.Fatalf("record order %s", got)
	}
}

type shellFunc func(string) BashResult

func (f shellFunc) Exec(ctx context.Context, cmd string) (BashResult, error) { return f(cmd), nil }

// A run offers the tool set current when it builds each request; setTools
// during a call changes the next request, and get_state's dumpTools shows
// the new set at once, even when it has the same size as the old one.
func TestToolSetSnapshotAndStateCache(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var offered [][]string
	called, proceed := make(chan struct{}), make(chan struct{})
	calls := 0
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		offered = append(offered, names)
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			close(called)
			<-proceed
			return callsThenText([2]string{"c1", "a"})(ctx, req, fn)
		}
		return textReply("done")(ctx, req, fn)
	})
	a := &gateTool{name: "a", conc: Shared, log: new([]string)}
	b := &gateTool{name: "b", conc: Shared, log: new([]string)}
	s := startSession(t, Config{Provider: p, Tools: []Tool{a}})
	var before string
	s.Call(func() {
		before = string(s.AppendStateJSON(nil))
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	<-called // the first request has been built: it offered "a"
	s.Call(func() {
		s.setTools([]Tool{b})
		after := string(s.AppendStateJSON(nil))
		if !strings.Contains(before, `"name":"a"`) || !strings.Contains(after, `"name":"b"`) || strings.Contains(after, `"name":"a"`) {
			t.Fatalf("dumpTools not refreshed:\n%s\n%s", before, after)
		}
	})
	close(proceed)
	waitIdle(s)
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(offered) != "[[a] [b]]" {
		t.Fatalf("offered %v", offered)
	}
	// The call to "a" was resolved against the set its request offered.
	s.Call(func() {
		for _, m := range s.Messages() {
			if tr, ok := m.(*ToolResultMessage); ok && tr.IsError {
				t.Fatalf("tool call failed: %s", tr.Content[0].Text)
			}
		}
	})
}

// Work after agent_end keeps the session busy in its phase: a prompt then
// is refused as busy, get_state reports streaming, abort cancels the wait
// by kind, and only then does the session go idle.
func TestPostRunPhaseKeepsSessionBusy(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(int64(DeterministicEpoch))
	rec := &recorder{}
	s := startSession(t, Config{Provider: textReply("x"), Sink: rec, Clock: clock})
	waiting := make(chan struct{})
	var result error
	s.Call(func() {
		s.stages = append([]postStage{func(r *run, aborted bool) *postRun {
			return &postRun{phase: PhaseRetrying, act: ActRetry, work: func(ctx context.Context) bool {
				close(waiting)
				result = Sleep(ctx, clock, time.Hour)
				return false
			}}
		}}, s.stages...)
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	<-waiting
	s.Call(func() {
		if s.Phase() != PhaseRetrying || !s.IsStreaming() || s.isCompacting() {
			t.Fatalf("phase %v", s.Phase())
		}
		if err := s.Prompt("again", PromptOptions{}); !errors.Is(err, ErrBusy) {
			t.Fatalf("prompt during post-run work = %v, want ErrBusy", err)
		}
		if !strings.Contains(string(s.AppendStateJSON(nil)), `"isStreaming":true`) {
			t.Fatal("get_state does not report the busy phase")
		}
	})
	idle := make(chan struct{})
	s.Call(func() { s.Abort(func() { close(idle) }) })
	<-idle
	if !errors.Is(result, errAborted) {
		t.Fatalf("the wait ended with %v, want the abort", result)
	}
	s.Call(func() {
		if s.Phase() != PhaseIdle {
			t.Fatalf("phase %v after abort", s.Phase())
		}
	})
}

// A post-run stage that asks for another round starts a new agent_start
// on the same run goroutine; the clock's timer decides when.
func TestPostRunAgainStartsANewRound(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(int64(DeterministicEpoch))
	rec := &recorder{}
	s := startSession(t, Config{Provider: textReply("x"), Sink: rec, Clock: clock})
	rounds := 0
	s.Call(func() {
		s.stages = append([]postStage{func(r *run, aborted bool) *postRun {
			rounds++
			if rounds > 1 {
				return nil
			}
			return &postRun{phase: PhaseRetrying, act: ActRetry, work: func(ctx context.Context) bool {
				return Sleep(ctx, clock, 2*time.Second) == nil
			}}
		}}, s.stages...)
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	for clock.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	clock.Advance(2 * time.Second)
	waitIdle(s)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := strings.Join(rec.types, ",")
	if strings.Count(got, "agent_start") != 2 || strings.Count(got, "agent_end") != 2 || !strings.HasSuffix(got, "agent_end") {
		t.Fatalf("events %s", got)
	}
}

// The registry cancels by kind: abort_bash does not touch a run, abort
// does not touch bash.
func TestCancelByKind(t *testing.T) {
	t.Parallel()
	var a activities
	var got []string
	mk := func(name string) context.CancelCauseFunc {
		return func(error) { got = append(got, name) }
	}
	removeRun := a.add(ActRun, mk("run"))
	a.add(ActBash, mk("bash"))
	a.add(ActRetry, mk("retry"))
	if n := a.cancel(errAborted, ActBash); n != 1 || fmt.Sprint(got) != "[bash]" {
		t.Fatalf("cancel(bash) reached %d: %v", n, got)
	}
	got = nil
	removeRun()
	if n := a.cancel(errAborted, AbortKinds...); n != 1 || fmt.Sprint(got) != "[retry]" {
		t.Fatalf("cancel(abort kinds) reached %d: %v", n, got)
	}
	if a.count(ActBash) != 1 || a.count(ActRun) != 0 {
		t.Fatal("count")
	}
}

func TestManualClockAndSleep(t *testing.T) {
	t.Parallel()
	c := NewManualClock(1000)
	done := make(chan error, 1)
	go func() { done <- Sleep(context.Background(), c, 5*time.Second) }()
	for c.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	c.Advance(4 * time.Second)
	select {
	case <-done:
		t.Fatal("woke early")
	default:
	}
	c.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.NowMillis() != 6000 {
		t.Fatalf("now %d", c.NowMillis())
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errAborted)
	if err := Sleep(ctx, c, time.Hour); !errors.Is(err, errAborted) {
		t.Fatalf("cancelled sleep = %v", err)
	}
	if c.Waiters() != 0 {
		t.Fatal("a cancelled sleep left its timer")
	}
}

func TestProviderErrorWrapsItsCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("status 529")
	err := fmt.Errorf("stream: %w", &ProviderError{Kind: ErrorOverloaded, Status: 529, RetryAfter: time.Second, Err: cause})
	var pe *ProviderError
	if !errors.As(err, &pe) || !errors.Is(err, cause) {
		t.Fatal("ProviderError does not unwrap")
	}
	if pe.Error() != "status 529" || !pe.Kind.Retryable() || ErrorAuth.Retryable() || pe.Kind.String() != "overloaded" {
		t.Fatalf("%v %v", pe, pe.Kind)
	}
}

// fakeHost answers every dialog with a canned reply, or never.
type fakeHost struct {
	reply *DialogReply
	sent  chan struct{}
}

func (h *fakeHost) AwaitTool(ctx context.Context, id string, send func(), update func(ToolResult)) (ToolResult, error) {
	return ToolResult{}, ErrHostGone
}

func (h *fakeHost) AwaitDialog(ctx context.Context, id string, send func()) (DialogReply, error) {
	send()
	close(h.sent)
	if h.reply != nil {
		return *h.reply, nil
	}
	<-ctx.Done()
	return DialogReply{}, context.Cause(ctx)
}

type rawEvent struct{ typ, id string }

func (e rawEvent) EventType() string { return e.typ }
func (e rawEvent) AppendJSON(dst []byte) []byte {
	return fmt.Appendf(dst, `{"type":%q,"id":%q}`, e.typ, e.id)
}

// askHost emits its request through the executor with a fresh id and,
// when the activity is cancelled by kind, the withdrawal frame.
func TestAskHostSendsAndWithdraws(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	host := &fakeHost{sent: make(chan struct{})}
	s := startSession(t, Config{Provider: textReply("x"), Sink: rec, Host: host})
	errs := make(chan error, 1)
	go func() {
		_, err := askHost(s, context.Background(), nil, ActDialog, "ui",
			func(id string) Event { return rawEvent{"extension_ui_request", id} },
			func(id string) Event { return rawEvent{"extension_ui_request_cancel", id} },
			func(ctx context.Context, id string, send func()) (DialogReply, error) {
				return host.AwaitDialog(ctx, id, send)
			})
		errs <- err
	}()
	<-host.sent
	for s.acts.count(ActDialog) == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Cancel(ActDialog)
	if err := <-errs; !errors.Is(err, errAborted) {
		t.Fatalf("askHost = %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := strings.Join(rec.frames, "\n"); got != `{"type":"extension_ui_request","id":"ui_1"}`+"\n"+`{"type":"extension_ui_request_cancel","id":"ui_1"}` {
		t.Fatalf("frames:\n%s", got)
	}
}

// Posting from a function running on the executor is a latent deadlock
// (it waits on itself once the queue is full); the tests' check catches it.
func TestPostFromExecutorIsCaught(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("x")})
	var caught any
	s.Call(func() {
		func() {
			defer func() { caught = recover() }()
			s.Post(func() {})
		}()
	})
	if caught == nil {
		t.Fatal("Post from the executor was not caught")
	}
	ran := make(chan struct{})
	s.Call(func() { s.later(func() { close(ran) }) })
	<-ran
}

// Close waits for every goroutine the session started.
func TestCloseWaitsForRunGoroutines(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		<-release
		return textReply("x")(ctx, req, fn)
	})
	s := New(Config{Provider: p, Model: &Model{ID: "m"}, Clock: DeterministicEpoch, IDs: &SequentialIDs{}})
	go s.Loop()
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a run was active")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	s.Stop()
}

// The fire-and-forget UI requests encode in the original's key order.
func TestUIRequestFrames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{UIStatus{ID: "ui_1", Key: "retry", Text: "Retrying"}, `{"type":"extension_ui_request","id":"ui_1","method":"setStatus","statusKey":"retry","statusText":"Retrying"}`},
		{UIStatus{ID: "ui_2", Key: "retry"}, `{"type":"extension_ui_request","id":"ui_2","method":"setStatus","statusKey":"retry"}`},
		{UIWidget{ID: "ui_3", Key: "todos", Lines: []string{"a", "<b>"}, Placement: "belowEditor"}, `{"type":"extension_ui_request","id":"ui_3","method":"setWidget","widgetKey":"todos","widgetLines":["a","<b>"],"widgetPlacement":"belowEditor"}`},
		{UIWidget{ID: "ui_4", Key: "todos"}, `{"type":"extension_ui_request","id":"ui_4","method":"setWidget","widgetKey":"todos"}`},
		{UIEditorText{ID: "ui_5", Text: "edit me"}, `{"type":"extension_ui_request","id":"ui_5","method":"set_editor_text","text":"edit me"}`},
		{SetTitle{ID: "ui_6", Title: "T"}, `{"type":"extension_ui_request","id":"ui_6","method":"setTitle","title":"T"}`},
		{Notify{ID: "ui_7", Message: "m", NotifyType: "info"}, `{"type":"extension_ui_request","id":"ui_7","method":"notify","message":"m","notifyType":"info"}`},
	} {
		if got := string(tc.ev.AppendJSON(nil)); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// The custom roles reach a provider as the original converts them
// (agent-core §1.5); a role nobody knows stays out.
func TestConvertCustomRoles(t *testing.T) {
	t.Parallel()
	code := 1
	got := ConvertToLLM([]Message{
		&CustomMessage{CustomType: "note", Content: []ContentBlock{TextBlock("remember")}, Attribution: "agent"},
		&AssistantMessage{Content: []ContentBlock{TextBlock("ok")}},
		&BranchSummaryMessage{Summary: "tried X"},
		&CompactionSummaryMessage{Summary: "did Y", ProviderPayload: []byte(`{"a":1}`)},
		&AssistantMessage{Content: []ContentBlock{TextBlock("ok")}},
		&PythonExecutionMessage{Code: "print(1)", Output: "1", ExitCode: &code},
		&FileMentionMessage{Files: []FileMention{{Path: "a.go", Content: "package a"}}},
		&AssistantMessage{Content: []ContentBlock{TextBlock("ok")}},
		&ToolResultMessage{ToolCallID: "c", Content: []ContentBlock{TextBlock("long "), TextBlock("output")}, PrunedAt: 5},
		&ToolResultMessage{ToolCallID: "d", Content: []ContentBlock{{Type: BlockImage, Data: "x", MimeType: "image/png"}}, PrunedAt: 5},
		&OpaqueMessage{},
	})
	var texts []string
	for _, m := range got {
		switch v := m.(type) {
		case *UserMessage:
			texts = append(texts, "user:"+v.Text())
		case *ToolResultMessage:
			texts = append(texts, "tool:"+v.Content[0].Text)
		default:
			texts = append(texts, m.Role())
		}
	}
	joined := strings.Join(texts, "|")
	for _, want := range []string{
		"user:remember", "The following is a summary of a branch", "<summary>\ntried X\n</summary>",
		"do not redo work", "Ran Python:\n```python\nprint(1)\n```\nOutput:\n```\n1\n```\n\nExecution failed with code 1",
		"<system-reminder>\n<file path=\"a.go\">\npackage a\n</file>\n</system-reminder>",
		"tool:long output", "tool:[Output truncated]",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in\n%s", want, joined)
		}
	}
	if len(got) != 8 {
		t.Fatalf("%d messages (the opaque one must be dropped, consecutive text-only user messages merged): %s", len(got), joined)
	}
}
