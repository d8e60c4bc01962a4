package engine

import (
	"context"
	"testing"
)

// BenchmarkPromptToRequest measures the agent's own time from a prompt to
// the provider call that answers it, and from a tool's result to the next
// call (the brief's budget: under 1 ms each), with a context of 200
// messages already in the session.
func BenchmarkPromptToRequest(b *testing.B) {
	called := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		called <- struct{}{}
		return textReply("ok")(ctx, req, fn)
	})
	s := New(Config{Provider: p, Model: &Model{ID: "m"}, Clock: DeterministicEpoch, IDs: &SequentialIDs{}})
	go s.Loop()
	s.Call(func() {
		for i := 0; i < 100; i++ {
			s.appendMessage(&UserMessage{Content: []ContentBlock{TextBlock("question")}})
			s.appendMessage(&AssistantMessage{Content: []ContentBlock{TextBlock("answer")}, StopReason: StopStop})
		}
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Call(func() {
			if err := s.Prompt("go", PromptOptions{}); err != nil {
				b.Fatal(err)
			}
		})
		<-called
		b.StopTimer()
		waitIdle(s)
		b.StartTimer()
	}
	b.StopTimer()
	s.Stop()
}

// BenchmarkToolResultToRequest: a tool call's result to the next provider
// call.
func BenchmarkToolResultToRequest(b *testing.B) {
	called := make(chan struct{}, 1)
	n := 0
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		n++
		if n%2 == 1 {
			return callsThenTextFirst(ctx, fn)
		}
		called <- struct{}{}
		return textReply("ok")(ctx, req, fn)
	})
	done := make(chan struct{}, 1)
	tool := &signalTool{ran: done}
	s := New(Config{Provider: p, Model: &Model{ID: "m"}, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Tools: []Tool{tool}})
	go s.Loop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.Call(func() {
			if err := s.Prompt("go", PromptOptions{}); err != nil {
				b.Fatal(err)
			}
		})
		<-done // the tool returns right after this
		b.StartTimer()
		<-called
		b.StopTimer()
		waitIdle(s)
		b.StartTimer()
	}
	b.StopTimer()
	s.Stop()
}

func callsThenTextFirst(ctx context.Context, fn func(StreamEvent) error) error {
	for _, ev := range []StreamEvent{
		{Kind: StreamToolCallStart, ToolCallID: "c1", ToolName: "sig"},
		{Kind: StreamToolCallEnd, Arguments: []byte(`{}`)},
		{Kind: StreamDone, StopReason: StopToolUse},
	} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

type signalTool struct{ ran chan struct{} }

func (*signalTool) Name() string             { return "sig" }
func (*signalTool) Description() string      { return "signals" }
func (*signalTool) Schema() []byte           { return []byte(`{"type":"object"}`) }
func (*signalTool) Concurrency() Concurrency { return Shared }
func (t *signalTool) Run(ctx context.Context, call ToolCall, update func(ToolResult)) (ToolResult, error) {
	t.ran <- struct{}{}
	return ToolResult{Content: []ContentBlock{TextBlock("ok")}}, nil
}
