package openai_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
)

func text(s string) engine.ContentBlock { return engine.TextBlock(s) }

func image(data string) engine.ContentBlock {
	return engine.ContentBlock{Type: engine.BlockImage, Data: data, MimeType: "image/png"}
}

func toolCall(id, name, args string) engine.ContentBlock {
	return engine.ContentBlock{Type: engine.BlockToolCall, ID: id, Name: name, Arguments: []byte(args)}
}

// okStream is a minimal successful response.
var okStream = openaitest.Response{Chunks: chunks(openaitest.FinishChunk(id, "stop"))}

// body sends req and returns the decoded request body the server received.
func body(t *testing.T, opts openai.Options, req *engine.Request) (map[string]any, openaitest.Request) {
	t.Helper()
	r := stream(t, opts, req, okStream)
	if r.err != nil {
		t.Fatalf("Stream: %v", r.err)
	}
	if len(r.reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(r.reqs))
	}
	var b map[string]any
	if err := r.reqs[0].JSON(&b); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return b, r.reqs[0]
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRequestMessages(t *testing.T) {
	t.Parallel()
	req := &engine.Request{
		SystemPrompt: "You are a test.",
		Messages: []engine.Message{
			&engine.UserMessage{Content: []engine.ContentBlock{text("hi")}},
			&engine.UserMessage{Content: []engine.ContentBlock{text("look"), image("AAAA")}},
			&engine.AssistantMessage{StopReason: engine.StopToolUse, Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: "I should read.", ThinkingSignature: "reasoning_content"},
				text("Let me look."),
				toolCall("call_1", "read", `{"path":"a.go"}`),
				toolCall("call_2", "shot", `{}`),
			}},
			&engine.ToolResultMessage{ToolCallID: "call_1", ToolName: "read", Content: []engine.ContentBlock{text("package a")}},
			&engine.ToolResultMessage{ToolCallID: "call_2", ToolName: "shot", Content: []engine.ContentBlock{image("BBBB")}},
			&engine.DeveloperMessage{Content: []engine.ContentBlock{text("Be brief.")}},
			&engine.AssistantMessage{StopReason: engine.StopAborted, Content: []engine.ContentBlock{text("partial"), toolCall("call_3", "bash", `{"command":"l`)}},
			&engine.ToolResultMessage{ToolCallID: "call_3", ToolName: "bash", IsError: true, Content: []engine.ContentBlock{text("Tool execution was aborted: Request was aborted")}},
			&engine.AssistantMessage{StopReason: engine.StopToolUse, Content: []engine.ContentBlock{toolCall("call_4", "ls", `{}`)}},
			&engine.UserMessage{Content: []engine.ContentBlock{text("next")}},
			&engine.AssistantMessage{StopReason: engine.StopStop, Content: []engine.ContentBlock{{Type: engine.BlockThinking, Thinking: "  "}}},
		},
	}
	b, _ := body(t, keyed(testKey), req)
	want := decode(t, `[
		{"role":"system","content":"You are a test."},
		{"role":"user","content":"hi"},
		{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},
		{"role":"assistant","content":"Let me look.","reasoning_content":"I should read.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},
			{"id":"call_2","type":"function","function":{"name":"shot","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"package a"},
		{"role":"tool","tool_call_id":"call_2","content":"(see attached image)"},
		{"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,BBBB"}}]},
		{"role":"user","content":"Be brief."},
		{"role":"assistant","tool_calls":[{"id":"call_4","type":"function","function":{"name":"ls","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_4","content":"No result provided"},
		{"role":"user","content":"next"}
	]`)
	if got := b["messages"]; !reflect.DeepEqual(got, want) {
		t.Errorf("messages:\n%s\nwant:\n%s", jsonOf(got), jsonOf(want))
	}
}

func TestRequestTextOnlyModelDropsImages(t *testing.T) {
	t.Parallel()
	req := &engine.Request{Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{text("look"), image("AAAA")}},
		&engine.UserMessage{Content: []engine.ContentBlock{image("AAAA")}},
	}}
	req.Model = testModel("")
	req.Model.Input = []string{"text"}
	b, _ := body(t, openai.Options{}, req)
	want := decode(t, `[{"role":"user","content":[{"type":"text","text":"look"}]}]`)
	if got := b["messages"]; !reflect.DeepEqual(got, want) {
		t.Errorf("messages:\n%s\nwant:\n%s", jsonOf(got), jsonOf(want))
	}
}

