package fakeprovider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestDemo(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 79) + "ééé"
	tests := []struct {
		name string
		msgs []engine.Message
		want []string
	}{
		{"echo", []engine.Message{user("hello there")}, []string{
			"text_start", `text_delta "Hello! "`, `text_delta "I "`, `text_delta "am "`, `text_delta "the "`, `text_delta "xcsh "`,
			`text_delta "demo "`, `text_delta "model. "`, `text_delta "You "`, `text_delta "said: "`, `text_delta "hello "`, `text_delta "there"`,
			"text_end", "usage in=2 out=13 cr=0 cw=0 total=15", `done stop ""`}},
		{"echo keeps the text as typed", []engine.Message{user("  demo:thinking")}, []string{
			"text_start", `text_delta "Hello! "`, `text_delta "I "`, `text_delta "am "`, `text_delta "the "`, `text_delta "xcsh "`,
			`text_delta "demo "`, `text_delta "model. "`, `text_delta "You "`, `text_delta "said: "`, `text_delta " "`, `text_delta " "`, `text_delta "demo:thinking"`,
			"text_end", "usage in=3 out=14 cr=0 cw=0 total=17", `done stop ""`}},
		{"think", []engine.Message{user("demo:think  about cats ")}, []string{
			"thinking_start", `thinking_delta "Thinking "`, `thinking_delta "about: "`, `thinking_delta "about "`, `thinking_delta "cats"`, `thinking_end sig=""`,
			"text_start", `text_delta "You "`, `text_delta "asked "`, `text_delta "me "`, `text_delta "to "`, `text_delta "think "`, `text_delta "about: "`,
			`text_delta "about "`, `text_delta "cats"`, "text_end", "usage in=5 out=16 cr=0 cw=0 total=21", `done stop ""`}},
		{"tool", []engine.Message{user(`demo:tool read {"path": "a.txt", "limit": 10}`)}, []string{
			"tool_start call_demo_1 read", `tool_delta "{\"path\":\"a.txt\","`, `tool_delta "\"limit\":10}"`,
			`tool_end call_demo_1 {"path":"a.txt","limit":10}`, "usage in=11 out=6 cr=0 cw=0 total=17", `done toolUse ""`}},
		{"tool without arguments", []engine.Message{user("demo:tool ls")}, []string{
			"tool_start call_demo_1 ls", `tool_delta "{}"`, "tool_end call_demo_1 {}", "usage in=3 out=0 cr=0 cw=0 total=3", `done toolUse ""`}},
		{"tool result", []engine.Message{
			user("demo:tool read {}"),
			&engine.AssistantMessage{Content: []engine.ContentBlock{{Type: engine.BlockToolCall, ID: "call_demo_1", Name: "read", Arguments: []byte("{}")}}},
			&engine.ToolResultMessage{ToolCallID: "call_demo_1", ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock("line one\nline two")}},
		}, []string{
			"text_start", `text_delta "Tool "`, `text_delta "read "`, `text_delta "returned: "`, `text_delta "line "`, `text_delta "one"`, "text_end",
			"usage in=8 out=7 cr=0 cw=0 total=15", `done stop ""`}},
		{"tool result cut", []engine.Message{
			&engine.ToolResultMessage{ToolName: "grep", Content: []engine.ContentBlock{engine.TextBlock(long)}},
		}, []string{
			"text_start", `text_delta "Tool "`, `text_delta "grep "`, `text_delta "returned: "`, `text_delta "` + strings.Repeat("x", 79) + `é…"`, "text_end",
			"usage in=20 out=25 cr=0 cw=0 total=45", `done stop ""`}},
		{"tool failure", []engine.Message{
			&engine.ToolResultMessage{ToolName: "bash", IsError: true, Content: []engine.ContentBlock{engine.TextBlock("exit 1")}},
		}, []string{
			"text_start", `text_delta "Tool "`, `text_delta "bash "`, `text_delta "failed: "`, `text_delta "exit "`, `text_delta "1"`, "text_end",
			"usage in=1 out=6 cr=0 cw=0 total=7", `done stop ""`}},
		{"empty tool result", []engine.Message{&engine.ToolResultMessage{ToolName: "write"}}, []string{
			"text_start", `text_delta "Tool "`, `text_delta "write "`, `text_delta "returned: "`, `text_delta "(no "`, `text_delta "output)"`, "text_end",
			"usage in=0 out=8 cr=0 cw=0 total=8", `done stop ""`}},
		{"no messages", nil, []string{
			"text_start", `text_delta "Hello! "`, `text_delta "I "`, `text_delta "am "`, `text_delta "the "`, `text_delta "xcsh "`,
			`text_delta "demo "`, `text_delta "model."`, "text_end", "usage in=0 out=8 cr=0 cw=0 total=8", `done stop ""`}},
		// The engine merges the bash context into the prompt after it: the
		// command in the last text block still counts.
		{"tool after bash", engine.ConvertToLLM([]engine.Message{
			&engine.BashExecutionMessage{Command: "ls", Output: "a.txt\n"},
			user(`demo:tool read {"path":"a.txt"}`),
		}), []string{
			"tool_start call_demo_1 read", `tool_delta "{\"path\":\"a.txt\"}"`,
			`tool_end call_demo_1 {"path":"a.txt"}`, "usage in=13 out=4 cr=0 cw=0 total=17", `done toolUse ""`}},
		{"echo after bash", engine.ConvertToLLM([]engine.Message{
			&engine.BashExecutionMessage{Command: "ls", Output: "a.txt\n"},
			user("demo:thinking"),
		}), []string{
			"text_start", `text_delta "Hello! "`, `text_delta "I "`, `text_delta "am "`, `text_delta "the "`, `text_delta "xcsh "`,
			`text_delta "demo "`, `text_delta "model. "`, `text_delta "You "`, `text_delta "said: "`, `text_delta "Ran "`,
			"text_delta \"`ls`\\n```\\na.txt\\n\\n```demo:thinking\"", "text_end", "usage in=9 out=19 cr=0 cw=0 total=28", `done stop ""`}},
		{"bash execution", []engine.Message{&engine.BashExecutionMessage{Command: "ls", Output: "a.txt\nb.txt\n"}}, []string{
			"text_start", `text_delta "Hello! "`, `text_delta "I "`, `text_delta "am "`, `text_delta "the "`, `text_delta "xcsh "`,
			`text_delta "demo "`, `text_delta "model."`, "text_end", "usage in=3 out=8 cr=0 cw=0 total=11", `done stop ""`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := stream(Demo(), &engine.Request{Messages: tt.msgs})
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			equalLines(t, got, tt.want)
		})
	}
}

func TestDemoErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text   string
		status int
		msg    string
	}{
		{"demo:error 529 overloaded_error: Overloaded", 529, "overloaded_error: Overloaded"},
		{"demo:error 500", 500, "demo error"},
		{"demo:error something broke", 0, "something broke"},
		{"demo:error", 0, "demo error"},
		{"demo:tool", 0, "demo: usage: demo:tool <name> [<json-args>]"},
		{"demo:tool read {nope", 0, "demo: invalid tool arguments: invalid character 'n' looking for beginning of object key string"},
		{"demo:tool read [1]", 0, "demo: invalid tool arguments: want a JSON object, got an array"},
		{`demo:tool read {} {}`, 0, "demo: invalid tool arguments: invalid character '{' after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			got, err := stream(Demo(), userReq(tt.text))
			var pe *engine.ProviderError
			if !errors.As(err, &pe) || pe.Status != tt.status || pe.Message != tt.msg {
				t.Errorf("error = %#v, want ProviderError{%d, %q}", err, tt.status, tt.msg)
			}
			if len(got) != 0 {
				t.Errorf("events before the error: %v", got)
			}
		})
	}
}

func TestDemoBlock(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	done := make(chan error, 1)
	var got []string
	go func() {
		done <- Demo().Stream(ctx, userReq("demo:block"), func(ev engine.StreamEvent) error {
			got = append(got, describe(ev))
			if ev.Delta == "it" {
				close(started)
			}
			return nil
		})
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	equalLines(t, got, []string{"text_start", `text_delta "Working "`, `text_delta "on "`, `text_delta "it"`})
}

// TestDemoCallNumbers checks that tool ids follow the provider's call count
// and that identical requests give identical events.
func TestDemoCallNumbers(t *testing.T) {
	t.Parallel()
	p := Demo()
	req := userReq("demo:tool ls")
	for _, want := range []string{"tool_start call_demo_1 ls", "tool_start call_demo_2 ls"} {
		got, err := stream(p, req)
		if err != nil || len(got) == 0 || got[0] != want {
			t.Errorf("events %v, error %v; want first event %s", got, err, want)
		}
	}
	a, _ := stream(Demo(), userReq("demo:think same"))
	b, _ := stream(Demo(), userReq("demo:think same"))
	equalLines(t, a, b)
}
