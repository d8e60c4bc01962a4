package otel

import (
	"context"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// BenchmarkSpan is the in-process cost of one span with tracing on (issue
// 30: under 50 µs): a chat span started and ended under a run, with its
// attributes (model, usage, finish reason), through the batch processor
// the agent uses, into an exporter that drops them (the export itself is
// on the SDK's goroutine). BenchmarkSpanTool is an execute_tool span.
// Besides wall time, each reports cpu-ns/op, the process's CPU time per
// span (every goroutine's, the processor's included): on a loaded machine
// wall time counts other processes' turns too.
func BenchmarkSpan(b *testing.B) {
	tr := New(Options{Exporter: discard{}})
	defer tr.Shutdown(context.Background())
	m := engine.Model{ID: "gpt-x", Provider: "openai"}
	run := tr.StartRun("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", engine.RunTrace{SessionID: "s", Model: &m})
	defer run.End(engine.SpanEnd{})
	req := &engine.Request{Model: m}
	msg := &engine.AssistantMessage{Model: "gpt-x", StopReason: engine.StopStop, Usage: engine.Usage{Input: 100, Output: 20}}
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sp := tr.StartChat(run, req)
		sp.End(engine.SpanEnd{Message: msg})
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

func BenchmarkSpanTool(b *testing.B) {
	tr := New(Options{Exporter: discard{}})
	defer tr.Shutdown(context.Background())
	run := tr.StartRun("", engine.RunTrace{SessionID: "s"})
	defer run.End(engine.SpanEnd{})
	res := &engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock("ok")}}
	call := engine.ToolTrace{ID: "call-1", Name: "bash", Arguments: []byte(`{"command":"ls"}`)}
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sp := tr.StartTool(run, call)
		sp.End(engine.SpanEnd{Result: res})
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}
