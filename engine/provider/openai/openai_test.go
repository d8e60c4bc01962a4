package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
)

const testKey = "sk-test-0123456789abcdef"

func testModel(url string) engine.Model {
	return engine.Model{
		ID: "gpt-test", API: "openai-completions", Provider: "openai", BaseURL: url,
		MaxTokens: 16384, Input: []string{"text", "image"}, Reasoning: true,
	}
}

func keyed(key string) openai.Options {
	return openai.Options{APIKey: func(engine.Model) string { return key }}
}

// render gives each event a short, comparable form.
func render(ev engine.StreamEvent) string {
	switch ev.Kind {
	case engine.StreamTextStart:
		return "text_start"
	case engine.StreamTextDelta:
		return "text_delta " + ev.Delta
	case engine.StreamTextEnd:
		if ev.Signature != "" {
			return "text_end " + ev.Signature
		}
		return "text_end"
	case engine.StreamThinkingStart:
		return "thinking_start"
	case engine.StreamThinkingDelta:
		return "thinking_delta " + ev.Delta
	case engine.StreamThinkingEnd:
		return "thinking_end " + ev.Signature
	case engine.StreamToolCallStart:
		return "tool_start " + ev.ToolCallID + " " + ev.ToolName
	case engine.StreamToolCallDelta:
		return "tool_delta " + ev.ToolCallID + " " + ev.Delta
	case engine.StreamToolCallEnd:
		if ev.Arguments != nil {
			return "tool_end " + ev.ToolCallID + " " + string(ev.Arguments)
		}
		return "tool_end " + ev.ToolCallID
	case engine.StreamUsage:
		u := ev.Usage
		return fmt.Sprintf("usage in=%d out=%d cacheRead=%d cacheWrite=%d total=%d", u.Input, u.Output, u.CacheRead, u.CacheWrite, u.TotalTokens)
	case engine.StreamDone:
		return "done " + string(ev.StopReason) + " " + ev.ResponseID
	}
	return fmt.Sprintf("kind %d", ev.Kind)
}

type result struct {
	events []string
	err    error
	reqs   []openaitest.Request
}

// stream runs one Stream call against a server replaying responses.
func stream(t *testing.T, opts openai.Options, req *engine.Request, responses ...openaitest.Response) result {
	t.Helper()
	srv := openaitest.NewServer(&openaitest.Script{Responses: responses})
	defer srv.Close()
	if req == nil {
		req = &engine.Request{Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}}
	}
	req.Model.BaseURL = srv.URL
	if req.Model.ID == "" {
		m := testModel(srv.URL)
		m.Compat = req.Model.Compat
		req.Model = m
	}
	var r result
	r.err = openai.New(opts).Stream(context.Background(), req, func(ev engine.StreamEvent) error {
		r.events = append(r.events, render(ev))
		return nil
	})
	r.reqs = srv.Requests()
	return r
}

func chunks(cs ...json.RawMessage) []json.RawMessage { return cs }

const id = "chatcmpl-1"

