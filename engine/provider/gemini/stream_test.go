package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/gemini"
	"github.com/xcsh-go/xcsh/engine/provider/gemini/geminitest"
)

const testKey = "AIza-test-key-1234"

func testModel(id string) engine.Model {
	return engine.Model{ID: id, Name: id, API: "google-generative-ai", Provider: "google",
		Reasoning: true, Input: []string{"text", "image"}, MaxTokens: 65536}
}

func render(ev engine.StreamEvent) string {
	switch ev.Kind {
	case engine.StreamTextStart:
		return "text_start"
	case engine.StreamTextDelta:
		return "text_delta " + ev.Delta
	case engine.StreamTextEnd:
		return strings.TrimSpace("text_end " + ev.Signature)
	case engine.StreamThinkingStart:
		return "thinking_start"
	case engine.StreamThinkingDelta:
		return "thinking_delta " + ev.Delta
	case engine.StreamThinkingEnd:
		return strings.TrimSpace("thinking_end " + ev.Signature)
	case engine.StreamToolCallStart:
		return "tool_start " + ev.ToolCallID + " " + ev.ToolName
	case engine.StreamToolCallDelta:
		return "tool_delta " + ev.ToolCallID + " " + ev.Delta
	case engine.StreamToolCallEnd:
		return strings.TrimSpace("tool_end " + ev.ToolCallID + " " + string(ev.Arguments) + " " + ev.Signature)
	case engine.StreamUsage:
		u := ev.Usage
		return fmt.Sprintf("usage in=%d out=%d cacheRead=%d total=%d", u.Input, u.Output, u.CacheRead, u.TotalTokens)
	case engine.StreamDone:
		return "done " + string(ev.StopReason) + " " + ev.ResponseID
	}
	return fmt.Sprintf("kind %d", ev.Kind)
}

type result struct {
	events []string
	err    error
	reqs   []geminitest.Request
}

// stream runs one Stream call against a server replaying responses.
func stream(t *testing.T, req *engine.Request, responses ...geminitest.Response) result {
	t.Helper()
	srv := geminitest.New(geminitest.Script{Responses: responses})
	defer srv.Close()
	if req == nil {
		req = &engine.Request{Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}}
	}
	if req.Model.ID == "" {
		req.Model = testModel("gemini-2.5-flash")
	}
	req.Model.BaseURL = srv.URL + "/v1beta"
	var r result
	p := gemini.New(gemini.Options{APIKey: func(engine.Model) string { return testKey }})
	r.err = p.Stream(context.Background(), req, func(ev engine.StreamEvent) error {
		r.events = append(r.events, render(ev))
		return nil
	})
	r.reqs = srv.Requests()
	return r
}

func chunks(c ...json.RawMessage) geminitest.Response { return geminitest.Response{Chunks: c} }

