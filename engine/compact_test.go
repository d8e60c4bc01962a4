package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCompactionBudgets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		window                   int
		reserve, keep, threshold int64
	}{
		{200000, 16384, 20000, 170000},
		{128000, 16384, 20000, 108800},
		{32768, 16384, 8192, 16384},
		{8192, 4096, 2048, 4096},
		{0, 16384, 20000, 0},
	}
	for _, tt := range tests {
		r, k, th := CompactionSettings{}.Budgets(tt.window)
		if r != tt.reserve || k != tt.keep || th != tt.threshold {
			t.Errorf("window %d: %d/%d/%d, want %d/%d/%d", tt.window, r, k, th, tt.reserve, tt.keep, tt.threshold)
		}
	}
	if _, _, th := (CompactionSettings{ThresholdTokens: 500000}).Budgets(1000); th != 999 {
		t.Errorf("thresholdTokens clamp: %d", th)
	}
	if _, _, th := (CompactionSettings{ThresholdPercent: 50}).Budgets(1000); th != 500 {
		t.Errorf("thresholdPercent: %d", th)
	}
}

// entries builds a branch of message entries e1, e2, ... from messages.
func entries(msgs ...Message) []*Entry {
	var out []*Entry
	for i, m := range msgs {
		e := &Entry{Type: EntryMessage, ID: fmt.Sprintf("e%d", i+1), Message: m}
		if i > 0 {
			e.ParentID = out[i-1].ID
		}
		out = append(out, e)
	}
	return out
}

func user(s string) *UserMessage { return &UserMessage{Content: []ContentBlock{TextBlock(s)}} }
func reply(s string) *AssistantMessage {
	return &AssistantMessage{Content: []ContentBlock{TextBlock(s)}, StopReason: StopStop}
}
func toolCall(name, args string) *AssistantMessage {
	return &AssistantMessage{Content: []ContentBlock{{Type: BlockToolCall, ID: "c", Name: name, Arguments: []byte(args)}}, StopReason: StopToolUse}
}
func result(s string) *ToolResultMessage {
	return &ToolResultMessage{ToolName: "bash", Content: []ContentBlock{TextBlock(s)}}
}

