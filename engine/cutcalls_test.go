package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// scriptedCalls streams evs on the first model call and a text reply on
// the next ones.
func scriptedCalls(evs ...StreamEvent) funcProvider {
	var mu sync.Mutex
	n := 0
	return func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if !first {
			return textReply("retried")(ctx, req, fn)
		}
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestCutToolCallsNeverRun(t *testing.T) {
	t.Parallel()
	start := func(id string) StreamEvent {
		return StreamEvent{Kind: StreamToolCallStart, ToolCallID: id, ToolName: "x"}
	}
	delta := func(d string) StreamEvent { return StreamEvent{Kind: StreamToolCallDelta, Delta: d} }
	end := func(args string) StreamEvent {
		ev := StreamEvent{Kind: StreamToolCallEnd}
		if args != "" {
			ev.Arguments = []byte(args)
		}
		return ev
	}
	done := func(r StopReason) StreamEvent { return StreamEvent{Kind: StreamDone, StopReason: r} }
	cases := []struct {
		name string
		evs  []StreamEvent
		ran  []string          // calls that ran
		text map[string]string // result text of the refused calls
	}{
		{"unterminated JSON, toolUse", []StreamEvent{start("c1"), delta(`{"command":"rm -rf victim/`), end(""), done(StopToolUse)},
			nil, map[string]string{"c1": CutArgsMessage}},
		{"final object wins over fragments", []StreamEvent{start("c1"), delta(`{"command":`), end(`{"command":"ls"}`), done(StopToolUse)},
			[]string{"c1"}, nil},
		{"no arguments at all", []StreamEvent{start("c1"), end(""), done(StopToolUse)},
			[]string{"c1"}, nil},
		{"invalid final and fragments", []StreamEvent{start("c1"), delta(`{"a":1`), end(`{"a":1`), done(StopToolUse)},
			nil, map[string]string{"c1": CutArgsMessage}},
		{"not an object", []StreamEvent{start("c1"), delta(`[1]`), end(""), done(StopToolUse)},
			nil, map[string]string{"c1": CutArgsMessage}},
		{"length: every call, even complete ones", []StreamEvent{start("c1"), delta(`{}`), end(""), start("c2"), delta(`{"command":"rm -rf vic`), end(""), done(StopLength)},
			nil, map[string]string{"c1": CutLengthMessage, "c2": CutLengthMessage}},
		{"only the cut one of two", []StreamEvent{start("c1"), delta(`{}`), end(""), start("c2"), delta(`{"command":"rm`), end(""), done(StopToolUse)},
			[]string{"c1"}, map[string]string{"c2": CutArgsMessage}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log []string
			x := &gateTool{name: "x", conc: Exclusive, log: &log}
			rec := &recorder{}
			s := newToolSession(t, scriptedCalls(tc.evs...), rec, nil, x)
			s.Call(func() { _ = s.Prompt("go", PromptOptions{}) })
			waitIdle(s)
			logMu.Lock()
			ran := strings.Join(log, ",")
			logMu.Unlock()
			var want []string
			for _, id := range tc.ran {
				want = append(want, "start "+id)
			}
			if ran != strings.Join(want, ",") {
				t.Errorf("ran %q, want %q", ran, want)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			all := strings.Join(rec.frames, "\n")
			for id, text := range tc.text {
				end := `{"type":"tool_execution_end","toolCallId":"` + id + `","toolName":"x","result":{"content":[{"type":"text","text":` + string(AppendJSONString(nil, text)) + `}],"details":{}},"isError":true`
				if !strings.Contains(all, end) {
					t.Errorf("no %s", end)
				}
			}
			// Every call keeps its start, end and result, and the model is
			// called again with the results.
			joined := strings.Join(rec.types, " ")
			if n, m := strings.Count(joined, "tool_execution_start"), strings.Count(joined, "tool_execution_end"); n != m || n != len(tc.ran)+len(tc.text) {
				t.Errorf("%d starts, %d ends: %s", n, m, joined)
			}
			if !strings.Contains(all, `"text":"retried"`) {
				t.Error("the model was not called again")
			}
		})
	}
}