func TestStream(t *testing.T) {
	t.Parallel()
	usage := &geminitest.Usage{Prompt: 100, Cached: 30, Candidates: 20, Thoughts: 40}
	const usageLine = "usage in=70 out=60 cacheRead=30 total=160"
	tests := []struct {
		name string
		resp geminitest.Response
		want []string
	}{
		{
			name: "text in pieces, the signature on a trailing empty part",
			resp: chunks(
				geminitest.Chunk("r1", "", nil, geminitest.TextPart("Hel")),
				geminitest.Chunk("r1", "", nil, geminitest.TextPart("lo \"x\"\n")),
				geminitest.Chunk("r1", "STOP", usage, geminitest.SignedTextPart("", "c2lnLXRleHQ="))),
			want: []string{"text_start", "text_delta Hel", "text_delta lo \"x\"\n", "text_end c2lnLXRleHQ=", usageLine, "done stop r1"},
		},
		{
			name: "thought summary then answer: two blocks, the thought's signature on its block",
			resp: chunks(
				geminitest.Chunk("r1", "", nil, geminitest.ThoughtPart("**Plan**\n", "")),
				geminitest.Chunk("r1", "", nil, geminitest.ThoughtPart("read it", "dGhvdWdodA=="), geminitest.TextPart("Done.")),
				geminitest.Chunk("r1", "STOP", usage)),
			want: []string{"thinking_start", "thinking_delta **Plan**\n", "thinking_delta read it", "thinking_end dGhvdWdodA==",
				"text_start", "text_delta Done.", "text_end", usageLine, "done stop r1"},
		},
		{
			name: "several calls in one turn: ids made from the response id, the first with its signature",
			resp: chunks(
				geminitest.Chunk("r7", "", nil, geminitest.TextPart("Reading.")),
				geminitest.Chunk("r7", "STOP", usage,
					geminitest.CallPart("", "read", `{"path":"a.go","limit":10}`, "Y2FsbC1zaWc="),
					geminitest.CallPart("", "ls", `{}`, ""))),
			want: []string{"text_start", "text_delta Reading.", "text_end",
				"tool_start read_r7_1 read", `tool_delta read_r7_1 {"limit":10,"path":"a.go"}`, `tool_end read_r7_1 {"limit":10,"path":"a.go"} Y2FsbC1zaWc=`,
				"tool_start ls_r7_2 ls", "tool_delta ls_r7_2 {}", "tool_end ls_r7_2 {}",
				usageLine, "done toolUse r7"},
		},
		{
			name: "a call with the API's own id keeps it; a repeated id gets a new one",
			resp: chunks(geminitest.Chunk("r2", "STOP", nil,
				geminitest.CallPart("fc-1", "read", `{"path":"a"}`, ""),
				geminitest.CallPart("fc-1", "read", `{"path":"b"}`, ""))),
			want: []string{"tool_start fc-1 read", `tool_delta fc-1 {"path":"a"}`, `tool_end fc-1 {"path":"a"}`,
				"tool_start read_r2_2 read", `tool_delta read_r2_2 {"path":"b"}`, `tool_end read_r2_2 {"path":"b"}`, "done toolUse r2"},
		},
		{
			name: "MAX_TOKENS is length",
			resp: chunks(geminitest.Chunk("r3", "MAX_TOKENS", nil, geminitest.TextPart("cut"))),
			want: []string{"text_start", "text_delta cut", "text_end", "done length r3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := stream(t, nil, tc.resp)
			if r.err != nil {
				t.Fatalf("err %v; events %q", r.err, r.events)
			}
			if strings.Join(r.events, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(r.events, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(r.reqs) != 1 {
				t.Fatalf("%d requests", len(r.reqs))
			}
			q := r.reqs[0]
			if q.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || q.Query != "alt=sse" || q.Header.Get("x-goog-api-key") != testKey {
				t.Errorf("request %s ?%s key %q", q.Path, q.Query, q.Header.Get("x-goog-api-key"))
			}
		})
	}
}

func TestStreamFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		resp   geminitest.Response
		kind   engine.ErrorKind
		msg    string
		after  time.Duration
		status int
	}{
		{
			name: "429 with RetryInfo: rate limit, its delay",
			resp: geminitest.Response{Status: 429, Error: geminitest.APIError(429, "RESOURCE_EXHAUSTED",
				"You exceeded your current quota. Please retry in 27.38s.", geminitest.RetryInfo("27s"))},
			kind: engine.ErrorRateLimit, msg: "429 RESOURCE_EXHAUSTED: You exceeded your current quota. Please retry in 27.38s.",
			after: 27 * time.Second, status: 429,
		},
		{
			name: "503 with Retry-After: overloaded, the header's delay",
			resp: geminitest.Response{Status: 503, Headers: map[string]string{"Retry-After": "3"},
				Error: geminitest.APIError(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")},
			kind: engine.ErrorOverloaded, msg: "503 UNAVAILABLE: The model is overloaded. Please try again later.", after: 3 * time.Second, status: 503,
		},
		{
			name: "a bad key is 400 with API_KEY_INVALID: auth, the key never shown",
			resp: geminitest.Response{Status: 400, Error: geminitest.APIError(400, "INVALID_ARGUMENT",
				"API key not valid. Please pass a valid API key. ("+testKey+")", geminitest.ErrorInfo("API_KEY_INVALID"))},
			kind: engine.ErrorAuth, msg: "400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key. ([redacted])", status: 400,
		},
		{
			name: "too long: context overflow",
			resp: geminitest.Response{Status: 400, Error: geminitest.APIError(400, "INVALID_ARGUMENT",
				"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).")},
			kind: engine.ErrorContextOverflow, msg: "400 INVALID_ARGUMENT: The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", status: 400,
		},
		{
			name: "a proxy's page with 200 is not a stream, never retried",
			resp: geminitest.Response{RawBody: "<html><head><title>Sign in</title></head></html>", Headers: map[string]string{"Content-Type": "text/html"}},
			kind: engine.ErrorProtocol, msg: `the server answered 200 with text/html instead of an event stream: "<title>Sign in</title>"`, status: 200,
		},
		{
			name: "a stream cut mid-way: transport",
			resp: geminitest.Response{Chunks: []json.RawMessage{geminitest.Chunk("r1", "", nil, geminitest.TextPart("Hel"))}, End: geminitest.EndCut},
			kind: engine.ErrorTransport, msg: "Connection error: unexpected EOF",
		},
		{
			name: "a stream that ends without finishReason: transport",
			resp: chunks(geminitest.Chunk("r1", "", nil, geminitest.TextPart("Hel"))),
			kind: engine.ErrorTransport, msg: "Connection error: stream ended before finishReason",
		},
		{
			// The SDK drops finishMessage from the Gemini API's chunks.
			name: "SAFETY: an error",
			resp: chunks(geminitest.Chunk("r1", "", nil, geminitest.TextPart("Hel")),
				json.RawMessage(`{"candidates":[{"content":{"parts":[],"role":"model"},"finishReason":"SAFETY","finishMessage":"blocked","index":0}],"responseId":"r1"}`)),
			kind: engine.ErrorOther, msg: "Provider finish_reason: SAFETY",
		},
		{
			name: "a blocked prompt",
			resp: chunks(geminitest.BlockedChunk("r1", "PROHIBITED_CONTENT")),
			kind: engine.ErrorOther, msg: "Prompt blocked: PROHIBITED_CONTENT",
		},
		{
			name: "an error inside the stream",
			resp: chunks(geminitest.Chunk("r1", "", nil, geminitest.TextPart("Hel")),
				json.RawMessage(`{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`)),
			kind: engine.ErrorOverloaded, msg: "500 INTERNAL: An internal error has occurred.", status: 500,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := stream(t, nil, tc.resp)
			var pe *engine.ProviderError
			if !errors.As(r.err, &pe) {
				t.Fatalf("err %v (%T); events %q", r.err, r.err, r.events)
			}
			if pe.Kind != tc.kind || !strings.Contains(pe.Message, tc.msg) || pe.RetryAfter != tc.after || pe.Status != tc.status {
				t.Errorf("got kind %v status %d message %q after %v\nwant kind %v status %d message %q after %v",
					pe.Kind, pe.Status, pe.Message, pe.RetryAfter, tc.kind, tc.status, tc.msg, tc.after)
			}
		})
	}
}

func TestStreamNoKey(t *testing.T) {
	t.Parallel()
	req := &engine.Request{Model: testModel("gemini-2.5-flash")}
	err := gemini.New(gemini.Options{}).Stream(context.Background(), req, func(engine.StreamEvent) error { return nil })
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorAuth || !errors.Is(err, gemini.ErrNoKey) {
		t.Fatalf("err %v", err)
	}
}

// Cancelling the context stops a stream that is waiting for more, with
// the context's error.
func TestStreamAbort(t *testing.T) {
	t.Parallel()
	srv := geminitest.New(geminitest.Script{Responses: []geminitest.Response{{
		Chunks: []json.RawMessage{geminitest.Chunk("r1", "", nil, geminitest.TextPart("Hel"))}, End: geminitest.EndStall}}})
	defer srv.Close()
	req := &engine.Request{Model: testModel("gemini-2.5-flash")}
	req.Model.BaseURL = srv.URL
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []string
	err := gemini.New(gemini.Options{APIKey: func(engine.Model) string { return testKey }}).Stream(ctx, req, func(ev engine.StreamEvent) error {
		events = append(events, render(ev))
		if ev.Kind == engine.StreamTextDelta {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, events %q", err, events)
	}
}

// The callback's error stops the stream and is returned as is.
func TestStreamCallbackError(t *testing.T) {
	t.Parallel()
	srv := geminitest.New(geminitest.Script{Responses: []geminitest.Response{chunks(
		geminitest.Chunk("r1", "", nil, geminitest.TextPart("a")), geminitest.Chunk("r1", "STOP", nil, geminitest.TextPart("b")))}})
	defer srv.Close()
	req := &engine.Request{Model: testModel("gemini-2.5-flash")}
	req.Model.BaseURL = srv.URL
	stop := errors.New("stop")
	err := gemini.New(gemini.Options{APIKey: func(engine.Model) string { return testKey }}).Stream(context.Background(), req, func(engine.StreamEvent) error {
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err %v", err)
	}
}

// streamTo runs one call of a "hi" prompt on m, as it is.
func streamTo(t *testing.T, m engine.Model) result {
	t.Helper()
	var r result
	req := &engine.Request{Model: m, Messages: []engine.Message{user("hi")}}
	r.err = gemini.New(gemini.Options{APIKey: func(engine.Model) string { return testKey }}).Stream(context.Background(), req, func(ev engine.StreamEvent) error {
		r.events = append(r.events, render(ev))
		return nil
	})
	return r
}
