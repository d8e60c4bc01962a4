package sessionfile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

const t0 = 1767225600000 // 2026-01-01T00:00:00Z

// chain gives entries ids and links each to the one before, as the
// engine's transcript does.
func chain(entries ...*engine.Entry) []*engine.Entry {
	parent := ""
	for i, e := range entries {
		e.ID = fmt.Sprintf("%08x", 0xa0000000+i)
		e.ParentID = parent
		e.Timestamp = t0 + int64(i)
		parent = e.ID
	}
	return entries
}

func userEntry(text string) *engine.Entry {
	return &engine.Entry{Type: engine.EntryMessage, Message: &engine.UserMessage{
		Content: []engine.ContentBlock{engine.TextBlock(text)}, Timestamp: t0}}
}

func assistantEntry(text string) *engine.Entry {
	return &engine.Entry{Type: engine.EntryMessage, Message: &engine.AssistantMessage{
		Content: []engine.ContentBlock{engine.TextBlock(text)}, API: "openai-completions",
		Provider: "ollama", Model: "qwen3", StopReason: engine.StopStop, Timestamp: t0}}
}

// conversation is a realistic mix: model and thinking changes, then
// user/assistant/tool result turns.
func conversation(turns int) []*engine.Entry {
	es := []*engine.Entry{
		{Type: engine.EntryModelChange, Model: "ollama/qwen3"},
		{Type: engine.EntryThinkingLevelChange},
	}
	for i := 0; i < turns; i++ {
		es = append(es, userEntry(fmt.Sprintf("question %d: please read main.go and tell me what it does", i)))
		a := assistantEntry("Let me look.")
		a.Message.(*engine.AssistantMessage).Content = append(a.Message.(*engine.AssistantMessage).Content,
			engine.ContentBlock{Type: engine.BlockToolCall, ID: fmt.Sprintf("call_%d", i), Name: "read",
				Arguments: []byte(`{"path":"main.go"}`)})
		es = append(es, a, &engine.Entry{Type: engine.EntryMessage, Message: &engine.ToolResultMessage{
			ToolCallID: fmt.Sprintf("call_%d", i), ToolName: "read",
			Content: []engine.ContentBlock{engine.TextBlock("package main\n\nfunc main() {}\n")}, Timestamp: t0}})
	}
	return chain(es...)
}

var (
	hex8  = regexp.MustCompile(`^[0-9a-f]{8}$`)
	hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)
	iso   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// checkFormat checks the lines of a file we wrote against the fields of
// agent-core.md §5.2: the header's keys and the entries' ids, parent
// chain and timestamps.
func checkFormat(t *testing.T, lines [][]byte) {
	t.Helper()
	if len(lines) == 0 {
		t.Fatal("no lines")
	}
	var h map[string]any
	if err := json.Unmarshal(lines[0], &h); err != nil {
		t.Fatalf("header: %v", err)
	}
	if h["type"] != "session" || h["version"] != float64(3) {
		t.Errorf("header type/version: %v", h)
	}
	if id, _ := h["id"].(string); !hex16.MatchString(id) {
		t.Errorf("header id %q", id)
	}
	if ts, _ := h["timestamp"].(string); !iso.MatchString(ts) {
		t.Errorf("header timestamp %q", ts)
	}
	if _, ok := h["cwd"].(string); !ok {
		t.Errorf("header cwd missing: %v", h)
	}
	for k := range h {
		switch k {
		case "type", "version", "id", "timestamp", "cwd", "title", "titleSource", "parentSession":
		default:
			t.Errorf("header key %q", k)
		}
	}
	seen := map[string]bool{}
	for i, line := range lines[1:] {
		var e struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			ParentID  *string `json:"parentId"`
			Timestamp string  `json:"timestamp"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		if e.Type == "" || !hex8.MatchString(e.ID) || seen[e.ID] || !iso.MatchString(e.Timestamp) {
			t.Errorf("line %d: bad entry head %s", i+2, line)
		}
		if e.ParentID != nil && !seen[*e.ParentID] {
			t.Errorf("line %d: parent %q not an earlier entry", i+2, *e.ParentID)
		}
		seen[e.ID] = true
	}
}
