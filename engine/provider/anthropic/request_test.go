package anthropic_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	at "github.com/xcsh-go/xcsh/engine/provider/anthropic/anthropictest"
)

// sendOne streams req against a server answering one text response and
// returns the request the server received, decoded, and its headers.
func sendOne(t *testing.T, key string, req func(baseURL string) *engine.Request) (map[string]any, at.Request) {
	t.Helper()
	srv := at.New(at.Script{Responses: []at.Response{at.TextResponse("msg_r", "ok")}})
	t.Cleanup(srv.Close)
	err := newProvider(key).Stream(context.Background(), req(srv.URL), func(engine.StreamEvent) error { return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, reqs[0].Body)
	}
	return body, reqs[0]
}

// sameJSON compares a decoded value with a JSON literal.
func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation for %s: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		wi, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s:\n%s\nwant:\n%s", what, g, wi)
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	png := engine.ContentBlock{Type: engine.BlockImage, Data: "aGVsbG8=", MimeType: "image/png"}
	body, got := sendOne(t, testKey, func(u string) *engine.Request {
		m := testModel(u + "/anthropic")
		m.Headers = map[string]string{"X-Custom": "v1", "anthropic-beta": "context-1m-2025-08-07"}
		return &engine.Request{
			Model:         m,
			SystemPrompt:  "You are a test.",
			ThinkingLevel: engine.ThinkingHigh,
			Tools: []engine.ToolSpec{{
				Name: "read", Description: "Read a file",
				Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
			}, {Name: "ls"}},
			Messages: []engine.Message{
				&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("look at this"), png, engine.TextBlock("")}},
				&engine.AssistantMessage{
					API: "anthropic-messages", Provider: "anthropic", Model: "claude-test", StopReason: engine.StopToolUse,
					Content: []engine.ContentBlock{
						{Type: engine.BlockThinking, Thinking: "hmm", ThinkingSignature: "sig1"},
						{Type: engine.BlockRedactedThinking, Data: "REDACTED"},
						{Type: engine.BlockThinking, Thinking: "cut short"}, // no signature: aborted mid-block
						engine.TextBlock("Reading."),
						{Type: engine.BlockToolCall, ID: "toolu_1", Name: "read", Arguments: []byte(`{"path":"a.go"}`)},
						{Type: engine.BlockToolCall, ID: "call_abc|fc_1", Name: "ls"},
					},
				},
				&engine.ToolResultMessage{ToolCallID: "toolu_1", ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock("package a")}},
				&engine.ToolResultMessage{ToolCallID: "call_abc|fc_1", ToolName: "ls", IsError: true, Content: []engine.ContentBlock{engine.TextBlock("no such dir"), png}},
				&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("also check b.go")}},
				&engine.AssistantMessage{
					API: "anthropic-messages", Provider: "anthropic", Model: "claude-test", StopReason: engine.StopError,
					Content: []engine.ContentBlock{engine.TextBlock("partial"), {Type: engine.BlockToolCall, ID: "toolu_bad", Name: "read", Arguments: []byte(`{"pa`)}},
				},
				&engine.ToolResultMessage{ToolCallID: "toolu_bad", ToolName: "read", IsError: true, Content: []engine.ContentBlock{engine.TextBlock("aborted")}},
				&engine.AssistantMessage{
					API: "openai-responses", Provider: "openai", Model: "gpt-5", StopReason: engine.StopStop,
					Content: []engine.ContentBlock{
						{Type: engine.BlockThinking, Thinking: "other thoughts", ThinkingSignature: "rs_1"},
						{Type: engine.BlockRedactedThinking, Data: "OTHER"},
						engine.TextBlock("done"),
					},
				},
				&engine.DeveloperMessage{Content: []engine.ContentBlock{engine.TextBlock("dev note")}},
				&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("thanks")}},
			},
		}
	})

	if got.Method != "POST" || got.Path != "/anthropic/v1/messages" {
		t.Errorf("request %s %s, want POST /anthropic/v1/messages", got.Method, got.Path)
	}
	for name, want := range map[string]string{
		"X-Api-Key":      testKey,
		"Authorization":  "",
		"Anthropic-Beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07",
		"X-Custom":       "v1",
		"Content-Type":   "application/json",
	} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("header %s = %q, want %q", name, v, want)
		}
	}
	if v := got.Header.Get("Anthropic-Version"); v == "" {
		t.Errorf("no anthropic-version header")
	}
	if n := got.Header.Values("X-Stainless-Retry-Count"); len(n) > 0 && n[0] != "0" {
		t.Errorf("X-Stainless-Retry-Count %v: the SDK retried", n)
	}

	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"max_tokens", "messages", "model", "stream", "system", "thinking", "tools"}; !slices.Equal(keys, want) {
		t.Errorf("body keys %v, want %v", keys, want)
	}
	sameJSON(t, "model", body["model"], `"claude-test"`)
	sameJSON(t, "stream", body["stream"], `true`)
	sameJSON(t, "max_tokens", body["max_tokens"], `48384`)
	sameJSON(t, "thinking", body["thinking"], `{"type":"enabled","budget_tokens":16384}`)
	sameJSON(t, "system", body["system"], `[{"type":"text","text":"You are a test.","cache_control":{"type":"ephemeral"}}]`)
	sameJSON(t, "tools", body["tools"], `[
		{"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}},
		{"name":"ls","input_schema":{"type":"object","properties":{}}}
	]`)
	image := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGVsbG8="}}`
	sameJSON(t, "messages", body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"look at this"},`+image+`]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"hmm","signature":"sig1"},
			{"type":"redacted_thinking","data":"REDACTED"},
			{"type":"text","text":"cut short"},
			{"type":"text","text":"Reading."},
			{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go"}},
			{"type":"tool_use","id":"call_abc_fc_1","name":"ls","input":{}}
		]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"package a"}]},
			{"type":"tool_result","tool_use_id":"call_abc_fc_1","is_error":true,"content":[{"type":"text","text":"no such dir"},`+image+`]},
			{"type":"text","text":"also check b.go"}
		]},
		{"role":"assistant","content":[{"type":"text","text":"other thoughts"},{"type":"text","text":"done"}]},
		{"role":"user","content":[{"type":"text","text":"dev note"},{"type":"text","text":"thanks","cache_control":{"type":"ephemeral"}}]}
	]`)
}

func TestRequestThinking(t *testing.T) {
	t.Parallel()
	adaptive := &engine.ModelThinking{MinLevel: engine.ThinkingMinimal, MaxLevel: engine.ThinkingXHigh, Mode: "anthropic-adaptive"}
	tests := []struct {
		name      string
		maxTokens int
		reasoning bool
		thinking  *engine.ModelThinking
		level     engine.ThinkingLevel
		want      string // max_tokens, thinking and output_config of the body
		beta      string
	}{
		{name: "unset", maxTokens: 64000, reasoning: true, want: `{"max_tokens":32000}`},
		{name: "off", maxTokens: 64000, reasoning: true, level: engine.ThinkingOff, want: `{"max_tokens":32000}`},
		{name: "not a reasoning model", maxTokens: 8192, level: engine.ThinkingHigh, want: `{"max_tokens":8192}`},
		{name: "unknown max tokens", reasoning: true, level: engine.ThinkingMedium,
			want: `{"max_tokens":40192,"thinking":{"type":"enabled","budget_tokens":8192}}`, beta: "interleaved-thinking-2025-05-14"},
		{name: "minimal", maxTokens: 64000, reasoning: true, level: engine.ThinkingMinimal,
			want: `{"max_tokens":33024,"thinking":{"type":"enabled","budget_tokens":1024}}`, beta: "interleaved-thinking-2025-05-14"},
		{name: "low", maxTokens: 64000, reasoning: true, level: engine.ThinkingLow,
			want: `{"max_tokens":34048,"thinking":{"type":"enabled","budget_tokens":2048}}`, beta: "interleaved-thinking-2025-05-14"},
		{name: "xhigh capped by the model", maxTokens: 64000, reasoning: true, level: engine.ThinkingXHigh,
			want: `{"max_tokens":64000,"thinking":{"type":"enabled","budget_tokens":32768}}`, beta: "interleaved-thinking-2025-05-14"},
		{name: "budget shrinks to leave an answer", maxTokens: 32000, reasoning: true, level: engine.ThinkingXHigh,
			want: `{"max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":30976}}`, beta: "interleaved-thinking-2025-05-14"},
		{name: "no room for thinking", maxTokens: 2000, reasoning: true, level: engine.ThinkingMinimal, want: `{"max_tokens":2000}`},
		{name: "adaptive xhigh", maxTokens: 128000, reasoning: true, thinking: adaptive, level: engine.ThinkingXHigh,
			want: `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}}`},
		{name: "adaptive minimal", maxTokens: 128000, reasoning: true, thinking: adaptive, level: engine.ThinkingMinimal,
			want: `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}}`},
		{name: "adaptive medium", maxTokens: 128000, reasoning: true, thinking: adaptive, level: engine.ThinkingMedium,
			want: `{"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"medium"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body, got := sendOne(t, testKey, func(u string) *engine.Request {
				m := testModel(u)
				m.MaxTokens, m.Reasoning, m.Thinking = tt.maxTokens, tt.reasoning, tt.thinking
				r := userRequest(m, "hi")
				r.ThinkingLevel = tt.level
				return r
			})
			part := map[string]any{}
			for _, k := range []string{"max_tokens", "thinking", "output_config"} {
				if v, ok := body[k]; ok {
					part[k] = v
				}
			}
			sameJSON(t, "thinking parameters", part, tt.want)
			if b := got.Header.Get("Anthropic-Beta"); b != tt.beta {
				t.Errorf("anthropic-beta %q, want %q", b, tt.beta)
			}
		})
	}
}