func TestPrepareCompaction(t *testing.T) {
	t.Parallel()
	x := strings.Repeat("x", 400) // 100 tokens
	t.Run("cut at a user message", func(t *testing.T) {
		b := entries(user("q1 "+x), reply("a1 "+x), user("q2 "+x), reply("a2 "+x))
		p, err := prepareCompaction(b, 150)
		if err != nil {
			t.Fatal(err)
		}
		if p.FirstKeptEntryID != "e3" || len(p.ToSummarize) != 2 || len(p.TurnPrefix) != 0 || len(p.Recent) != 2 {
			t.Fatalf("%+v", p)
		}
	})
	t.Run("never at a tool result; split turn", func(t *testing.T) {
		b := entries(user("q1 "+x), toolCall("read", `{"path":"a.go"}`), result(x), toolCall("edit", `{"path":"b.go","edits":[{"path":"c.go"}]}`), result(x), reply("done "+x))
		p, err := prepareCompaction(b, 150)
		if err != nil {
			t.Fatal(err)
		}
		// Walking back: e6 (100), e5 (200 >= 150): the first cut point at
		// or after e5 is e6, an assistant message: the turn from e1 splits.
		if p.FirstKeptEntryID != "e6" || len(p.ToSummarize) != 0 || len(p.TurnPrefix) != 5 {
			t.Fatalf("first kept %s, %d to summarise, %d prefix", p.FirstKeptEntryID, len(p.ToSummarize), len(p.TurnPrefix))
		}
		if strings.Join(p.ReadFiles, ",") != "a.go" || strings.Join(p.ModifiedFiles, ",") != "b.go,c.go" {
			t.Errorf("files %v %v", p.ReadFiles, p.ModifiedFiles)
		}
	})
	t.Run("everything fits: nothing to compact", func(t *testing.T) {
		_, err := prepareCompaction(entries(user("hi"), reply("hello")), 20000)
		if !errors.Is(err, ErrNothingToCompact) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("already compacted", func(t *testing.T) {
		b := entries(user("hi"), reply("hello"))
		b = append(b, &Entry{Type: EntryCompaction, ID: "c1", ParentID: "e2", Compaction: &Compaction{Summary: "s", FirstKeptEntryID: "e2"}})
		if _, err := prepareCompaction(b, 10); !errors.Is(err, ErrAlreadyCompacted) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("iterative: kept messages of the previous compaction are summarised again", func(t *testing.T) {
		b := entries(user("q1 "+x), reply("a1 "+x), user("q2 "+x), reply("a2 "+x))
		no := false
		b = append(b, &Entry{Type: EntryCompaction, ID: "c1", ParentID: "e4", Compaction: &Compaction{Summary: "old summary", FirstKeptEntryID: "e3",
			Details: []byte(`{"readFiles":["old.go"],"modifiedFiles":[]}`), FromExtension: &no}})
		more := entries(user("q3 "+x), reply("a3 "+x))
		more[0].ParentID = "c1"
		more[0].ID, more[1].ID, more[1].ParentID = "e5", "e6", "e5"
		b = append(b, more...)
		p, err := prepareCompaction(b, 150)
		if err != nil {
			t.Fatal(err)
		}
		if p.PreviousSummary != "old summary" || p.FirstKeptEntryID != "e5" || len(p.ToSummarize) != 2 ||
			p.ToSummarize[0].(*UserMessage).Text() != "q2 "+x {
			t.Fatalf("%+v", p)
		}
		if strings.Join(p.ReadFiles, ",") != "old.go" {
			t.Errorf("files %v", p.ReadFiles)
		}
	})
	t.Run("usage calibrates the keep budget", func(t *testing.T) {
		a := reply("a1 " + x)
		a.Usage = Usage{Input: 800, Output: 10, TotalTokens: 810} // the estimate before it is 101: ratio ~8
		b := entries(user("q1 "+x), a, user("q2 "+x), reply("a2 "+x), user("q3"), reply("a3"))
		p, err := prepareCompaction(b, 400)
		if err != nil {
			t.Fatal(err)
		}
		if p.TokensBefore != 810 || p.Ratio < 7 || p.FirstKeptEntryID != "e4" || len(p.ToSummarize) != 2 || len(p.TurnPrefix) != 1 {
			t.Fatalf("tokens %d ratio %f first kept %s", p.TokensBefore, p.Ratio, p.FirstKeptEntryID)
		}
	})
}

func TestSerializeConversation(t *testing.T) {
	t.Parallel()
	a := &AssistantMessage{Content: []ContentBlock{{Type: BlockThinking, Thinking: "hmm"}, TextBlock("Let me look."),
		{Type: BlockToolCall, Name: "read", Arguments: []byte(`{"path":"a.go","limit":10}`)}, {Type: BlockToolCall, Name: "bash", Arguments: []byte(`{"command":"ls"}`)}}}
	long := strings.Repeat("é", 1500) // 3000 bytes
	got := serializeConversation([]Message{user("hi"), a, result(long)})
	want := "[User]: hi\n\n[Assistant thinking]: hmm\n\n[Assistant]: Let me look.\n\n[Assistant tool calls]: read(path=\"a.go\", limit=10); bash(command=\"ls\")\n\n[Tool result]: " +
		strings.Repeat("é", 1000) + "\n\n[... 1000 more characters truncated]"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWithFileLists(t *testing.T) {
	t.Parallel()
	many := make([]string, 22)
	for i := range many {
		many[i] = fmt.Sprintf("f%02d", i)
	}
	got := withFileLists("## Goal\nx\n\n<read-files>\nold\n</read-files>\n\n<modified-files>\nold\n</modified-files>\n", []string{"a"}, many)
	if !strings.HasPrefix(got, "## Goal\nx\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nf00\n") ||
		!strings.HasSuffix(got, "f19\n… (2 more files omitted)\n</modified-files>") {
		t.Errorf("got %q", got)
	}
}

// summaryProvider answers every call with the next of its texts and
// records the requests.
type summaryProvider struct {
	mu    sync.Mutex
	texts []string
	reqs  []*Request
	err   func(n int) error
}

func (p *summaryProvider) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	p.mu.Lock()
	n := len(p.reqs)
	p.reqs = append(p.reqs, req)
	var err error
	if p.err != nil {
		err = p.err(n)
	}
	text := ""
	if err == nil && len(p.texts) > 0 {
		text, p.texts = p.texts[0], p.texts[1:]
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	for _, ev := range []StreamEvent{{Kind: StreamTextStart}, {Kind: StreamTextDelta, Delta: text}, {Kind: StreamTextEnd},
		{Kind: StreamUsage, Usage: Usage{Input: 10, Output: 5, TotalTokens: 15}}, {Kind: StreamDone, StopReason: StopStop}} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

func lastUserText(req *Request) string {
	return req.Messages[len(req.Messages)-1].(*UserMessage).Text()
}

func compactSession(t *testing.T, p Provider, window int, rec *recorder) *Session {
	t.Helper()
	m := Model{ID: "m", API: "fake", Provider: "fake", ContextWindow: window, MaxTokens: 30000}
	s := New(Config{Provider: p, Model: &m, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Sink: rec, RetryBaseDelay: 1})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	t.Cleanup(func() {
		waitIdle(s)
		s.Stop()
		<-done
		s.Close()
	})
	return s
}

func compactNow(s *Session, custom string) (*CompactionResult, error) {
	type out struct {
		r   *CompactionResult
		err error
	}
	ch := make(chan out, 1)
	s.Post(func() { s.Compact(custom, func(r *CompactionResult, err error) { ch <- out{r, err} }) })
	o := <-ch
	return o.r, o.err
}

func TestManualCompaction(t *testing.T) {
	t.Parallel()
	x := strings.Repeat("x", 400)
	p := &summaryProvider{texts: []string{"## Goal\nparse", "I parsed."}}
	rec := &recorder{}
	s := compactSession(t, p, 800, rec) // keep 200 tokens, reserve 400
	s.Call(func() {
		for _, m := range []Message{user("q1 " + x), toolCall("write", `{"path":"out.txt"}`), result("ok"), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)} {
			s.appendMessage(m)
		}
		s.SetTodos([]TodoPhase{{ID: "p", Tasks: []TodoItem{{ID: "t", Status: "pending"}}}})
	})
	res, err := compactNow(s, "the parser")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"summary":"## Goal\nparse\n\n<modified-files>\nout.txt\n</modified-files>","shortSummary":"I parsed.","firstKeptEntryId":"00000005","tokensBefore":0,"details":{"readFiles":[],"modifiedFiles":["out.txt"]},"preserveData":{}}`
	if got := string(res.AppendJSON(nil)); got != want {
		t.Errorf("result\n%s\nwant\n%s", got, want)
	}
	if len(p.reqs) != 2 {
		t.Fatalf("%d requests", len(p.reqs))
	}
	first := lastUserText(p.reqs[0])
	if !strings.HasPrefix(first, "<conversation>\n[User]: q1 ") || !strings.Contains(first, "[Assistant tool calls]: write(path=\"out.txt\")") ||
		!strings.HasSuffix(first, "\n\nAdditional focus: the parser") || strings.Contains(first, "q2") || p.reqs[0].SystemPrompt != summarySystemPrompt {
		t.Errorf("summary prompt:\n%s", first)
	}
	if p.reqs[0].Model.MaxTokens != 320 || p.reqs[1].Model.MaxTokens != 80 { // 0.8 and 0.2 of the reserve
		t.Errorf("budgets %d %d", p.reqs[0].Model.MaxTokens, p.reqs[1].Model.MaxTokens)
	}
	if !strings.Contains(lastUserText(p.reqs[1]), "[User]: q2") {
		t.Errorf("short summary prompt:\n%s", lastUserText(p.reqs[1]))
	}
	s.Call(func() {
		ctx := s.rec.context
		if len(ctx) != 3 {
			t.Fatalf("context %d messages", len(ctx))
		}
		if cs, ok := ctx[0].(*CompactionSummaryMessage); !ok || cs.ShortSummary != "I parsed." {
			t.Errorf("head %T", ctx[0])
		}
		if len(s.todo.phases) != 0 {
			t.Errorf("set_todos state survived: %+v", s.todo.phases)
		}
	})
	// Again at once: the branch ends in the compaction.
	if _, err := compactNow(s, ""); !errors.Is(err, ErrAlreadyCompacted) {
		t.Errorf("second compaction: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.types) != 0 {
		t.Errorf("manual compaction emitted %v", rec.types)
	}
}

func TestCompactionCancelledByAbort(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	s := compactSession(t, p, 400, &recorder{})
	x := strings.Repeat("x", 400)
	s.Call(func() {
		for _, m := range []Message{user("q1 " + x), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)} {
			s.appendMessage(m)
		}
	})
	errs := make(chan error, 1)
	s.Post(func() { s.Compact("", func(_ *CompactionResult, err error) { errs <- err }) })
	<-started
	s.Call(func() {
		if !s.isCompacting() || s.IsStreaming() {
			t.Errorf("compacting %v streaming %v", s.isCompacting(), s.IsStreaming())
		}
	})
	s.Cancel(AbortKinds...)
	if err := <-errs; !errors.Is(err, ErrCompactionCancelled) {
		t.Fatalf("err %v", err)
	}
	s.Call(func() {
		if s.Phase() != PhaseIdle || len(s.rec.context) != 4 {
			t.Errorf("phase %v, %d messages", s.Phase(), len(s.rec.context))
		}
	})
}

func TestCompactionHook(t *testing.T) {
	t.Parallel()
	p := &summaryProvider{texts: []string{"model summary", "short"}}
	s := compactSession(t, p, 400, &recorder{})
	x := strings.Repeat("x", 400)
	var seen *CompactionRequest
	s.Call(func() {
		for _, m := range []Message{user("q1 " + x), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)} {
			s.appendMessage(m)
		}
		s.AddCompactionHook(func(_ context.Context, req *CompactionRequest) CompactionVerdict {
			seen = req
			return CompactionVerdict{AdditionalContext: []string{"keep the API stable"}}
		})
	})
	if _, err := compactNow(s, ""); err != nil {
		t.Fatal(err)
	}
	if seen == nil || seen.Reason != "manual" || seen.Preparation.FirstKeptEntryID == "" {
		t.Fatalf("hook saw %+v", seen)
	}
	if !strings.Contains(lastUserText(p.reqs[0]), "<additional-context>\n- keep the API stable\n</additional-context>\n\n") {
		t.Errorf("prompt:\n%s", lastUserText(p.reqs[0]))
	}
	// A hook that writes the summary itself: no model call, fromExtension.
	s.Call(func() {
		s.appendMessage(user("q3 " + x))
		s.appendMessage(reply("a3 " + x))
		s.AddCompactionHook(func(context.Context, *CompactionRequest) CompactionVerdict {
			return CompactionVerdict{Result: &CompactionResult{Summary: "from the extension"}}
		})
	})
	n := len(p.reqs)
	res, err := compactNow(s, "")
	if err != nil || res.Summary != "from the extension" || len(p.reqs) != n {
		t.Fatalf("res %+v err %v, %d calls", res, err, len(p.reqs)-n)
	}
	s.Call(func() {
		e := s.rec.entries[len(s.rec.entries)-1]
		if e.Compaction == nil || e.Compaction.FromExtension == nil || !*e.Compaction.FromExtension {
			t.Errorf("entry %+v", e.Compaction)
		}
	})
}

func TestOverflowRecoveryAndThreshold(t *testing.T) {
	t.Parallel()
	x := strings.Repeat("x", 400)
	calls := 0
	var mu sync.Mutex
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case n == 1:
			return &ProviderError{Kind: ErrorContextOverflow, Status: 400, Message: "400 the input length exceeds the context length"}
		case req.SystemPrompt == summarySystemPrompt:
			return textReply("summary ", fmt.Sprint(n))(ctx, req, fn)
		}
		// Over the threshold of a 1000-token window (850).
		for _, ev := range []StreamEvent{{Kind: StreamTextStart}, {Kind: StreamTextDelta, Delta: "answer"}, {Kind: StreamTextEnd},
			{Kind: StreamUsage, Usage: Usage{Input: 900, Output: 5, TotalTokens: 905}}, {Kind: StreamDone, StopReason: StopStop}} {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	})
	rec := &recorder{}
	s := compactSession(t, p, 1000, rec)
	s.Call(func() {
		for _, m := range []Message{user("q1 " + x), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)} {
			s.appendMessage(m)
		}
		s.compact.disabled = false
		if err := s.Prompt("q3 "+x, PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitIdle(s)
	rec.mu.Lock()
	var got []string
	for i, ty := range rec.types {
		switch ty {
		case "agent_start", "agent_end", "auto_compaction_start", "auto_compaction_end", "auto_retry_start":
			f := rec.frames[i]
			if i := strings.Index(f, `,"result"`); i > 0 {
				f = f[:i] + f[strings.Index(f, `,"aborted"`):]
			}
			if ty == "agent_end" {
				f = "agent_end"
			}
			got = append(got, f)
		}
	}
	rec.mu.Unlock()
	want := []string{`{"type":"agent_start"}`, "agent_end",
		`{"type":"auto_compaction_start","reason":"overflow","action":"context-full"}`,
		`{"type":"auto_compaction_end","action":"context-full","aborted":false,"willRetry":true}`,
		`{"type":"agent_start"}`, "agent_end",
		`{"type":"auto_compaction_start","reason":"threshold","action":"context-full"}`,
		`{"type":"auto_compaction_end","action":"context-full","aborted":false,"willRetry":false}`,
		`{"type":"agent_start"}`, "agent_end",
		`{"type":"auto_compaction_start","reason":"threshold","action":"context-full"}`,
	}
	if strings.Join(got[:min(len(got), len(want))], "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s", strings.Join(got, "\n"))
	}
	s.Call(func() {
		// The failed message stays in the record.
		failed := 0
		for _, e := range s.rec.entries {
			if a, ok := e.Message.(*AssistantMessage); ok && a.StopReason == StopError {
				failed++
			}
		}
		if failed != 1 {
			t.Errorf("%d failed messages recorded", failed)
		}
	})
}
