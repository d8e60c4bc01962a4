package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
)

// atifSession is a branch with every kind of step: a prompt with an
// image, an answer with thinking, two tool calls and usage, their results
// (one failed), a shell command the user ran, the final answer; and, when
// compacted, a compaction between them.
func atifSession(compacted bool) Data {
	at := func(i int64) int64 { return 1767225600000 + i*1000 }
	var entries []*engine.Entry
	add := func(e *engine.Entry) {
		e.ID = strings.Repeat("0", 7) + string(rune('a'+len(entries)))
		if len(entries) > 0 {
			e.ParentID = entries[len(entries)-1].ID
		}
		e.Timestamp = at(int64(len(entries)))
		entries = append(entries, e)
	}
	msg := func(m engine.Message) { add(&engine.Entry{Type: engine.EntryMessage, Message: m}) }
	msg(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("list the files"), {Type: engine.BlockImage, Data: "AAAA", MimeType: "image/png"}}})
	msg(&engine.AssistantMessage{Provider: "anthropic", Model: "claude-x", StopReason: engine.StopToolUse,
		Content: []engine.ContentBlock{{Type: engine.BlockThinking, Thinking: "Let me look."}, engine.TextBlock("Looking."),
			{Type: engine.BlockToolCall, ID: "call_1", Name: "bash", Arguments: []byte(`{"command":"ls"}`)},
			{Type: engine.BlockToolCall, ID: "call_2", Name: "read", Arguments: []byte(`{"path":`)}},
		Usage: engine.Usage{Input: 100, CacheRead: 20, CacheWrite: 5, Output: 30, Cost: engine.Cost{Total: 0.5}}})
	msg(&engine.ToolResultMessage{ToolCallID: "call_1", ToolName: "bash", Content: []engine.ContentBlock{engine.TextBlock("a.txt\nb.txt")}})
	msg(&engine.ToolResultMessage{ToolCallID: "call_2", ToolName: "read", IsError: true, Content: []engine.ContentBlock{engine.TextBlock("cut off")}})
	if compacted {
		add(&engine.Entry{Type: engine.EntryCompaction, Compaction: &engine.Compaction{Summary: "Listed the files.", FirstKeptEntryID: entries[2].ID, TokensBefore: 900}})
	}
	code := 0
	msg(&engine.BashExecutionMessage{Command: "pwd", Output: "/w", ExitCode: &code})
	msg(&engine.AssistantMessage{Provider: "anthropic", Model: "claude-x", StopReason: engine.StopStop,
		Content: []engine.ContentBlock{engine.TextBlock("Two files.")}, Usage: engine.Usage{Input: 200, Output: 5, Cost: engine.Cost{Total: 0.25}}})
	return Data{SessionID: "sess-1", SessionFile: "/s/sess.jsonl", Cwd: "/w", Entries: entries, Leaf: entries[len(entries)-1].ID}
}

