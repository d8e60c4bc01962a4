package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
)

const respID = "resp_1"

func respModel(url string) engine.Model {
	return engine.Model{
		ID: "gpt-test", Name: "gpt-test", API: "openai-responses", Provider: "openai", BaseURL: url,
		MaxTokens: 16384, Input: []string{"text", "image"}, Reasoning: true,
	}
}

// streamResponses runs one Stream call of the Responses adapter against a
// server replaying responses in the Responses format.
func streamResponses(t *testing.T, opts openai.Options, req *engine.Request, responses ...openaitest.Response) result {
	t.Helper()
	srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: responses})
	defer srv.Close()
	if req == nil {
		req = &engine.Request{Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}}
	}
	if req.Model.ID == "" {
		req.Model = respModel("")
	}
	if req.Model.API != "openai-codex-responses" || req.Model.BaseURL == "" {
		req.Model.BaseURL = srv.URL
	}
	var r result
	r.err = openai.NewResponses(opts).Stream(context.Background(), req, func(ev engine.StreamEvent) error {
		r.events = append(r.events, render(ev))
		return nil
	})
	r.reqs = srv.Requests()
	return r
}

func events(evs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		out[i] = json.RawMessage(e)
	}
	return out
}

func TestResponsesStream(t *testing.T) {
	t.Parallel()
	usage := openaitest.ResponseUsage{Input: 100, Cached: 30, Output: 50, Reasoning: 40}
	const usageLine = "usage in=70 out=50 cacheRead=30 cacheWrite=0 total=150"
	reasoningItem := `{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA-enc","summary":[{"type":"summary_text","text":"First."},{"type":"summary_text","text":"Second."}]}`
	tests := []struct {
		name   string
		events []json.RawMessage
		end    openaitest.End
		want   []string
	}{
		{
			name:   "text",
			events: openaitest.NewEvents(respID).Message("msg_1", "Hel", "lo \"x\"\n").Completed(usage),
			want: []string{"text_start", "text_delta Hel", "text_delta lo \"x\"\n", `text_end {"v":1,"id":"msg_1"}`,
				usageLine, "done stop " + respID},
		},
		{
			name:   "reasoning summary parts, then text: the item is the thinking block's signature",
			events: openaitest.NewEvents(respID).Reasoning("rs_1", "gAAAA-enc", "First.", "Second.").Message("msg_1", "Done.").Completed(usage),
			want: []string{"thinking_start", "thinking_delta First.", "thinking_delta \n\nSecond.", "thinking_end " + reasoningItem,
				"text_start", "text_delta Done.", `text_end {"v":1,"id":"msg_1"}`, usageLine, "done stop " + respID},
		},
		{
			name:   "encrypted reasoning without a summary is an empty thinking block",
			events: openaitest.NewEvents(respID).Reasoning("rs_1", "gAAAA-enc").Message("msg_1", "a").Completed(usage),
			want: []string{"thinking_start", `thinking_end {"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA-enc","summary":[]}`,
				"text_start", "text_delta a", `text_end {"v":1,"id":"msg_1"}`, usageLine, "done stop " + respID},
		},
		{
			name: "function calls: the id carries the item id",
			events: openaitest.NewEvents(respID).Message("msg_1", "Reading.").
				Call("fc_1", "call_1", "read", `{"path":`, `"a.go"}`).Call("fc_2", "call_2", "ls", `{}`).Completed(usage),
			want: []string{"text_start", "text_delta Reading.", `text_end {"v":1,"id":"msg_1"}`,
				"tool_start call_1|fc_1 read", `tool_delta call_1|fc_1 {"path":`, `tool_delta call_1|fc_1 "a.go"}`, `tool_end call_1|fc_1 {"path":"a.go"}`,
				"tool_start call_2|fc_2 ls", "tool_delta call_2|fc_2 {}", "tool_end call_2|fc_2 {}",
				usageLine, "done toolUse " + respID},
		},
		{
			name: "interleaved items: the later one is buffered and follows whole",
			events: events(
				`{"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_1","name":"read"}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_2","type":"function_call","arguments":"","call_id":"call_2","name":"ls"}}`,
				`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_2","delta":"{\"d\""}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":"{\"p\""}`,
				`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_2","delta":":2}"}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_2","type":"function_call","arguments":"{\"d\":2}","call_id":"call_2","name":"ls"}}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"item_id":"fc_1","delta":":1}"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"{\"p\":1}","call_id":"call_1","name":"read"}}`,
				`{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}`),
			want: []string{"tool_start call_1|fc_1 read", `tool_delta call_1|fc_1 {"p"`, "tool_delta call_1|fc_1 :1}", `tool_end call_1|fc_1 {"p":1}`,
				"tool_start call_2|fc_2 ls", `tool_delta call_2|fc_2 {"d":2}`, `tool_end call_2|fc_2 {"d":2}`, "done toolUse " + respID},
		},
		{
			name: "arguments only in the done item",
			events: events(
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"read"}}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"{\"p\":1}","call_id":"call_1","name":"read"}}`,
				`{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}`),
			want: []string{"tool_start call_1|fc_1 read", `tool_delta call_1|fc_1 {"p":1}`, `tool_end call_1|fc_1 {"p":1}`, "done toolUse " + respID},
		},
		{
			name: "items the adapter does not read are skipped; a refusal is text",
			events: openaitest.NewEvents(respID).
				Raw(`{"type":"response.output_item.added","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}}`).
				Raw(`{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"completed"}}`).
				Raw(`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_2","type":"message","content":[],"role":"assistant"}}`).
				Raw(`{"type":"response.refusal.delta","output_index":1,"item_id":"msg_2","content_index":0,"delta":"I can't."}`).
				Raw(`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_2","type":"message","phase":"final_answer","content":[{"type":"refusal","refusal":"I can't."}],"role":"assistant"}}`).
				Completed(usage),
			want: []string{"text_start", "text_delta I can't.", `text_end {"v":1,"id":"msg_2","phase":"final_answer"}`, usageLine, "done stop " + respID},
		},
		{
			name: "raw reasoning text",
			events: events(
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
				`{"type":"response.reasoning_text.delta","output_index":0,"item_id":"rs_1","content_index":0,"delta":"hmm"}`,
				`{"type":"response.reasoning_text.delta","output_index":0,"item_id":"rs_1","content_index":0,"delta":" ok"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hmm ok"}]}}`,
				`{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}`),
			want: []string{"thinking_start", "thinking_delta hmm", "thinking_delta  ok",
				`thinking_end {"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hmm ok"}]}`, "done stop " + respID},
		},
		{
			name:   "incomplete: max_output_tokens is length",
			events: openaitest.NewEvents(respID).Message("msg_1", "a").Incomplete("max_output_tokens", usage),
			want:   []string{"text_start", "text_delta a", `text_end {"v":1,"id":"msg_1"}`, usageLine, "done length " + respID},
		},
		{
			name: "Codex's response.done ends the stream; an item still open is ended",
			events: events(
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant"}}`,
				`{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"hi"}`,
				`{"type":"response.done","response":{"id":"resp_9","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}}`),
			want: []string{"text_start", "text_delta hi", "text_end", "usage in=5 out=2 cacheRead=0 cacheWrite=0 total=7", "done stop resp_9"},
		},
		{
			name:   "[DONE] after the terminal event",
			events: openaitest.NewEvents(respID).Message("msg_1", "a").Completed(usage),
			end:    openaitest.EndDone,
			want:   []string{"text_start", "text_delta a", `text_end {"v":1,"id":"msg_1"}`, usageLine, "done stop " + respID},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := streamResponses(t, openai.Options{}, nil, openaitest.Response{Chunks: tt.events, End: tt.end})
			if r.err != nil {
				t.Fatalf("Stream: %v", r.err)
			}
			if got, want := strings.Join(r.events, "\n"), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("events:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	apiErr := func(status int, msg, typ, code string, headers map[string]string) openaitest.Response {
		return openaitest.Response{Status: status, Headers: headers, Error: &openaitest.APIError{Message: msg, Type: typ, Code: code}}
	}
	date := time.Date(2026, 1, 1, 0, 1, 30, 0, time.UTC)
	partial := func() *openaitest.Events {
		return openaitest.NewEvents(respID).
			Raw(`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant"}}`).
			Raw(`{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"par"}`)
	}
	partialEvents := []string{"text_start", "text_delta par"}
	tests := []struct {
		name       string
		resp       openaitest.Response
		kind       engine.ErrorKind
		status     int
		message    string // exact, or a prefix when it ends with "..."
		retryAfter time.Duration
		retryAt    time.Time
		sdkErr     bool
		events     []string
	}{
		{name: "401", resp: apiErr(401, "Incorrect API key provided: sk-test-****cdef.", "invalid_request_error", "invalid_api_key", nil),
			kind: engine.ErrorAuth, status: 401, message: "401 Incorrect API key provided: sk-test-****cdef.", sdkErr: true},
		{name: "429 retry-after", resp: apiErr(429, "Rate limit reached for gpt-test", "tokens", "rate_limit_exceeded", map[string]string{"retry-after": "2"}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 Rate limit reached for gpt-test", retryAfter: 2 * time.Second, sdkErr: true},
		{name: "429 retry-after-ms", resp: apiErr(429, "You exceeded your current quota", "insufficient_quota", "insufficient_quota", map[string]string{"retry-after-ms": "1500"}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 You exceeded your current quota", retryAfter: 1500 * time.Millisecond, sdkErr: true},
		{name: "429 retry-after date", resp: apiErr(429, "Too Many Requests", "requests", "", map[string]string{"retry-after": date.Format(http.TimeFormat)}),
			kind: engine.ErrorRateLimit, status: 429, message: "429 Too Many Requests", retryAt: date, sdkErr: true},
		{name: "500", resp: apiErr(500, "The server had an error", "server_error", "", nil),
			kind: engine.ErrorOverloaded, status: 500, message: "500 The server had an error", sdkErr: true},
		{name: "400 context window", resp: apiErr(400, "Your input exceeds the context window of this model.", "invalid_request_error", "context_length_exceeded", nil),
			kind: engine.ErrorContextOverflow, status: 400, message: "400 Your input exceeds the context window of this model.", sdkErr: true},
		{name: "200 html page", resp: openaitest.Response{Status: 200, Headers: map[string]string{"content-type": "text/html"},
			Body: "<html><head><title>Sign in</title></head></html>"},
			kind: engine.ErrorProtocol, status: 200, message: `the server answered 200 with text/html instead of an event stream: "<title>Sign in</title>"`},
		{name: "error event: rate limit", resp: openaitest.Response{Chunks: partial().Error("rate_limit_exceeded", "Rate limit reached")},
			kind: engine.ErrorRateLimit, message: "Rate limit reached", events: partialEvents},
		{name: "error event: context", resp: openaitest.Response{Chunks: partial().Error("context_length_exceeded", "Your input exceeds the context window")},
			kind: engine.ErrorContextOverflow, message: "Your input exceeds the context window", events: partialEvents},
		{name: "error event nesting its error", resp: openaitest.Response{Chunks: events(`{"type":"error","error":{"type":"server_error","code":null,"message":"busy"}}`)},
			kind: engine.ErrorOverloaded, message: "busy (overloaded)"},
		{name: "response.failed", resp: openaitest.Response{Chunks: partial().Failed("server_error", "The model failed to generate a response.")},
			kind: engine.ErrorOverloaded, message: "server_error: The model failed to generate a response.", events: append(partialEvents, "text_end")},
		{name: "response.failed without an error", resp: openaitest.Response{Chunks: events(`{"type":"response.failed","response":{"id":"resp_1","status":"failed","error":null}}`)},
			kind: engine.ErrorOther, message: `Unknown error (no error details in response; status "failed")`},
		{name: "incomplete: content_filter", resp: openaitest.Response{Chunks: partial().Incomplete("content_filter", openaitest.ResponseUsage{})},
			kind: engine.ErrorOther, message: "Response incomplete: content_filter", events: append(partialEvents, "text_end", "usage in=0 out=0 cacheRead=0 cacheWrite=0 total=0")},
		{name: "cut mid-stream", resp: openaitest.Response{Chunks: partial().List(), End: openaitest.EndCut},
			kind: engine.ErrorTransport, message: "Connection error: ...", events: partialEvents},
		{name: "eof before response.completed", resp: openaitest.Response{Chunks: partial().List()},
			kind: engine.ErrorTransport, message: "Connection error: stream ended before response.completed", events: partialEvents},
		{name: "malformed event", resp: openaitest.Response{Chunks: partial().List(), Malformed: `{"type":"response.output_text.delta",`},
			kind: engine.ErrorOther, message: "Malformed chunk in the provider's stream: ...", events: partialEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := streamResponses(t, keyed(testKey), nil, tt.resp)
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
		})
	}
}

// TestResponsesStall: cancelling ctx ends a stream the server stopped
// feeding, promptly and with ctx's error.
func TestResponsesStall(t *testing.T) {
	t.Parallel()
	for _, before := range []int{0, 1} {
		t.Run(fmt.Sprint(before, " deltas"), func(t *testing.T) {
			t.Parallel()
			resp := openaitest.Response{End: openaitest.EndStall}
			if before > 0 {
				resp.Chunks = events(
					`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant"}}`,
					`{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"a"}`)
			}
			srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: []openaitest.Response{resp}})
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hc := &http.Client{Transport: cancelAfterHeaders{cancel: cancel, next: http.DefaultTransport, immediate: before == 0}}
			var n int
			err := openai.NewResponses(openai.Options{HTTPClient: hc}).Stream(ctx, &engine.Request{Model: respModel(srv.URL)}, func(ev engine.StreamEvent) error {
				n++
				if ev.Kind == engine.StreamTextDelta {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if n != 2*before {
				t.Errorf("%d events, want %d", n, 2*before)
			}
		})
	}
}

func TestResponsesCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop here")
	srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: []openaitest.Response{{
		Chunks: openaitest.NewEvents(respID).Message("msg_1", "a", "b").Completed(openaitest.ResponseUsage{}),
	}}})
	defer srv.Close()
	var n int
	err := openai.NewResponses(openai.Options{}).Stream(context.Background(), &engine.Request{Model: respModel(srv.URL)}, func(engine.StreamEvent) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("err, events = %v, %d; want %v, 1", err, n, stop)
	}
}

// TestResponsesKeyNeverInErrors makes the server echo the key and a secret
// header in every place a message comes from.
func TestResponsesKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	const secretHeader = "hdr-secret-value-42"
	echo := "bad key " + testKey + " / " + secretHeader
	responses := []openaitest.Response{
		{Status: 401, Error: &openaitest.APIError{Message: echo, Type: "invalid_request_error"}},
		{Status: 500, Body: echo},
		{Chunks: openaitest.NewEvents(respID).Error("server_error", echo)},
		{Chunks: openaitest.NewEvents(respID).Failed("server_error", echo)},
		{Chunks: openaitest.NewEvents(respID).List(), Malformed: `{"x":"` + testKey},
	}
	for i, resp := range responses {
		req := &engine.Request{Model: respModel("")}
		req.Model.Headers = map[string]string{"X-Team-Token": secretHeader}
		r := streamResponses(t, keyed(testKey), req, resp)
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
	}
}