func TestStream(t *testing.T) {
	t.Parallel()
	usage := openaitest.UsageChunk(id, openaitest.Usage{PromptTokens: 100, CompletionTokens: 20, CachedTokens: 30})
	tests := []struct {
		name   string
		compat string
		chunks []json.RawMessage
		end    openaitest.End
		want   []string
	}{
		{
			name:   "text",
			chunks: chunks(openaitest.RoleChunk(id), openaitest.ContentChunk(id, "Hel"), openaitest.ContentChunk(id, "lo \"x\"\n"), openaitest.FinishChunk(id, "stop"), usage),
			want: []string{"text_start", "text_delta Hel", "text_delta lo \"x\"\n", "text_end",
				"usage in=70 out=20 cacheRead=30 cacheWrite=0 total=120", "done stop " + id},
		},
		{
			name: "reasoning_content then text",
			chunks: chunks(openaitest.RoleChunk(id), openaitest.ReasoningChunk(id, "reasoning_content", "Let me "),
				openaitest.ReasoningChunk(id, "reasoning_content", "think."), openaitest.ContentChunk(id, "Done."), openaitest.FinishChunk(id, "stop")),
			want: []string{"thinking_start", "thinking_delta Let me ", "thinking_delta think.", "thinking_end reasoning_content",
				"text_start", "text_delta Done.", "text_end", "done stop " + id},
		},
		{
			name:   "reasoning field",
			chunks: chunks(openaitest.ReasoningChunk(id, "reasoning", "hmm \u00e9"), openaitest.FinishChunk(id, "stop")),
			want:   []string{"thinking_start", "thinking_delta hmm \u00e9", "thinking_end reasoning", "done stop " + id},
		},
		{
			name:   "compat reasoningContentField",
			compat: `{"reasoningContentField":"thoughts"}`,
			chunks: chunks(openaitest.ReasoningChunk(id, "reasoning", "ignored"), openaitest.ReasoningChunk(id, "thoughts", "kept"), openaitest.FinishChunk(id, "stop")),
			want:   []string{"thinking_start", "thinking_delta kept", "thinking_end thoughts", "done stop " + id},
		},
		{
			name: "interleaved tool calls by index",
			chunks: chunks(openaitest.RoleChunk(id),
				openaitest.ToolCallChunk(id, 0, "call_a", "read", ""),
				openaitest.ToolCallChunk(id, 1, "call_b", "grep", `{"pat`),
				openaitest.ToolCallChunk(id, 0, "", "", `{"path":`),
				openaitest.ToolCallChunk(id, 1, "", "", `tern":"x"}`),
				openaitest.ToolCallChunk(id, 0, "", "", `"a.go"}`),
				openaitest.FinishChunk(id, "tool_calls")),
			want: []string{
				"tool_start call_a read", `tool_delta call_a {"path":`, `tool_delta call_a "a.go"}`, "tool_end call_a",
				"tool_start call_b grep", `tool_delta call_b {"pattern":"x"}`, "tool_end call_b",
				"done toolUse " + id},
		},
		{
			name: "text then sequential tool calls",
			chunks: chunks(openaitest.ContentChunk(id, "Reading."),
				openaitest.ToolCallChunk(id, 0, "call_a", "read", `{}`),
				openaitest.ToolCallChunk(id, 1, "call_b", "read", `{"p":1}`),
				openaitest.FinishChunk(id, "tool_calls")),
			want: []string{"text_start", "text_delta Reading.", "text_end",
				"tool_start call_a read", "tool_delta call_a {}", "tool_end call_a",
				"tool_start call_b read", `tool_delta call_b {"p":1}`, "tool_end call_b", "done toolUse " + id},
		},
		{
			// vLLM's parsers may send the model's whitespace between calls:
			// the live call ends before the text block, the next call waits
			// for finish_reason.
			name: "content between tool calls",
			chunks: chunks(openaitest.ToolCallChunk(id, 0, "call_a", "read", `{}`),
				openaitest.ContentChunk(id, "\n\n"),
				openaitest.ToolCallChunk(id, 1, "call_b", "read", `{"p":1}`),
				openaitest.FinishChunk(id, "tool_calls")),
			want: []string{"tool_start call_a read", "tool_delta call_a {}", "tool_end call_a",
				"text_start", "text_delta \n\n", "text_end",
				"tool_start call_b read", `tool_delta call_b {"p":1}`, "tool_end call_b", "done toolUse " + id},
		},
		{
			name: "content inside a call ends it; its later fragments are dropped",
			chunks: chunks(openaitest.ToolCallChunk(id, 0, "call_a", "read", `{"p"`),
				openaitest.ContentChunk(id, "x"),
				openaitest.ToolCallChunk(id, 0, "", "", `:1}`),
				openaitest.FinishChunk(id, "tool_calls")),
			want: []string{"tool_start call_a read", `tool_delta call_a {"p"`, "tool_end call_a",
				"text_start", "text_delta x", "text_end", "done toolUse " + id},
		},
		{
			name: "tool call name after its id",
			chunks: chunks(
				json.RawMessage(`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"a\""}}]},"finish_reason":null}]}`),
				json.RawMessage(`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":":1}"}}]},"finish_reason":null}]}`),
				openaitest.FinishChunk(id, "tool_calls")),
			want: []string{"tool_start call_a read", `tool_delta call_a {"a"`, "tool_delta call_a :1}", "tool_end call_a", "done toolUse " + id},
		},
		{
			name:   "eof after finish_reason",
			chunks: chunks(openaitest.ContentChunk(id, "a"), openaitest.FinishChunk(id, "stop")),
			end:    openaitest.EndEOF,
			want:   []string{"text_start", "text_delta a", "text_end", "done stop " + id},
		},
		{
			name: "reasoning as an object is ignored",
			chunks: chunks(json.RawMessage(`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"a","reasoning":{"summary":"x"}},"finish_reason":null}]}`),
				openaitest.FinishChunk(id, "stop")),
			want: []string{"text_start", "text_delta a", "text_end", "done stop " + id},
		},
		{
			name:   "length",
			chunks: chunks(openaitest.ContentChunk(id, "a"), openaitest.FinishChunk(id, "length")),
			want:   []string{"text_start", "text_delta a", "text_end", "done length " + id},
		},
		{
			name:   "function_call",
			chunks: chunks(openaitest.FinishChunk(id, "function_call")),
			want:   []string{"done toolUse " + id},
		},
		{
			name:   "end",
			chunks: chunks(openaitest.FinishChunk(id, "end")),
			want:   []string{"done stop " + id},
		},
		{
			name: "usage with reasoning counted in completion_tokens",
			chunks: chunks(openaitest.FinishChunk(id, "stop"),
				openaitest.UsageChunk(id, openaitest.Usage{PromptTokens: 10, CompletionTokens: 50, ReasoningTokens: 40})),
			want: []string{"usage in=10 out=50 cacheRead=0 cacheWrite=0 total=60", "done stop " + id},
		},
		{
			name: "usage with reasoning counted apart",
			chunks: chunks(openaitest.FinishChunk(id, "stop"),
				openaitest.UsageChunk(id, openaitest.Usage{PromptTokens: 10, CompletionTokens: 10, ReasoningTokens: 40, TotalTokens: 60})),
			want: []string{"usage in=10 out=50 cacheRead=0 cacheWrite=0 total=60", "done stop " + id},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := &engine.Request{Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}}
			req.Model.Compat = json.RawMessage(tt.compat)
			r := stream(t, openai.Options{}, req, openaitest.Response{Chunks: tt.chunks, End: tt.end})
			if r.err != nil {
				t.Fatalf("Stream: %v", r.err)
			}
			if got, want := strings.Join(r.events, "\n"), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("events:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// retryable is agent-core.md §7.1's transport pattern.
var retryable = regexp.MustCompile(`(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|timed? out|timeout|terminated|retry delay|stream stall|usage.?limit|usage_limit_reached|usage_not_included|limit_reached|quota.?exceeded|resource.?exhausted`)

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	apiErr := func(status int, msg, typ, code string, headers map[string]string) openaitest.Response {
		return openaitest.Response{Status: status, Headers: headers, Error: &openaitest.APIError{Message: msg, Type: typ, Code: code}}
	}
	// An HTTP date is passed on as RetryAt, for the engine to measure on its
	// clock; the adapter reads no clock.
	date := time.Date(2026, 1, 1, 0, 1, 30, 0, time.UTC)
	tests := []struct {
		name       string
		resp       openaitest.Response
		kind       engine.ErrorKind
		status     int
		message    string // exact, or a prefix when it ends with "..."
		retryAfter time.Duration
		retryAt    time.Time
		sdkErr     bool // errors.As finds *sdk.Error
		events     []string
	}{
		{name: "401", resp: apiErr(401, "Incorrect API key provided: sk-test-****cdef.", "invalid_request_error", "invalid_api_key", nil),
			kind: engine.ErrorAuth, status: 401, message: "401 Incorrect API key provided: sk-test-****cdef.", sdkErr: true},
		{name: "403", resp: apiErr(403, "Country, region, or territory not supported", "request_forbidden", "unsupported_country_region_territory", nil),
			kind: engine.ErrorAuth, status: 403, message: "403 Country, region, or territory not supported", sdkErr: true},
		{name: "429 retry-after seconds", resp: apiErr(429, "Rate limit reached for gpt-test in organization org-x on tokens per min (TPM): Limit 1, Used 1, Requested 1.", "tokens", "rate_limit_exceeded", map[string]string{"retry-after": "2"}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 Rate limit reached for gpt-test in organization org-x on tokens per min (TPM): Limit 1, Used 1, Requested 1.", retryAfter: 2 * time.Second, sdkErr: true},
		{name: "429 retry-after-ms wins", resp: apiErr(429, "You exceeded your current quota", "insufficient_quota", "insufficient_quota", map[string]string{"retry-after-ms": "1500", "retry-after": "9"}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 You exceeded your current quota", retryAfter: 1500 * time.Millisecond, sdkErr: true},
		{name: "429 retry-after date", resp: apiErr(429, "Too Many Requests", "requests", "", map[string]string{"retry-after": date.Format(http.TimeFormat)}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 Too Many Requests", retryAt: date, sdkErr: true},
		{name: "429 rate-limit reset headers", resp: apiErr(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded", map[string]string{"x-ratelimit-reset-requests": "1.5s", "x-ratelimit-reset-tokens": "6m0s"}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 Rate limit reached for requests", retryAfter: 6 * time.Minute, sdkErr: true},
		{name: "503 ignores rate-limit reset", resp: apiErr(503, "Service Unavailable", "server_error", "", map[string]string{"x-ratelimit-reset-requests": "1s"}),
			kind: engine.ErrorOverloaded, status: 503, message: "503 Service Unavailable", sdkErr: true},
		{name: "429 empty body", resp: openaitest.Response{Status: 429, Body: " "},
			kind: engine.ErrorRateLimit, status: 429, message: "429 status code (no body)", sdkErr: true},
		{name: "401 error as a string", resp: openaitest.Response{Status: 401, Body: `{"error":"Invalid token"}`},
			kind: engine.ErrorAuth, status: 401, message: "401 Invalid token"},
		{name: "400 detail", resp: openaitest.Response{Status: 400, Body: `{"object":"error","detail":"This model's maximum context length is 4096 tokens."}`},
			kind: engine.ErrorContextOverflow, status: 400, message: "400 This model's maximum context length is 4096 tokens.", sdkErr: true},
		{name: "500", resp: apiErr(500, "The server had an error while processing your request. Sorry about that!", "server_error", "", nil),
			kind: engine.ErrorOverloaded, status: 500, message: "500 The server had an error while processing your request. Sorry about that!", sdkErr: true},
		{name: "502 html", resp: openaitest.Response{Status: 502, Body: "<html><body>Bad gateway</body></html>"},
			kind: engine.ErrorOverloaded, status: 502, message: "502 <html><body>Bad gateway</body></html>", sdkErr: true},
		{name: "200 html page", resp: openaitest.Response{Status: 200, Headers: map[string]string{"content-type": "text/html; charset=utf-8"},
			Body: "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"},
			kind: engine.ErrorProtocol, status: 200, message: `the server answered 200 with text/html instead of an event stream: "<title>502 Bad Gateway</title>"`},
		{name: "200 page as text/plain", resp: openaitest.Response{Status: 200, Headers: map[string]string{"content-type": "text/plain"},
			Body: "  <html><body>Please sign in to continue to the internet. This network is monitored.</body></html>"},
			kind: engine.ErrorProtocol, status: 200, message: `the server answered 200 with text/plain instead of an event stream: "<html><body>Please sign in to continue to the internet. This network is monitored.</body></html>"`},
		{name: "200 json instead of a stream", resp: openaitest.Response{Status: 200, Headers: map[string]string{"content-type": "application/json"},
			Body: `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`},
			kind: engine.ErrorProtocol, status: 200, message: `the server answered 200 with application/json instead of an event stream: "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[]}"`},
		{name: "line over the decoder's cap", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "a")), Malformed: "{" + strings.Repeat("x", 33<<20)},
			kind: engine.ErrorProtocol, status: 200, message: `the server sent a line over 32 MiB in its event stream, starting "data: {` + strings.Repeat("x", 73) + `…"`,
			events: []string{"text_start", "text_delta a"}},
		{name: "529", resp: apiErr(529, "busy", "server_error", "", nil),
			kind: engine.ErrorOverloaded, status: 529, message: "529 busy (overloaded)", sdkErr: true},
		{name: "context length", resp: apiErr(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "invalid_request_error", "context_length_exceeded", nil),
			kind: engine.ErrorContextOverflow, status: 400, message: "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", sdkErr: true},
		{name: "400 other", resp: apiErr(400, "Invalid schema for function 'x'", "invalid_request_error", "invalid_function_parameters", nil),
			kind: engine.ErrorOther, status: 400, message: "400 Invalid schema for function 'x'", sdkErr: true},
		{name: "cut mid-stream", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "par")), End: openaitest.EndCut},
			kind: engine.ErrorTransport, message: "Connection error: ...", events: []string{"text_start", "text_delta par"}},
		{name: "eof without finish_reason", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "par")), End: openaitest.EndEOF},
			kind: engine.ErrorTransport, message: "Connection error: stream ended before finish_reason", events: []string{"text_start", "text_delta par"}},
		{name: "done without finish_reason", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "par"))},
			kind: engine.ErrorTransport, message: "Connection error: stream ended before finish_reason", events: []string{"text_start", "text_delta par"}},
		{name: "malformed chunk", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "a")), Malformed: `{"id":"chatcmpl-1","choices":[{`},
			kind: engine.ErrorOther, message: "Malformed chunk in the provider's stream: ...", events: []string{"text_start", "text_delta a"}},
		{name: "error event in stream", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "a"), json.RawMessage(`{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`))},
			kind: engine.ErrorOverloaded, message: "The server is overloaded", events: []string{"text_start", "text_delta a"}},
		{name: "content_filter", resp: openaitest.Response{Chunks: chunks(openaitest.ContentChunk(id, "a"), openaitest.FinishChunk(id, "content_filter"))},
			kind: engine.ErrorOther, message: "Provider finish_reason: content_filter", events: []string{"text_start", "text_delta a", "text_end"}},
		{name: "other finish_reason", resp: openaitest.Response{Chunks: chunks(openaitest.FinishChunk(id, "insufficient_system_resource"))},
			kind: engine.ErrorOther, message: "Provider finish_reason: insufficient_system_resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := stream(t, keyed(testKey), nil, tt.resp)
			var pe *engine.ProviderError
			if !errors.As(r.err, &pe) {
				t.Fatalf("err = %T %v, want *engine.ProviderError", r.err, r.err)
			}
			if pe.Kind != tt.kind || pe.Status != tt.status {
				t.Errorf("kind, status = %v, %d; want %v, %d", pe.Kind, pe.Status, tt.kind, tt.status)
			}
			if p, ok := strings.CutSuffix(tt.message, "..."); ok {
				if !strings.HasPrefix(pe.Message, p) {
					t.Errorf("message = %q, want prefix %q", pe.Message, p)
				}
			} else if pe.Message != tt.message {
				t.Errorf("message = %q, want %q", pe.Message, tt.message)
			}
			if r.err.Error() != pe.Message {
				t.Errorf("Error() = %q, want the message", r.err.Error())
			}
			if pe.RetryAfter != tt.retryAfter || !pe.RetryAt.Equal(tt.retryAt) {
				t.Errorf("RetryAfter, RetryAt = %v, %v; want %v, %v", pe.RetryAfter, pe.RetryAt, tt.retryAfter, tt.retryAt)
			}
			if pe.Kind.Retryable() && !retryable.MatchString(pe.Message) {
				t.Errorf("retryable message %q does not match the §7.1 pattern", pe.Message)
			}
			var se *sdk.Error
			if got := errors.As(r.err, &se); got != tt.sdkErr {
				t.Errorf("errors.As(*sdk.Error) = %v, want %v", got, tt.sdkErr)
			}
			if got, want := strings.Join(r.events, "\n"), strings.Join(tt.events, "\n"); got != want {
				t.Errorf("events before the failure:\n%s\nwant:\n%s", got, want)
			}
			if strings.Contains(r.err.Error(), testKey) {
				t.Errorf("the key leaked into %q", r.err.Error())
			}
		})
	}
}

