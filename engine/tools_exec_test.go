package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// logMu guards the call logs of gateTools (several tools may share one).
var logMu sync.Mutex

// gateTool is a test tool whose calls block until released.
type gateTool struct {
	name string
	conc Concurrency
	log  *[]string
	gate chan struct{} // nil: return at once
}

func (g *gateTool) Name() string             { return g.name }
func (g *gateTool) Description() string      { return "test tool" }
func (g *gateTool) Schema() []byte           { return []byte(`{"type":"object"}`) }
func (g *gateTool) Concurrency() Concurrency { return g.conc }
func (g *gateTool) Run(ctx context.Context, call ToolCall, update func(ToolResult)) (ToolResult, error) {
	logMu.Lock()
	*g.log = append(*g.log, "start "+call.ID)
	logMu.Unlock()
	if g.gate != nil {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return ToolResult{Content: []ContentBlock{TextBlock("aborted")}, IsError: true}, nil
		}
	}
	return ToolResult{Content: []ContentBlock{TextBlock("ok " + call.ID)}}, nil
}

// callsThenText asks for the given tool calls on the first model call and
// answers with text on the second.
func callsThenText(calls ...[2]string) funcProvider {
	n := 0
	var mu sync.Mutex
	return func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		var evs []StreamEvent
		if first {
			for _, c := range calls {
				evs = append(evs, StreamEvent{Kind: StreamToolCallStart, ToolCallID: c[0], ToolName: c[1]},
					StreamEvent{Kind: StreamToolCallEnd, Arguments: []byte(`{}`)})
			}
			evs = append(evs, StreamEvent{Kind: StreamDone, StopReason: StopToolUse})
		} else {
			evs = []StreamEvent{{Kind: StreamTextStart}, {Kind: StreamTextDelta, Delta: "done"}, {Kind: StreamTextEnd}, {Kind: StreamDone, StopReason: StopStop}}
		}
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	}
}

type rejectAll struct{}

func (rejectAll) Check([]byte) error { return nil }

func (rejectAll) Validate(schema, args []byte) []string {
	return []string{"root: missing property \"path\""}
}

func newToolSession(t *testing.T, p Provider, sink Sink, v Validator, tools ...Tool) *Session {
	t.Helper()
	m := Model{ID: "m", API: "fake", Provider: "fake"}
	s := New(Config{Provider: p, Model: &m, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Sink: sink, Tools: tools, Validator: v})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	t.Cleanup(func() { waitIdle(s); s.Stop(); <-done })
	return s
}

func TestSharedToolsRunInParallel(t *testing.T) {
	t.Parallel()
	var log []string
	gate := make(chan struct{})
	a := &gateTool{name: "a", conc: Shared, log: &log, gate: gate}
	rec := &recorder{notify: make(chan string, 256)}
	s := newToolSession(t, callsThenText([2]string{"c1", "a"}, [2]string{"c2", "a"}), rec, nil, a)
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	// Both calls must start before either is released: they overlap.
	starts := 0
	for ev := range rec.notify {
		if ev == "tool_execution_start" {
			starts++
			if starts == 2 {
				break
			}
		}
	}
	close(gate)
	go func() {
		for range rec.notify {
		}
	}()
	waitIdle(s)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	joined := strings.Join(rec.types, " ")
	if !strings.Contains(joined, "tool_execution_start tool_execution_start tool_execution_end") {
		t.Fatalf("events: %s", joined)
	}
}

func TestExclusiveToolsRunAlone(t *testing.T) {
	t.Parallel()
	var log []string
	x := &gateTool{name: "x", conc: Exclusive, log: &log}
	rec := &recorder{}
	s := newToolSession(t, callsThenText([2]string{"c1", "x"}, [2]string{"c2", "x"}, [2]string{"c3", "missing"}), rec, nil, x)
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	waitIdle(s)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	joined := strings.Join(rec.types, " ")
	want := "tool_execution_start tool_execution_end message_start message_end tool_execution_start tool_execution_end message_start message_end tool_execution_start tool_execution_end"
	if !strings.Contains(joined, want) {
		t.Fatalf("events: %s", joined)
	}
	all := strings.Join(rec.frames, "\n")
	if !strings.Contains(all, `"text":"Tool missing not found"`) {
		t.Fatal("missing tool result not reported")
	}
}

