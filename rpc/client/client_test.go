package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestGetStateIdle(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session")
	ctx := testCtx(t)
	if c.Version() == "" {
		t.Error("no version from the ready frame")
	}
	s, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model == nil || s.Model.ID != "demo" || s.Model.Provider != "fake" || s.Model.Thinking == nil {
		t.Errorf("model = %+v", s.Model)
	}
	if s.IsStreaming || s.SteeringMode != "one-at-a-time" || s.InterruptMode != "wait" || s.SessionFile != "" ||
		s.SessionID == "" || s.TodoPhases == nil || len(s.DumpTools) != 7 || s.SystemPrompt == "" {
		t.Errorf("state = %+v", s)
	}
}

func TestPromptRunsToAgentEnd(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session")
	ctx := testCtx(t)
	events, cancel := c.Subscribe(0)
	defer cancel()
	h, err := c.Prompt(ctx, "hello", PromptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events, IsType("agent_end"))
	if evs[0].Type != "agent_start" {
		t.Errorf("first event %q, want agent_start", evs[0].Type)
	}
	const want = "Hello! I am the xcsh demo model. You said: hello"
	if got := assistantDeltas(evs); got != want {
		t.Errorf("streamed %q, want %q", got, want)
	}
	if err := h.Err(ctx); err != nil {
		t.Errorf("late error %v for a prompt that ran", err)
	}
	text, ok, err := c.GetLastAssistantText(ctx)
	if err != nil || !ok || text != want {
		t.Errorf("last assistant text = %q, %v, %v", text, ok, err)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil || len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Text() != "hello" || msgs[1].StopReason != "stop" {
		t.Errorf("messages = %+v, %v", msgs, err)
	}
}

func TestPromptBusyLateError(t *testing.T) {
	t.Parallel()
	slow := `{"turns":[{"steps":[{"text":["thinking about it"]},{"block":true}]}]}`
	c, _ := startAgent(t, map[string]string{"slow.json": slow}, "--model", "slow.json", "--no-session")
	ctx := testCtx(t)
	w := c.Watch(isUpdate("text_end"))
	if _, err := c.Prompt(ctx, "first", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := c.Prompt(ctx, "second", PromptOptions{})
	if err != nil {
		t.Fatalf("acknowledgement: %v", err)
	}
	wantCommandError(t, h.Err(ctx), "prompt", "Agent is already processing")

	// With streamingBehavior it is queued; the handle settles at the run's end.
	q, err := c.Prompt(ctx, "later", PromptOptions{StreamingBehavior: "followUp"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.GetState(ctx)
	if err != nil || s.QueuedMessageCount != 1 || s.PendingMessageCount != 1 || !s.IsStreaming {
		t.Fatalf("state = %+v, %v", s, err)
	}
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Err(ctx); err != nil {
		t.Errorf("queued prompt: late error %v", err)
	}
}

func TestUnknownCommandAnsweredWithoutTimeout(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session")
	// The client's own bound is far away: an answer must come from matching
	// the id-less frame, not from a timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	errs := make(chan error, 3)
	for _, typ := range []string{"frobnicate", "frobnicate", "get_integrations"} {
		go func() {
			_, err := c.Call(ctx, typ, map[string]any{"x": 1})
			errs <- err
		}()
	}
	for range 3 {
		err := <-errs
		if ce, ok := err.(*CommandError); !ok || !strings.HasPrefix(ce.Message, "Unknown command: ") {
			t.Errorf("err = %v, want Unknown command", err)
		}
	}
	if _, err := c.GetState(ctx); err != nil {
		t.Fatal(err)
	}
	// A session with nothing in it has nothing to compact.
	_, err := c.Compact(ctx, "")
	wantCommandError(t, err, "compact", "Nothing to compact (session too small)")
	todos, err := c.SetTodos(ctx, []TodoPhase{{ID: "phase-1", Name: "P", Tasks: []TodoItem{{ID: "task-1", Content: "c", Status: "pending", Details: "dropped"}}}})
	if err != nil || len(todos) != 1 || todos[0].Tasks[0].Details != "" {
		t.Fatalf("set_todos: %+v %v", todos, err)
	}
	if err := c.SetAutoCompaction(ctx, false); err != nil {
		t.Fatal(err)
	}
	if s, err := c.GetState(ctx); err != nil || s.AutoCompactionEnabled || len(s.TodoPhases) != 1 {
		t.Fatalf("state %+v %v", s, err)
	}
}

func TestSteerAndFollowUpQueued(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session")
	ctx := testCtx(t)
	if err := c.Steer(ctx, "steered"); err != nil {
		t.Fatal(err)
	}
	if err := c.FollowUp(ctx, "followed"); err != nil {
		t.Fatal(err)
	}
	for _, set := range []func(context.Context, string) error{c.SetSteeringMode, c.SetFollowUpMode} {
		if err := set(ctx, "all"); err != nil {
			t.Fatal(err)
		}
	}
	wantCommandError(t, c.SetInterruptMode(ctx, "sometimes"), "set_interrupt_mode", "")
	s, err := c.GetState(ctx)
	if err != nil || s.QueuedMessageCount != 2 || s.SteeringMode != "all" || s.FollowUpMode != "all" {
		t.Fatalf("state = %+v, %v", s, err)
	}
	w := c.Watch(IsType("agent_end"))
	if _, err := c.Prompt(ctx, "go", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range msgs {
		if m.Role == "user" {
			users = append(users, m.Text())
		}
	}
	if strings.Join(users, "|") != "go|steered|followed" {
		t.Errorf("user messages %q", users)
	}
}

func TestAbortDuringBlockAndAbortAndPrompt(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session")
	ctx := testCtx(t)
	events, cancel := c.Subscribe(4)
	defer cancel()
	if _, err := c.Prompt(ctx, "demo:block", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	collect(t, events, isUpdate("text_delta"))
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	// The abort answers after the run's closing events, so they are queued already.
	evs := collect(t, events, IsType("agent_end"))
	var end *Message
	for _, e := range evs {
		if e.Type == "message_end" {
			end, _ = e.Message()
		}
	}
	if end == nil || end.StopReason != "aborted" || end.ErrorMessage != "Request was aborted" {
		t.Errorf("final message %+v", end)
	}

	// abort_and_prompt during a blocked run: the new prompt runs.
	if _, err := c.Prompt(ctx, "demo:block", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	collect(t, events, isUpdate("text_delta"))
	h, err := c.AbortAndPrompt(ctx, "again")
	if err != nil {
		t.Fatal(err)
	}
	collect(t, events, IsType("agent_end")) // the aborted run
	evs = collect(t, events, IsType("agent_end"))
	if got := assistantDeltas(evs); !strings.HasSuffix(got, "You said: again") {
		t.Errorf("second run streamed %q", got)
	}
	if err := h.Err(ctx); err != nil {
		t.Error(err)
	}
}

func TestBashAndAbortBash(t *testing.T) {
	t.Parallel()
	c, dir := startAgent(t, nil, "--no-session")
	ctx := testCtx(t)
	r, err := c.Bash(ctx, "echo hello")
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode == nil || *r.ExitCode != 0 || r.Output != "hello\n" || r.Cancelled {
		t.Errorf("bash = %+v", r)
	}

	// The FIFO tells the test the command runs, without sleeping.
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	type out struct {
		r   *BashResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := c.Bash(ctx, "echo up > started; sleep 30")
		done <- out{r, err}
	}()
	if _, err := os.ReadFile(fifo); err != nil {
		t.Fatal(err)
	}
	if err := c.AbortBash(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !o.r.Cancelled || o.r.ExitCode != nil || !strings.HasPrefix(o.r.Output, "[Command cancelled]") {
		t.Errorf("aborted bash = %+v", o.r)
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session")
	ctx := testCtx(t)
	models, err := c.GetAvailableModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range models {
		found = found || (m.Provider == "fake" && m.ID == "demo" && len(m.Raw) > 0)
	}
	if !found {
		t.Errorf("fake/demo not among %d models", len(models))
	}
	_, err = c.SetModel(ctx, "fake", "nope")
	wantCommandError(t, err, "set_model", "Model not found: fake/nope")
	m, err := c.SetModel(ctx, "fake", "demo")
	if err != nil || m.ID != "demo" {
		t.Fatalf("set_model = %+v, %v", m, err)
	}
	if _, err := c.CycleModel(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SetThinkingLevel(ctx, "low"); err != nil {
		t.Fatal(err)
	}
	level, err := c.CycleThinkingLevel(ctx)
	if err != nil || level == "" {
		t.Errorf("cycle_thinking_level = %q, %v", level, err)
	}
	if err := c.SetAutoRetry(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := c.AbortRetry(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, wd := startAgent(t, nil, "--session-dir", dir)
	ctx := testCtx(t)
	for _, msg := range []string{"one", "two"} {
		w := c.Watch(IsType("agent_end"))
		if _, err := c.Prompt(ctx, msg, PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetSessionName(ctx, "  my\tsession "); err != nil {
		t.Fatal(err)
	}
	wantCommandError(t, c.SetSessionName(ctx, " "), "set_session_name", "Session name cannot be empty")
	s, err := c.GetState(ctx)
	if err != nil || filepath.Dir(s.SessionFile) != dir || s.SessionName != "my session" || s.MessageCount != 4 {
		t.Fatalf("state = %+v, %v", s, err)
	}
	first := s.SessionFile

	page, err := c.GetMessagesPage(ctx, PageOptions{Limit: 3})
	if err != nil || len(page.Messages) != 3 || page.TotalMessages != 4 || page.NextCursor == "" {
		t.Fatalf("page = %+v, %v", page, err)
	}
	page, err = c.GetMessagesPage(ctx, PageOptions{Limit: 3, Cursor: page.NextCursor})
	if err != nil || len(page.Messages) != 1 || page.NextCursor != "" || page.Messages[0].Role != "assistant" {
		t.Fatalf("last page = %+v, %v", page, err)
	}
	_, err = c.GetMessagesPage(ctx, PageOptions{Cursor: "!!!"})
	if ce := wantCommandError(t, err, "get_messages_page", ""); ce.Code != "invalid_cursor" {
		t.Errorf("code %q", ce.Code)
	}

	stats, err := c.GetSessionStats(ctx)
	if err != nil || stats.UserMessages != 2 || stats.AssistantMessages != 2 || stats.SessionFile != first {
		t.Errorf("stats = %+v, %v", stats, err)
	}
	branchMsgs, err := c.GetBranchMessages(ctx)
	if err != nil || len(branchMsgs) != 2 || branchMsgs[1].Text != "two" {
		t.Fatalf("branch messages = %+v, %v", branchMsgs, err)
	}
	forkMsgs, err := c.GetForkMessages(ctx)
	if err != nil || len(forkMsgs) != 2 {
		t.Fatalf("fork messages = %+v, %v", forkMsgs, err)
	}
	cmds, err := c.GetCommands(ctx)
	if err != nil || cmds == nil || len(cmds) != 0 {
		t.Errorf("get_commands = %v, %v", cmds, err)
	}
	if _, err := c.GetAvailableCommands(ctx); err != nil {
		t.Error(err)
	}
	path, err := c.ExportHTML(ctx, "out.html")
	if err != nil || path != "out.html" {
		t.Errorf("export_html = %q, %v", path, err)
	} else if _, err := os.Stat(filepath.Join(wd, "out.html")); err != nil {
		t.Error(err)
	}

	br, err := c.Branch(ctx, branchMsgs[1].EntryID)
	if err != nil || br.Text != "two" || br.Cancelled {
		t.Fatalf("branch = %+v, %v", br, err)
	}
	_, err = c.Fork(ctx, "nope")
	wantCommandError(t, err, "fork", "Invalid entry ID for forking")
	if cancelled, err := c.Clone(ctx); err != nil || cancelled {
		t.Fatalf("clone = %v, %v", cancelled, err)
	}

	if cancelled, err := c.NewSession(ctx, first); err != nil || cancelled {
		t.Fatalf("new_session = %v, %v", cancelled, err)
	}
	s, err = c.GetState(ctx)
	if err != nil || s.MessageCount != 0 || s.SessionFile == first {
		t.Fatalf("after new_session: %+v, %v", s, err)
	}
	if _, err := c.SwitchSession(ctx, first); err != nil {
		t.Fatal(err)
	}
	s, err = c.GetState(ctx)
	if err != nil || s.SessionFile != first || s.MessageCount != 4 {
		t.Fatalf("after switch_session: %+v, %v", s, err)
	}
	_, err = c.SwitchSession(ctx, "missing.jsonl")
	wantCommandError(t, err, "switch_session", "Cannot switch session")
}

func TestHostToolsRoundTrip(t *testing.T) {
	t.Parallel()
	script := `{"turns":[
  {"expect":{"toolsOffered":"echo_host"},"steps":[{"toolCall":{"id":"call_1","name":"echo_host","arguments":{"message":"hello"}}}]},
  {"expect":{"contextContains":"hello, from the host"},"steps":[{"toolCall":{"id":"call_2","name":"lookup","arguments":{}}}]},
  {"expect":{"contextContains":"not found"},"steps":[{"toolCall":{"id":"call_3","name":"ghost","arguments":{}}}]},
  {"steps":[{"text":"done"}]}
]}`
	c, _ := startAgent(t, map[string]string{"host.json": script}, "--model", "host.json", "--no-session", "--no-tools")
	ctx := testCtx(t)
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)
	tools := []HostTool{
		{Name: "echo_host", Description: "Echo", Parameters: schema,
			Handler: func(ctx context.Context, args json.RawMessage, update func(json.RawMessage)) (Result, error) {
				var a struct{ Message string }
				if err := json.Unmarshal(args, &a); err != nil {
					return Result{}, err
				}
				update(TextPartial("working"))
				update(TextPartial("almost"))
				return Result{Content: []Content{{Type: "text", Text: a.Message + ", from the host"}}, Details: json.RawMessage(`{"took":3}`)}, nil
			}},
		{Name: "lookup", Description: "Look up", Parameters: json.RawMessage(`{"type":"object"}`),
			Handler: func(context.Context, json.RawMessage, func(json.RawMessage)) (Result, error) {
				return Result{}, errors.New("not found")
			}},
		// Registered on the agent without a handler in the client.
		{Name: "ghost", Description: "No handler", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
	names, err := c.RegisterHostTools(ctx, tools)
	if err != nil || strings.Join(names, ",") != "echo_host,lookup,ghost" {
		t.Fatalf("register = %v, %v", names, err)
	}
	_, err = c.RegisterHostTools(ctx, []HostTool{{Name: "bad", Parameters: json.RawMessage(`{}`)}})
	wantCommandError(t, err, "set_host_tools", `Host tool "bad" must provide a non-empty description`)
	// A failed registration keeps the previous handlers.
	if c.tools["lookup"].Handler == nil {
		t.Fatal("handlers lost after a failed registration")
	}

	events, cancel := c.Subscribe(0)
	defer cancel()
	if _, err := c.Prompt(ctx, "echo hello", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events, IsType("agent_end"))
	type toolEnd struct {
		ToolName string
		IsError  bool
		Result   struct {
			Content []Content
			Details json.RawMessage
		}
	}
	var updates int
	var ends []toolEnd
	for _, e := range evs {
		switch e.Type {
		case "tool_execution_update":
			updates++
		case "tool_execution_end":
			var end toolEnd
			if err := e.Decode(&end); err != nil {
				t.Fatal(err)
			}
			ends = append(ends, end)
		}
	}
	if updates != 2 || len(ends) != 3 {
		t.Fatalf("%d updates, %d ends: %s", updates, len(ends), types(evs))
	}
	if ends[0].IsError || ends[0].Result.Content[0].Text != "hello, from the host" || string(ends[0].Result.Details) != `{"took":3}` {
		t.Errorf("echo_host end %+v", ends[0])
	}
	if !ends[1].IsError || ends[1].Result.Content[0].Text != "not found" {
		t.Errorf("lookup end %+v", ends[1])
	}
	if !ends[2].IsError || ends[2].Result.Content[0].Text != `Host tool "ghost" is not registered` {
		t.Errorf("ghost end %+v", ends[2])
	}
}

func TestHostToolCancelledOnAbort(t *testing.T) {
	t.Parallel()
	script := `{"turns":[{"steps":[{"toolCall":{"id":"call_1","name":"slow_job","arguments":{}}}]},{"steps":[{"text":"never"}]}]}`
	c, _ := startAgent(t, map[string]string{"host.json": script}, "--model", "host.json", "--no-session", "--no-tools")
	ctx := testCtx(t)
	started := make(chan struct{})
	cause := make(chan error, 1)
	_, err := c.RegisterHostTools(ctx, []HostTool{{Name: "slow_job", Description: "slow", Parameters: json.RawMessage(`{"type":"object"}`),
		Handler: func(hctx context.Context, _ json.RawMessage, _ func(json.RawMessage)) (Result, error) {
			close(started)
			<-hctx.Done()
			cause <- context.Cause(hctx)
			return TextResult("too late"), nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := c.Subscribe(0)
	defer cancel()
	if _, err := c.Prompt(ctx, "run", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-cause; !errors.Is(err, errHostCancel) {
		t.Errorf("handler ctx cause %v, want the agent's cancel", err)
	}
	evs := collect(t, events, IsType("agent_end"))
	var sawCancel bool
	for _, e := range evs {
		sawCancel = sawCancel || e.Type == "host_tool_cancel"
		if e.Type == "tool_execution_end" && !strings.Contains(string(e.Raw), `was aborted`) {
			t.Errorf("end %s", e.Raw)
		}
	}
	if !sawCancel {
		t.Error("no host_tool_cancel event")
	}
}

func TestClosePendingRequest(t *testing.T) {
	t.Parallel()
	c, dir := startAgent(t, nil, "--no-session")
	c.opts.CloseGrace = 50 * time.Millisecond // the pending bash would outlive any grace
	ctx := testCtx(t)
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Bash(ctx, "echo up > started; sleep 30")
		done <- err
	}()
	if _, err := os.ReadFile(fifo); err != nil {
		t.Fatal(err)
	}
	events, _ := c.Subscribe(0)
	if err := c.Close(); err == nil {
		t.Error("Close reported a clean exit for an agent it had to stop")
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("pending bash: %v, want ErrClosed", err)
	}
	if _, ok := <-events; ok {
		t.Error("subscription still open after Close")
	}
	if _, err := c.GetState(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("request after Close: %v", err)
	}
	<-c.Done()
}

func TestStartFailureCarriesStderr(t *testing.T) {
	t.Parallel()
	_, err := Start(testCtx(t), Options{Path: xcshBin, Args: []string{"--provider", "nope"}, Dir: t.TempDir(),
		Env: []string{"HOME=" + t.TempDir()}})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), `unknown provider "nope"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestRetryNoticeReachesUI(t *testing.T) {
	t.Parallel()
	flaky := `{"turns":[
  {"steps":[{"error":{"status":529,"message":"529 overloaded_error: Overloaded"}}]},
  {"expect":{"messageCount":1},"steps":[{"text":"Hello after a retry."}]}
]}`
	c, _ := startAgent(t, map[string]string{"flaky.json": flaky}, "--model", "flaky.json", "--no-session", "--retry-base-delay", "10ms")
	ctx := testCtx(t)
	// Fire-and-forget requests arrive on the reader goroutine: the handler
	// must not block (a retry also sets and clears a status).
	notices := make(chan UIRequest, 16)
	c.OnUI(UIFuncs{NotifyFunc: func(r UIRequest) {
		if r.Method == "notify" {
			select {
			case notices <- r:
			default:
			}
		}
	}})
	w := c.Watch(func(e Event) bool {
		var ok bool
		return e.Type == "auto_retry_end" && e.Field("success", &ok) && ok
	})
	if _, err := c.Prompt(ctx, "hello", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	n := <-notices
	if n.Method != "notify" || n.NotifyType != "warning" || !strings.HasPrefix(n.Message, "Retrying in") {
		t.Errorf("notice %+v", n)
	}
}

// The ask tool's dialog, from the real binary with --ui, is answered by the
// client's UI handler, and the answer is the tool's result.
func TestAskDialogAnsweredByHandler(t *testing.T) {
	t.Parallel()
	script := `{"turns":[
  {"steps":[{"toolCall":{"id":"c1","name":"ask","arguments":{"question":"Which?","options":["A","B"]}}}]},
  {"expect":{"contextContains":"\"B\""},"steps":[{"text":"B it is."}]}
]}`
	c, _ := startAgent(t, map[string]string{"ask.json": script}, "--model", "ask.json", "--no-session", "--ui", "--tools", "ask")
	ctx := testCtx(t)
	asked := make(chan UIRequest, 1)
	c.OnUI(UIFuncs{DialogFunc: func(ctx context.Context, req UIRequest) (UIResponse, error) {
		asked <- req
		return UIResponse{Value: "B"}, nil
	}})
	w := c.Watch(IsType("agent_end"))
	if _, err := c.Prompt(ctx, "pick one", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	req := <-asked
	if req.Method != "select" || len(req.Options) != 2 {
		t.Fatalf("dialog %+v", req)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; !strings.Contains(string(last.Raw), "B it is.") {
		t.Fatalf("last message %s", last.Raw)
	}
}