// validate checks out against the checked-in schema, and the two rules of
// Harbor's models that JSON Schema cannot say.
func validate(t *testing.T, out []byte) {
	t.Helper()
	sch, err := os.ReadFile("testdata/atif/ATIF-v1.6.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if issues := schema.New().Validate(sch, out); len(issues) > 0 {
		t.Fatalf("the export does not match ATIF-v1.6:\n%s\n%s", strings.Join(issues, "\n"), out)
	}
	var tr struct {
		Steps []struct {
			StepID    int `json:"step_id"`
			ToolCalls []struct {
				ID string `json:"tool_call_id"`
			} `json:"tool_calls"`
			Observation *struct {
				Results []struct {
					SourceCallID string `json:"source_call_id"`
				} `json:"results"`
			} `json:"observation"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &tr); err != nil {
		t.Fatal(err)
	}
	for i, s := range tr.Steps {
		if s.StepID != i+1 {
			t.Fatalf("steps[%d].step_id = %d, want %d (sequential from 1)", i, s.StepID, i+1)
		}
		if s.Observation == nil {
			continue
		}
		ids := map[string]bool{}
		for _, c := range s.ToolCalls {
			ids[c.ID] = true
		}
		for _, r := range s.Observation.Results {
			if r.SourceCallID != "" && !ids[r.SourceCallID] {
				t.Fatalf("step %d: source_call_id %q is none of its tool calls", s.StepID, r.SourceCallID)
			}
		}
	}
}

func TestWriteATIFValidates(t *testing.T) {
	t.Parallel()
	for _, compacted := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteATIF(&buf, atifSession(compacted), ATIFOptions{AgentVersion: "0.1.0"}); err != nil {
			t.Fatal(err)
		}
		validate(t, buf.Bytes())
		out := buf.String()
		for _, want := range []string{`"schema_version":"ATIF-v1.6"`, `"model_name":"anthropic/claude-x"`, `"reasoning_content":"Let me look."`,
			`"prompt_tokens":125`, `"cached_tokens":20`, `"completion_tokens":30`, `"cost_usd":0.5`, `"total_cost_usd":0.75`,
			`"_raw":"{\"path\":"`, `"source_call_id":"call_1"`, `"content":"a.txt\nb.txt"`, `"tool_errors":[`,
			`"message":"$ pwd\n/w"`, `"timestamp":"2026-01-01T00:00:01.000Z"`, `"images":1`} {
			if !strings.Contains(out, want) {
				t.Errorf("compacted=%v: no %s in\n%s", compacted, want, out)
			}
		}
		if compacted != strings.Contains(out, `"type":"compaction"`) || compacted != strings.Contains(out, "Not strictly appending: step 3 is a compaction") {
			t.Errorf("compacted=%v: the compaction step and note:\n%s", compacted, out)
		}
	}
}

// TestWriteATIFAppendOnly: an append-only export says so, and a compacted
// branch is refused, naming why and what to do.
func TestWriteATIFAppendOnly(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteATIF(&buf, atifSession(false), ATIFOptions{AppendOnly: true}); err != nil {
		t.Fatal(err)
	}
	validate(t, buf.Bytes())
	if !strings.Contains(buf.String(), `"append_only":true`) || !strings.Contains(buf.String(), "Strictly appending") {
		t.Fatalf("not said:\n%s", buf.String())
	}
	err := WriteATIF(&buf, atifSession(true), ATIFOptions{AppendOnly: true})
	if !errors.Is(err, ErrNotAppendOnly) || !strings.Contains(err.Error(), "step 3 is a compaction") || !strings.Contains(err.Error(), "set_auto_compaction") {
		t.Fatalf("error %v", err)
	}
	d := atifSession(false)
	d.Entries[2].Message.(*engine.ToolResultMessage).PrunedAt = 1
	if err := WriteATIF(&buf, d, ATIFOptions{AppendOnly: true}); !errors.Is(err, ErrNotAppendOnly) || !strings.Contains(err.Error(), "call_1 was pruned") {
		t.Fatalf("pruned: %v", err)
	}
}

func TestWriteATIFErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteATIF(&buf, Data{SessionID: "s"}, ATIFOptions{}); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty: %v", err)
	}
	d := atifSession(false)
	d.Leaf = "nope"
	if err := WriteATIF(&buf, d, ATIFOptions{}); !errors.Is(err, engine.ErrNoEntry) {
		t.Fatalf("unknown leaf: %v", err)
	}
}

// TestATIFSchemaRefuses: the schema is not vacuous: what Harbor's models
// refuse, it refuses.
func TestATIFSchemaRefuses(t *testing.T) {
	t.Parallel()
	sch, err := os.ReadFile("testdata/atif/ATIF-v1.6.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	ok := `{"schema_version":"ATIF-v1.6","session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi"}]}`
	if issues := schema.New().Validate(sch, []byte(ok)); len(issues) > 0 {
		t.Fatalf("a minimal trajectory: %v", issues)
	}
	for name, bad := range map[string]string{
		"no steps":          `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[]}`,
		"unknown version":   `{"schema_version":"ATIF-v9","session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi"}]}`,
		"metrics on a user": `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi","metrics":{}}]}`,
		"extra key":         `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi","role":"x"}]}`,
		"step 0":            `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":0,"source":"user","message":"hi"}]}`,
		"bad source":        `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"tool","message":"hi"}]}`,
		"arguments array":   `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"agent","message":"","tool_calls":[{"tool_call_id":"c","function_name":"f","arguments":[]}]}]}`,
		"bad timestamp":     `{"session_id":"s","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi","timestamp":"yesterday"}]}`,
	} {
		if issues := schema.New().Validate(sch, []byte(bad)); len(issues) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}
