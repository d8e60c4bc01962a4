package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
)

// BenchmarkStream5000Deltas streams a 5,000-delta completion from the local
// server through Stream: the cost per op is the SDK's SSE decoding plus the
// adapter's events, and a loopback HTTP round trip.
func BenchmarkStream5000Deltas(b *testing.B) {
	const n = 5000
	cs := make([]json.RawMessage, 0, n+3)
	cs = append(cs, openaitest.RoleChunk(id))
	for range n {
		cs = append(cs, openaitest.ContentChunk(id, "tok "))
	}
	cs = append(cs, openaitest.FinishChunk(id, "stop"), openaitest.UsageChunk(id, openaitest.Usage{PromptTokens: 10, CompletionTokens: n}))
	srv := openaitest.NewServer(&openaitest.Script{Repeat: true, Responses: []openaitest.Response{{Chunks: cs}}})
	defer srv.Close()

	p := openai.New(openai.Options{})
	req := &engine.Request{
		Model:    engine.Model{ID: "gpt-test", BaseURL: srv.URL, MaxTokens: 1000},
		Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}},
	}
	var deltas int
	fn := func(ev engine.StreamEvent) error {
		if ev.Kind == engine.StreamTextDelta {
			deltas++
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		deltas = 0
		if err := p.Stream(context.Background(), req, fn); err != nil {
			b.Fatal(err)
		}
		if deltas != n {
			b.Fatalf("%d deltas, want %d", deltas, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/delta")
}

// BenchmarkResponsesStream5000Deltas is BenchmarkStream5000Deltas for the
// Responses adapter: a 5,000-delta message in the Responses wire format
// (each delta an "event:" and a "data:" line, real key order) through
// Stream.
func BenchmarkResponsesStream5000Deltas(b *testing.B) {
	const n = 5000
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = "tok "
	}
	evs := openaitest.NewEvents(respID).Message("msg_1", deltas...).Completed(openaitest.ResponseUsage{Input: 10, Output: n})
	srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Repeat: true, Responses: []openaitest.Response{{Chunks: evs}}})
	defer srv.Close()

	p := openai.NewResponses(openai.Options{})
	req := &engine.Request{
		Model:    engine.Model{ID: "gpt-test", API: "openai-responses", BaseURL: srv.URL, MaxTokens: 1000},
		Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}},
	}
	var got int
	fn := func(ev engine.StreamEvent) error {
		if ev.Kind == engine.StreamTextDelta {
			got++
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		got = 0
		if err := p.Stream(context.Background(), req, fn); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("%d deltas, want %d", got, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/delta")
}
