package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// spanLog is a Tracer that records what the engine opens and ends.
type spanLog struct {
	mu    sync.Mutex
	n     int
	lines []string
}

type logSpan struct {
	l    *spanLog
	name string
	tp   string
}

func (l *spanLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

func (l *spanLog) open(name, parent string) *logSpan {
	l.mu.Lock()
	l.n++
	sp := &logSpan{l: l, name: name, tp: fmt.Sprintf("00-%032d-%016d-01", 1, l.n)}
	l.mu.Unlock()
	l.add("start " + name + " parent=" + parent)
	return sp
}

func (l *spanLog) StartRun(parent string, r RunTrace) Span {
	return l.open("run "+r.SessionID+" "+r.Model.ID+" prompt="+r.Prompt, parent)
}
func (l *spanLog) StartChat(run Span, req *Request) Span {
	return l.open("chat "+req.Model.ID, run.TraceParent())
}
func (l *spanLog) StartTool(run Span, call ToolTrace) Span {
	return l.open("tool "+call.Name+" "+call.ID, run.TraceParent())
}
func (l *spanLog) has(prefix string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

func (s *logSpan) TraceParent() string { return s.tp }
func (s *logSpan) End(e SpanEnd) {
	what := ""
	switch {
	case e.Message != nil:
		what = string(e.Message.StopReason)
	case e.Result != nil:
		what = "result " + joinText(e.Result.Content)
	}
	s.l.add("end " + s.name + " " + what)
}

// ctxTool reports the traceparent its context carries.
type ctxTool struct{}

func (ctxTool) Name() string             { return "t" }
func (ctxTool) Description() string      { return "test tool" }
func (ctxTool) Schema() []byte           { return []byte(`{"type":"object"}`) }
func (ctxTool) Concurrency() Concurrency { return Shared }
func (ctxTool) Run(ctx context.Context, call ToolCall, _ func(ToolResult)) (ToolResult, error) {
	return ToolResult{Content: []ContentBlock{TextBlock(TraceParent(ctx))}}, nil
}

// TestTracerSpans: a run with a tool call opens a run span under the
// prompt's traceparent, a chat span per model call and a tool span per
// call under it; the provider and the tool run under their own span's
// traceparent; every span ends.
func TestTracerSpans(t *testing.T) {
	t.Parallel()
	log := &spanLog{}
	var provTP []string
	var mu sync.Mutex
	inner := callsThenText([2]string{"c1", "t"})
	prov := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		provTP = append(provTP, TraceParent(ctx))
		mu.Unlock()
		return inner(ctx, req, fn)
	})
	m := Model{ID: "m", API: "fake", Provider: "fake"}
	s := New(Config{Provider: prov, Model: &m, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Sink: &recorder{},
		Tools: []Tool{ctxTool{}}, Tracer: log, SessionID: "sess"})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	defer func() { s.Stop(); <-done }()
	parent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	s.Call(func() { _ = s.Prompt("go", PromptOptions{TraceParent: parent}) })
	waitIdle(s)
	s.Close() // the run goroutine has ended its span
	want := []string{
		"start run sess m prompt=go parent=" + parent,
		"start chat m parent=00-00000000000000000000000000000001-0000000000000001-01",
		"end chat m toolUse",
		"start tool t c1 parent=00-00000000000000000000000000000001-0000000000000001-01",
		"end tool t c1 result 00-00000000000000000000000000000001-0000000000000003-01",
		"start chat m parent=00-00000000000000000000000000000001-0000000000000001-01",
		"end chat m stop",
		"end run sess m prompt=go stop",
	}
	if got := strings.Join(log.lines, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("spans:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if strings.Join(provTP, " ") != "00-00000000000000000000000000000001-0000000000000002-01 00-00000000000000000000000000000001-0000000000000004-01" {
		t.Fatalf("the provider ran under %q", provTP)
	}
}

// TestTraceParentContext: a caller's traceparent travels in a context; a
// span replaces it; none is "".
func TestTraceParentContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if TraceParent(ctx) != "" || WithTraceParent(ctx, "") != ctx {
		t.Fatal("an empty context has a traceparent")
	}
	c := WithTraceParent(ctx, "00-a-b-01")
	if TraceParent(c) != "00-a-b-01" {
		t.Fatal(TraceParent(c))
	}
	if got := TraceParent(withSpan(c, &logSpan{tp: "00-c-d-01"})); got != "00-c-d-01" {
		t.Fatal(got)
	}
	if withSpan(c, nil) != c {
		t.Fatal("a nil span changed the context")
	}
}

// TestTracerSpansOfRefusedAttempts: a request refused for its size and
// sent again at a larger window is a chat span per attempt, each ended
// (the refused ones with an error), under one run span.
func TestTracerSpansOfRefusedAttempts(t *testing.T) {
	t.Parallel()
	log := &spanLog{}
	p := &windowProvider{usage: []int64{100}, need: 40000}
	m := Model{ID: "qwen3:8b", API: "ollama", Provider: "ollama", ContextWindow: 16384, MaxContextWindow: 40960, MaxTokens: 8192}
	s := windowSessionWith(t, Config{Provider: p, Model: &m, Tracer: log, SessionID: "sess"}, &recorder{})
	s.Call(func() { _ = s.Prompt("a long paste", PromptOptions{}) })
	waitIdle(s)
	// The run goroutine ends the run's span just after the session went
	// idle; the session itself is stopped by windowSessionWith's cleanup.
	for i := 0; i < 500 && !log.has("end run"); i++ {
		time.Sleep(2 * time.Millisecond)
	}
	want := []string{
		"start run sess qwen3:8b prompt=a long paste parent=",
		"start chat qwen3:8b parent=00-00000000000000000000000000000001-0000000000000001-01",
		"end chat qwen3:8b error",
		"start chat qwen3:8b parent=00-00000000000000000000000000000001-0000000000000001-01",
		"end chat qwen3:8b error",
		"start chat qwen3:8b parent=00-00000000000000000000000000000001-0000000000000001-01",
		"end chat qwen3:8b stop",
		"end run sess qwen3:8b prompt=a long paste stop",
	}
	if got := strings.Join(log.lines, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("spans:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
