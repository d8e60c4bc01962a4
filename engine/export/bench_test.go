package export

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// largeSession is n messages of tool-using turns (user, assistant with a
// tool call, tool result, assistant answer), each a few hundred bytes.
func largeSession(n int) Data {
	text := strings.Repeat("Some <text> & a line of output.\n", 8)
	entries := make([]*engine.Entry, 0, n)
	for i := 0; len(entries) < n; i++ {
		var m engine.Message
		switch i % 4 {
		case 0:
			m = &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}}
		case 1:
			m = &engine.AssistantMessage{Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: text},
				{Type: engine.BlockToolCall, ID: fmt.Sprint("call", i), Name: "read", Arguments: []byte(`{"path":"src/main.go","offset":1,"limit":200}`)},
			}, StopReason: engine.StopToolUse, Usage: engine.Usage{Input: 1000, Output: 50}}
		case 2:
			m = &engine.ToolResultMessage{ToolCallID: fmt.Sprint("call", i-1), ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock(text)}}
		case 3:
			m = &engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}, StopReason: engine.StopStop}
		}
		entries = append(entries, &engine.Entry{Type: engine.EntryMessage, ID: fmt.Sprintf("%08x", i), Message: m})
	}
	chain("", "", entries...)
	return Data{SessionID: "s", Title: "large", Entries: entries, Leaf: entries[len(entries)-1].ID}
}

func TestWriteHTMLLargeSession(t *testing.T) {
	t.Parallel()
	n := 10000
	if testing.Short() {
		n = 1000
	}
	out := render(t, largeSession(n))
	if p := inertProblems(out, pageScript); len(p) > 0 {
		t.Fatalf("large page: %s", strings.Join(p, "\n"))
	}
	if got := strings.Count(out, `<article class="msg`); got != n {
		t.Errorf("%d messages rendered, want %d", got, n)
	}
}

// BenchmarkWriteHTML10k renders a 10,000-message session.
func BenchmarkWriteHTML10k(b *testing.B) {
	d := largeSession(10000)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteHTML(io.Discard, d); err != nil {
			b.Fatal(err)
		}
	}
}
