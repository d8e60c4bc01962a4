package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// benchBranch is a 100,000-entry session of agent turns: a user message,
// an assistant call with its tool result, and an answer, with text of
// realistic sizes.
func benchBranch(n int) *transcript {
	long := strings.Repeat("The parser walks the token list once. ", 8) // ~300 bytes
	es := make([]*Entry, 0, n)
	for i := 0; len(es) < n; i++ {
		var m Message
		switch i % 4 {
		case 0:
			m = &UserMessage{Content: []ContentBlock{TextBlock(fmt.Sprintf("step %d: %s", i, long[:120]))}, Attribution: "user"}
		case 1:
			m = &AssistantMessage{Content: []ContentBlock{TextBlock("Reading."), {Type: BlockToolCall, ID: fmt.Sprint("c", i), Name: "read",
				Arguments: []byte(fmt.Sprintf(`{"path":"src/file%d.go"}`, i%500))}}, StopReason: StopToolUse, Usage: Usage{Input: 9000, Output: 40, TotalTokens: 9040}}
		case 2:
			m = &ToolResultMessage{ToolCallID: fmt.Sprint("c", i-1), ToolName: "read", Content: []ContentBlock{TextBlock(long + long)}}
		default:
			m = &AssistantMessage{Content: []ContentBlock{TextBlock(long)}, StopReason: StopStop, Usage: Usage{Input: 9500, Output: 80, TotalTokens: 9580}}
		}
		e := &Entry{Type: EntryMessage, ID: fmt.Sprintf("%08x", len(es)+1), Message: m}
		if len(es) > 0 {
			e.ParentID = es[len(es)-1].ID
		}
		es = append(es, e)
	}
	t, err := newTranscript(es, es[len(es)-1].ID, nil)
	if err != nil {
		panic(err)
	}
	return &t
}

// BenchmarkCompactionPrepare100k is what a compaction does before any
// model call on a 100,000-entry session: the branch walk and the
// preparation (cut point, split turn, keep budget, file lists). Targets:
// under 200 ms and 100 MB. peak-MB is the heap in use at the end of the
// preparation, beyond the session itself (the result is live then).
func BenchmarkCompactionPrepare100k(b *testing.B) {
	t := benchBranch(100000)
	_, keep, _ := CompactionSettings{}.Budgets(128000)
	var base, peak runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	b.ReportAllocs()
	b.ResetTimer()
	var p *CompactionPreparation
	for i := 0; i < b.N; i++ {
		var err error
		p, err = prepareCompaction(t.branch(t.leaf), keep)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&peak)
	b.ReportMetric(float64(peak.HeapInuse-min(base.HeapInuse, peak.HeapInuse))/(1<<20), "peak-MB")
	if len(p.ToSummarize) < 90000 {
		b.Fatalf("summarised %d messages", len(p.ToSummarize))
	}
}

// BenchmarkTTSRObserve5000Deltas is the engine's share of watching a
// 5,000-delta stream with 20 rules (see cmd/xcsh's
// BenchmarkStream5000DeltasTTSR20* for the whole stream).
func BenchmarkTTSRObserve5000Deltas(b *testing.B) {
	conds := []string{`console\.log\(`, `\bdebugger\b`, `(?i)todo:`, `eval\(`, `FIXME`, `process\.exit\(`, `rm -rf /`,
		`password\s*=\s*"`, `(?i)hack`, `fmt\.Println\(`, `panic\(`, `TODO\(`, `XXX`, `@ts-ignore`,
		`eslint-disable`, `print\(f?"`, `\.unwrap\(\)`, `(?i)lorem dolor`, `\d{6,}`, `[A-Z]{8,}`}
	var rules []*Rule
	for i, c := range conds {
		r := &Rule{Name: fmt.Sprint("r", i), Condition: []string{c}}
		if err := r.Compile(); err != nil {
			b.Fatal(err)
		}
		rules = append(rules, r)
	}
	ev := StreamEvent{Kind: StreamTextDelta, Delta: "lorem ipsum "}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ts := &ttsrStream{rules: rules, seen: map[string]bool{}}
		for range 5000 {
			if ts.observe(ev) != nil {
				b.Fatal("matched")
			}
		}
	}
}
