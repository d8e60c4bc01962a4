package fakeprovider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// echoReq is a request with every part an echo can show.
func echoReq() *engine.Request {
	return &engine.Request{
		SystemPrompt: "You are a test.\n# Rules\nUse tabs.",
		Tools:        []engine.ToolSpec{{Name: "read"}, {Name: "bash"}},
		Messages: []engine.Message{
			user("first"),
			&engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock("ok"),
				{Type: engine.BlockToolCall, ID: "c1", Name: "read", Arguments: []byte(`{"path":"a"}`)}}},
			&engine.ToolResultMessage{ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock("no such file")}, IsError: true},
			user("second"),
		},
		Output: &engine.OutputFormat{Name: "answer", Schema: []byte(`{"type":"object"}`)},
	}
}

func TestEchoStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ part, want string }{
		{"systemPrompt", "You are a test.\n# Rules\nUse tabs."},
		{"tools", "read\nbash"},
		{"lastUserText", "second"},
		{"context", "[user]\nfirst\n\n[assistant]\nok\n(tool call read {\"path\":\"a\"})\n\n[toolResult read: error]\nno such file\n\n[user]\nsecond"},
		{"outputSchema", `answer {"type":"object"}`},
	} {
		t.Run(tc.part, func(t *testing.T) {
			t.Parallel()
			p := New(mustParse(t, `{"turns":[{"steps":[{"echo":"`+tc.part+`"}]}]}`))
			got, err := stream(p, echoReq())
			if err != nil {
				t.Fatal(err)
			}
			// One delta: the whole text, whatever its spaces.
			equalLines(t, got, []string{"text_start", "text_delta " + quoteGo(tc.want), "text_end", `done stop ""`})
		})
	}
}

func TestEchoEmptyPart(t *testing.T) {
	t.Parallel()
	p := New(mustParse(t, `{"turns":[{"steps":[{"echo":"tools"}]}]}`))
	got, err := stream(p, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, got, []string{"text_start", `text_delta "(empty)"`, "text_end", `done stop ""`})
}

func TestEchoParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{`{"echo":"everything"}`, `"echo" must be one of systemPrompt, tools, lastUserText, context, outputSchema, got "everything"`},
		{`{"echo":1}`, `"echo"`},
		{`{"echo":"tools","repeat":2}`, `key "repeat" is not allowed in a echo step`},
	} {
		_, err := Parse("e.json", []byte(`{"turns":[{"steps":[`+tc.src+`]}]}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestDemoEcho(t *testing.T) {
	t.Parallel()
	req := echoReq()
	req.Messages[len(req.Messages)-1] = user("demo:echo systemPrompt")
	got, err := stream(Demo(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 || got[1] != "text_delta "+quoteGo(req.SystemPrompt) {
		t.Fatalf("events %q", got)
	}
	req.Messages[len(req.Messages)-1] = user("demo:echo nothing")
	if _, err := stream(Demo(), req); err == nil || !strings.Contains(err.Error(), "demo:echo systemPrompt|tools|lastUserText|context") {
		t.Fatalf("bad part: %v", err)
	}
}

func quoteGo(s string) string { return fmt.Sprintf("%q", s) }