func TestRequestOAuthToken(t *testing.T) {
	t.Parallel()
	const token = "sk-ant-oat01-TESTTOKEN"
	_, got := sendOne(t, token, func(u string) *engine.Request { return userRequest(testModel(u), "hi") })
	if v := got.Header.Get("Authorization"); v != "Bearer "+token {
		t.Errorf("Authorization %q, want the bearer token", v)
	}
	if v := got.Header.Get("X-Api-Key"); v != "" {
		t.Errorf("X-Api-Key %q sent with an OAuth token", v)
	}
	if v := got.Header.Get("Anthropic-Beta"); !strings.Contains(v, "oauth-2025-04-20") {
		t.Errorf("anthropic-beta %q lacks the oauth beta", v)
	}
}

// TestRequestKeyFromHeaders: a configured provider that authenticates
// through Model.Headers needs no key.
func TestRequestKeyFromHeaders(t *testing.T) {
	t.Parallel()
	_, got := sendOne(t, "", func(u string) *engine.Request {
		m := testModel(u)
		m.Headers = map[string]string{"Authorization": "Bearer gateway-token"}
		return userRequest(m, "hi")
	})
	if v := got.Header.Get("Authorization"); v != "Bearer gateway-token" {
		t.Errorf("Authorization %q, want the configured header", v)
	}
}