func TestRequestTopLevel(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	req := &engine.Request{
		Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("hi")}}},
		Tools: []engine.ToolSpec{
			{Name: "read", Description: "Read a file", Parameters: []byte(schema)},
			{Name: "noop"},
		},
	}
	b, raw := body(t, keyed(testKey), req)
	for k, want := range map[string]string{
		"model":          `"gpt-test"`,
		"stream":         `true`,
		"stream_options": `{"include_usage":true}`,
		"max_tokens":     `16384`,
		"tools": `[{"type":"function","function":{"name":"read","description":"Read a file","parameters":` + schema + `}},
			{"type":"function","function":{"name":"noop"}}]`,
	} {
		if got := b[k]; !reflect.DeepEqual(got, decode(t, want)) {
			t.Errorf("%s = %s, want %s", k, jsonOf(got), want)
		}
	}
	for _, k := range []string{"reasoning_effort", "max_completion_tokens", "store", "reasoning"} {
		if v, ok := b[k]; ok {
			t.Errorf("%s = %v, want absent", k, v)
		}
	}
	// The schema goes out byte for byte, key order included.
	if !strings.Contains(string(raw.Body), `"parameters":`+schema) {
		t.Errorf("schema reordered in %s", raw.Body)
	}
	if raw.Path != "/v1/chat/completions" || raw.Method != "POST" {
		t.Errorf("request %s %s", raw.Method, raw.Path)
	}
}

