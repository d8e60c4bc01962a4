package otel

import (
	"context"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// BenchmarkOtelOffCostsNothing is a whole run through the engine (prompt,
// a model call asking for a tool, the tool, a second model call, idle)
// with tracing off (Config.Tracer nil: the engine's state before tracing,
// plus a nil check per run, call and tool) and on (three spans per run:
// invoke_agent, two chat, one execute_tool, through the batch processor
// into an exporter that drops them). make bench runs it; the difference
// per run is the cost of tracing, over 4 spans. The off figure, compared
// with the same run before tracing existed, is BenchmarkPromptToRequest
// and BenchmarkToolResultToRequest of engine (docs/automation.md).
func BenchmarkOtelOffCostsNothing(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchRun(b, nil) })
	b.Run("on", func(b *testing.B) {
		tr := New(Options{Exporter: discard{}})
		defer tr.Shutdown(context.Background())
		benchRun(b, tr)
	})
}

type benchProvider struct{ n int }

func (p *benchProvider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	p.n++
	evs := []engine.StreamEvent{{Kind: engine.StreamTextStart}, {Kind: engine.StreamTextDelta, Delta: "ok"}, {Kind: engine.StreamTextEnd},
		{Kind: engine.StreamUsage, Usage: engine.Usage{Input: 10, Output: 2}}, {Kind: engine.StreamDone, StopReason: engine.StopStop}}
	if p.n%2 == 1 {
		evs = []engine.StreamEvent{{Kind: engine.StreamToolCallStart, ToolCallID: "c1", ToolName: "t"},
			{Kind: engine.StreamToolCallEnd, Arguments: []byte(`{}`)}, {Kind: engine.StreamDone, StopReason: engine.StopToolUse}}
	}
	for _, ev := range evs {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

type benchTool struct{}

func (benchTool) Name() string                    { return "t" }
func (benchTool) Description() string             { return "a tool" }
func (benchTool) Schema() []byte                  { return []byte(`{"type":"object"}`) }
func (benchTool) Concurrency() engine.Concurrency { return engine.Shared }
func (benchTool) Run(context.Context, engine.ToolCall, func(engine.ToolResult)) (engine.ToolResult, error) {
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock("ok")}}, nil
}

type nullSink struct{}

func (nullSink) Event(engine.Event) {}

// benchRun runs b.N runs, each in a new session (a session's growing
// context would make later runs dearer than the first).
func benchRun(b *testing.B, tr engine.Tracer) {
	idle := make(chan struct{}, 1)
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg := engine.Config{Provider: &benchProvider{}, Model: &engine.Model{ID: "m", Provider: "p"}, Clock: engine.DeterministicEpoch,
			IDs: &engine.SequentialIDs{}, Sink: nullSink{}, Tools: []engine.Tool{benchTool{}}}
		if tr != nil { // a nil *Tracer in the interface would not be nil
			cfg.Tracer = tr
		}
		s := engine.New(cfg)
		done := make(chan struct{})
		go func() { s.Loop(); close(done) }()
		start := cpuTime()
		b.StartTimer()
		s.Call(func() {
			if err := s.Prompt("go", engine.PromptOptions{Done: func(engine.TurnResult) { idle <- struct{}{} }}); err != nil {
				b.Fatal(err)
			}
		})
		<-idle
		b.StopTimer()
		cpu += cpuTime() - start
		s.Stop()
		<-done
		s.Close()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