// TestStall checks that cancelling ctx ends a stream the server has stopped
// feeding, promptly and with ctx's error.
func TestStall(t *testing.T) {
	t.Parallel()
	for _, before := range []int{0, 1} {
		t.Run(fmt.Sprint(before, " chunks"), func(t *testing.T) {
			t.Parallel()
			resp := openaitest.Response{End: openaitest.EndStall}
			if before > 0 {
				resp.Chunks = chunks(openaitest.ContentChunk(id, "a"))
			}
			srv := openaitest.NewServer(&openaitest.Script{Responses: []openaitest.Response{resp}})
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The client is inside the stream (headers read, maybe a chunk)
			// when the server has flushed; cancel right then.
			hc := &http.Client{Transport: cancelAfterHeaders{cancel: cancel, next: http.DefaultTransport, immediate: before == 0}}
			var events int
			err := openai.New(openai.Options{HTTPClient: hc}).Stream(ctx, &engine.Request{Model: testModel(srv.URL)}, func(engine.StreamEvent) error {
				events++
				cancel()
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if events != 2*before {
				t.Errorf("%d events, want %d", events, 2*before)
			}
		})
	}
}

// cancelAfterHeaders cancels the call once the response headers are in,
// when immediate (the stream has no chunk to trigger it).
type cancelAfterHeaders struct {
	cancel    context.CancelFunc
	next      http.RoundTripper
	immediate bool
}

func (c cancelAfterHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(r)
	if err == nil && c.immediate {
		c.cancel()
	}
	return res, err
}

func TestCallbackError(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(&openaitest.Script{Responses: []openaitest.Response{{
		Chunks: chunks(openaitest.ContentChunk(id, "a"), openaitest.ContentChunk(id, "b"), openaitest.FinishChunk(id, "stop")),
	}}})
	defer srv.Close()
	stop := errors.New("stop here")
	var n int
	err := openai.New(openai.Options{}).Stream(context.Background(), &engine.Request{Model: testModel(srv.URL)}, func(engine.StreamEvent) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("err, events = %v, %d; want %v, 1", err, n, stop)
	}
}

// TestKeyNeverInErrors makes servers echo the key and a secret header back
// in every place a message comes from.
func TestKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const secretHeader = "hdr-secret-value-42"
	echo := "bad key " + testKey + " / " + secretHeader
	responses := []openaitest.Response{
		{Status: 401, Error: &openaitest.APIError{Message: echo, Type: "invalid_request_error"}},
		{Status: 429, Error: &openaitest.APIError{Message: echo, Type: "requests"}},
		{Status: 500, Body: echo},
		{Chunks: chunks(json.RawMessage(`{"error":{"message":` + fmt.Sprintf("%q", echo) + `,"type":"server_error"}}`))},
		{Chunks: chunks(openaitest.ContentChunk(id, "a")), Malformed: `{"x":"` + testKey},
		{Chunks: chunks(openaitest.ContentChunk(id, "a")), End: openaitest.EndCut},
	}
	for i, resp := range responses {
		req := &engine.Request{}
		req.Model = testModel("")
		req.Model.Headers = map[string]string{"X-Team-Token": secretHeader}
		r := stream(t, keyed(testKey), req, resp)
		if r.err == nil {
			t.Fatalf("response %d: no error", i)
		}
		var pe *engine.ProviderError
		errors.As(r.err, &pe)
		for _, text := range []string{r.err.Error(), pe.Message, fmt.Sprintf("%v %+v %s", r.err, pe, pe.Err)} {
			if strings.Contains(text, testKey) || strings.Contains(text, secretHeader) {
				t.Errorf("response %d: secret in %q", i, text)
			}
		}
		if got := r.reqs[0].Header.Get("X-Team-Token"); got != secretHeader {
			t.Errorf("response %d: header X-Team-Token = %q", i, got)
		}
	}
}