func TestRequestCompat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		compat    string
		maxTokens int
		level     engine.ThinkingLevel
		messages  []engine.Message
		want      map[string]string // key -> JSON; "" means absent
	}{
		{name: "max tokens capped", maxTokens: 64000, want: map[string]string{"max_tokens": "32000"}},
		{name: "no max tokens", want: map[string]string{"max_tokens": "", "max_completion_tokens": ""}},
		{name: "max_completion_tokens", compat: `{"maxTokensField":"max_completion_tokens"}`, maxTokens: 1000,
			want: map[string]string{"max_completion_tokens": "1000", "max_tokens": ""}},
		{name: "no usage in streaming", compat: `{"supportsUsageInStreaming":false}`, want: map[string]string{"stream_options": ""}},
		{name: "store", compat: `{"supportsStore":true}`, want: map[string]string{"store": "false"}},
		{name: "extraBody", compat: `{"extraBody":{"top_k":20,"provider":{"order":["a"]}}}`,
			want: map[string]string{"top_k": "20", "provider": `{"order":["a"]}`}},
		{name: "openRouterRouting", compat: `{"openRouterRouting":{"only":["anthropic"],"order":["anthropic","google"]}}`,
			want: map[string]string{"provider": `{"only":["anthropic"],"order":["anthropic","google"]}`}},
		{name: "developer role", compat: `{"supportsDeveloperRole":true}`,
			want: map[string]string{"messages": `[{"role":"developer","content":"sys"},{"role":"user","content":"hi"}]`}},
		{name: "tool result name and assistant after tool result",
			compat: `{"requiresToolResultName":true,"requiresAssistantAfterToolResult":true}`,
			messages: []engine.Message{
				&engine.AssistantMessage{StopReason: engine.StopToolUse, Content: []engine.ContentBlock{toolCall("c1", "ls", `{}`)}},
				&engine.ToolResultMessage{ToolCallID: "c1", ToolName: "ls", Content: []engine.ContentBlock{text("a b")}},
				&engine.UserMessage{Content: []engine.ContentBlock{text("go on")}},
			},
			want: map[string]string{"messages": `[{"role":"system","content":"sys"},
				{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"a b","name":"ls"},
				{"role":"assistant","content":"I have processed the tool results."},
				{"role":"user","content":"go on"}]`}},
		{name: "thinking as text", compat: `{"requiresThinkingAsText":true}`,
			messages: []engine.Message{&engine.AssistantMessage{StopReason: engine.StopStop, Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: "hmm", ThinkingSignature: "reasoning_content"}, text("yes")}}},
			want: map[string]string{"messages": `[{"role":"system","content":"sys"},{"role":"assistant","content":"hmm\n\nyes"}]`}},
		{name: "thinking without a known field is not replayed",
			messages: []engine.Message{&engine.AssistantMessage{StopReason: engine.StopStop, Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: "hmm", ThinkingSignature: "sig-from-another-api"}, text("yes")}}},
			want: map[string]string{"messages": `[{"role":"system","content":"sys"},{"role":"assistant","content":"yes"}]`}},

		// Thinking, agent-core.md §9.4.
		{name: "openai high", level: engine.ThinkingHigh, want: map[string]string{"reasoning_effort": `"high"`}},
		{name: "openai xhigh", level: engine.ThinkingXHigh, want: map[string]string{"reasoning_effort": `"high"`}},
		{name: "openai minimal", level: engine.ThinkingMinimal, compat: `{"thinkingFormat":"openai"}`, want: map[string]string{"reasoning_effort": `"minimal"`}},
		{name: "openai off", level: engine.ThinkingOff, want: map[string]string{"reasoning_effort": ""}},
		{name: "openai map xhigh", level: engine.ThinkingXHigh, compat: `{"reasoningEffortMap":{"xhigh":"xhigh","minimal":"low"}}`,
			want: map[string]string{"reasoning_effort": `"xhigh"`}},
		{name: "openai map minimal", level: engine.ThinkingMinimal, compat: `{"reasoningEffortMap":{"minimal":"low"}}`,
			want: map[string]string{"reasoning_effort": `"low"`}},
		{name: "openai without reasoning effort", level: engine.ThinkingHigh, compat: `{"supportsReasoningEffort":false}`,
			want: map[string]string{"reasoning_effort": ""}},
		{name: "openrouter", level: engine.ThinkingLow, compat: `{"thinkingFormat":"openrouter"}`,
			want: map[string]string{"reasoning": `{"effort":"low"}`, "reasoning_effort": ""}},
		{name: "openrouter none", compat: `{"thinkingFormat":"openrouter"}`, want: map[string]string{"reasoning": ""}},
		{name: "zai", level: engine.ThinkingMedium, compat: `{"thinkingFormat":"zai"}`,
			want: map[string]string{"thinking": `{"type":"enabled"}`, "reasoning_effort": ""}},
		{name: "zai none", compat: `{"thinkingFormat":"zai"}`, want: map[string]string{"thinking": `{"type":"disabled"}`}},
		{name: "qwen", level: engine.ThinkingHigh, compat: `{"thinkingFormat":"qwen"}`,
			want: map[string]string{"enable_thinking": "true", "reasoning_effort": ""}},
		{name: "qwen none", compat: `{"thinkingFormat":"qwen"}`, want: map[string]string{"enable_thinking": "false"}},
		{name: "qwen-chat-template", level: engine.ThinkingHigh, compat: `{"thinkingFormat":"qwen-chat-template"}`,
			want: map[string]string{"chat_template_kwargs": `{"enable_thinking":true}`}},
		{name: "qwen-chat-template none", compat: `{"thinkingFormat":"qwen-chat-template"}`,
			want: map[string]string{"chat_template_kwargs": `{"enable_thinking":false}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msgs := tt.messages
			if msgs == nil {
				msgs = []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("hi")}}}
			}
			req := &engine.Request{SystemPrompt: "sys", Messages: msgs, ThinkingLevel: tt.level}
			req.Model = testModel("")
			req.Model.MaxTokens = tt.maxTokens
			req.Model.Compat = json.RawMessage(tt.compat)
			b, _ := body(t, openai.Options{}, req)
			for k, want := range tt.want {
				got, ok := b[k]
				switch {
				case want == "" && ok:
					t.Errorf("%s = %s, want absent", k, jsonOf(got))
				case want != "" && !reflect.DeepEqual(got, decode(t, want)):
					t.Errorf("%s = %s, want %s", k, jsonOf(got), want)
				}
			}
		})
	}
}

func TestRequestBadCompat(t *testing.T) {
	t.Parallel()
	req := &engine.Request{}
	req.Model = testModel("http://127.0.0.1:1/v1")
	req.Model.Compat = json.RawMessage(`{"thinkingFormat":"bogus"}`)
	err := openai.New(openai.Options{}).Stream(context.Background(), req, func(engine.StreamEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `unknown thinkingFormat "bogus"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", testKey} {
		req := &engine.Request{}
		req.Model = testModel("")
		req.Model.Headers = map[string]string{"X-Team": "platform", "HTTP-Referer": "https://example.test"}
		_, raw := body(t, keyed(key), req)
		wantAuth := ""
		if key != "" {
			wantAuth = "Bearer " + key
		}
		if got := raw.Header.Get("Authorization"); got != wantAuth {
			t.Errorf("key %q: Authorization = %q, want %q", key, got, wantAuth)
		}
		if raw.Header.Get("X-Team") != "platform" || raw.Header.Get("HTTP-Referer") != "https://example.test" {
			t.Errorf("key %q: model headers missing: %v", key, raw.Header)
		}
		if got := raw.Header.Get("X-Stainless-Retry-Count"); got != "0" {
			t.Errorf("retry count header = %q", got)
		}
	}
}

// TestRequestIgnoresEnvironment checks that the SDK's OPENAI_* variables
// do not reach a request: the registry decides the base URL and the key.
func TestRequestIgnoresEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	_, raw := body(t, openai.Options{}, nil)
	if got := raw.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
	if got := raw.Header.Get("OpenAI-Organization"); got != "" {
		t.Errorf("OpenAI-Organization = %q, want none", got)
	}
}

// TestRetriesOff checks that a failure is reported after one request: the
// engine owns retries.
func TestRetriesOff(t *testing.T) {
	t.Parallel()
	r := stream(t, openai.Options{}, nil,
		openaitest.Response{Status: 503, Error: &openaitest.APIError{Message: "Service unavailable", Type: "server_error"}, Headers: map[string]string{"retry-after": "0"}},
		okStream)
	if r.err == nil || len(r.reqs) != 1 {
		t.Fatalf("err, requests = %v, %d; want an error after 1 request", r.err, len(r.reqs))
	}
}