func TestValidationFailureSkipsTool(t *testing.T) {
	t.Parallel()
	var log []string
	x := &gateTool{name: "x", conc: Shared, log: &log}
	rec := &recorder{}
	s := newToolSession(t, callsThenText([2]string{"c1", "x"}), rec, rejectAll{}, x)
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	waitIdle(s)
	logMu.Lock()
	defer logMu.Unlock()
	if len(log) != 0 {
		t.Fatalf("tool ran: %v", log)
	}
	all := strings.Join(rec.frames, "\n")
	if !strings.Contains(all, `Validation failed for tool \"x\":\n  - root: missing property \"path\"\n\nReceived arguments:\n{}`) {
		t.Fatalf("no validation text in %s", all)
	}
}

func TestImmediateInterruptSkipsRemainingCalls(t *testing.T) {
	t.Parallel()
	var log []string
	gate := make(chan struct{})
	x := &gateTool{name: "x", conc: Exclusive, log: &log, gate: gate}
	rec := &recorder{notify: make(chan string, 256)}
	s := newToolSession(t, callsThenText([2]string{"c1", "x"}, [2]string{"c2", "x"}), rec, nil, x)
	s.Call(func() {
		_ = s.SetInterruptMode(ModeImmediate)
		_ = s.Prompt("go", PromptOptions{})
	})
	for ev := range rec.notify {
		if ev == "tool_execution_start" {
			break
		}
	}
	s.Call(func() { s.Steer("change of plan", nil) })
	close(gate)
	go func() {
		for range rec.notify {
		}
	}()
	waitIdle(s)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	all := strings.Join(rec.frames, "\n")
	if !strings.Contains(all, `"toolCallId":"c2","toolName":"x","content":[{"type":"text","text":"Skipped due to queued user message."}]`) {
		t.Fatalf("c2 not skipped:\n%s", all)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if len(log) != 1 {
		t.Fatalf("second call ran: %v", log)
	}
	if !strings.Contains(all, `"text":"change of plan"`) {
		t.Fatal("steering message not delivered")
	}
}

func TestOrderedResultsReportInCallOrder(t *testing.T) {
	t.Parallel()
	var log []string
	gate := make(chan struct{})
	slow := &gateTool{name: "slow", conc: Shared, log: &log, gate: gate}
	fast := &gateTool{name: "fast", conc: Shared, log: &log}
	rec := &recorder{notify: make(chan string, 256)}
	m := Model{ID: "m", API: "fake", Provider: "fake"}
	s := New(Config{Provider: callsThenText([2]string{"c1", "slow"}, [2]string{"c2", "fast"}), Model: &m, Clock: DeterministicEpoch,
		IDs: &SequentialIDs{}, Sink: rec, Tools: []Tool{slow, fast}, OrderedResults: true})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	defer func() { waitIdle(s); s.Stop(); <-done }()
	s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
	starts := 0
	for ev := range rec.notify {
		if ev == "tool_execution_start" {
			if starts++; starts == 2 {
				break
			}
		}
	}
	// fast has finished (or will) before slow is released; its result must
	// still be reported second.
	close(gate)
	go func() {
		for range rec.notify {
		}
	}()
	waitIdle(s)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var ends []string
	for _, f := range rec.frames {
		if strings.HasPrefix(f, `{"type":"tool_execution_end"`) {
			ends = append(ends, f[strings.Index(f, `"toolCallId":"`)+14:][:2])
		}
	}
	if strings.Join(ends, ",") != "c1,c2" {
		t.Fatalf("end order %v", ends)
	}
}
