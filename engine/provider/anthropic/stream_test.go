package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/anthropic"
	at "github.com/xcsh-go/xcsh/engine/provider/anthropic/anthropictest"
)

// testKey is the key every test sends; no error text may contain it.
const testKey = "sk-ant-api03-TESTKEY-must-never-leak"

func testModel(baseURL string) engine.Model {
	return engine.Model{
		ID: "claude-test", Name: "Claude Test", API: "anthropic-messages", Provider: "anthropic",
		BaseURL: baseURL, Reasoning: true, MaxTokens: 64000, ContextWindow: 200000,
	}
}

func newProvider(key string) *anthropic.Provider {
	return anthropic.New(anthropic.Options{APIKey: func(engine.Model) string { return key }})
}

func userRequest(m engine.Model, text string) *engine.Request {
	return &engine.Request{Model: m, Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}}}}
}

// shared serves every parallel test that goes through collect, so -race
// checks that one Provider serves concurrent calls.
var shared = newProvider(testKey)

// collect streams req against a server for script and returns the events
// in a compact text form, the error and the server (closed by cleanup).
func collect(t *testing.T, script at.Script, req func(baseURL string) *engine.Request) ([]string, error, *at.Server) {
	t.Helper()
	srv := at.New(script)
	t.Cleanup(srv.Close)
	var got []string
	err := shared.Stream(context.Background(), req(srv.URL), func(ev engine.StreamEvent) error {
		got = append(got, describe(ev))
		return nil
	})
	return got, err, srv
}

func describe(ev engine.StreamEvent) string {
	switch ev.Kind {
	case engine.StreamTextStart:
		return "text_start"
	case engine.StreamTextDelta:
		return "text_delta " + ev.Delta
	case engine.StreamTextEnd:
		return "text_end"
	case engine.StreamThinkingStart:
		return "thinking_start"
	case engine.StreamThinkingDelta:
		return "thinking_delta " + ev.Delta
	case engine.StreamThinkingEnd:
		return "thinking_end sig=" + ev.Signature
	case engine.StreamRedactedThinking:
		return "redacted " + ev.Delta
	case engine.StreamToolCallStart:
		return "tool_start " + ev.ToolCallID + " " + ev.ToolName
	case engine.StreamToolCallDelta:
		return "tool_delta " + ev.Delta
	case engine.StreamToolCallEnd:
		return "tool_end " + string(ev.Arguments)
	case engine.StreamUsage:
		u := ev.Usage
		return fmt.Sprintf("usage in=%d out=%d cr=%d cw=%d total=%d", u.Input, u.Output, u.CacheRead, u.CacheWrite, u.TotalTokens)
	case engine.StreamDone:
		return fmt.Sprintf("done %s %s", ev.StopReason, ev.ResponseID)
	}
	return fmt.Sprintf("kind %d", ev.Kind)
}

func stream(events ...at.Event) at.Script {
	return at.Script{Responses: []at.Response{{Events: events}}}
}

func TestStreamEvents(t *testing.T) {
	t.Parallel()
	start := at.MessageStart("msg_1", "claude-test", at.Usage{Input: 10, Output: 1})
	tests := []struct {
		name   string
		script at.Script
		want   []string
	}{
		{
			name:   "text",
			script: at.Script{Responses: []at.Response{at.TextResponse("msg_1", "Hello <world> & all")}},
			want: []string{
				"usage in=10 out=1 cr=0 cw=0 total=11",
				"text_start", "text_delta Hello <world> & all", "text_end",
				"usage in=10 out=5 cr=0 cw=0 total=15",
				"done stop msg_1",
			},
		},
		{
			name: "thinking with signature",
			script: stream(start,
				at.ThinkingStart(0), at.ThinkingDelta(0, "Let me "), at.ThinkingDelta(0, "think."),
				at.SignatureDelta(0, "EqQBCgIYAh"), at.SignatureDelta(0, "IkAxyz=="), at.BlockStop(0),
				at.TextStart(1), at.TextDelta(1, "42"), at.BlockStop(1),
				at.MessageDelta("end_turn", 30), at.MessageStop()),
			want: []string{
				"usage in=10 out=1 cr=0 cw=0 total=11",
				"thinking_start", "thinking_delta Let me ", "thinking_delta think.", "thinking_end sig=EqQBCgIYAhIkAxyz==",
				"text_start", "text_delta 42", "text_end",
				"usage in=10 out=30 cr=0 cw=0 total=40",
				"done stop msg_1",
			},
		},
		{
			name: "redacted thinking",
			script: stream(start,
				at.RedactedThinking(0, "EmwKAhgBEgy3va3pzix/LafPsn4a"), at.BlockStop(0),
				at.TextStart(1), at.TextDelta(1, "ok"), at.BlockStop(1),
				at.MessageDelta("end_turn", 7), at.MessageStop()),
			want: []string{
				"usage in=10 out=1 cr=0 cw=0 total=11",
				"redacted EmwKAhgBEgy3va3pzix/LafPsn4a",
				"text_start", "text_delta ok", "text_end",
				"usage in=10 out=7 cr=0 cw=0 total=17",
				"done stop msg_1",
			},
		},
		{
			name: "tool use with input_json_delta",
			script: stream(start,
				at.TextStart(0), at.TextDelta(0, "Reading."), at.BlockStop(0),
				at.ToolUseStart(1, "toolu_01A", "read"), at.InputJSONDelta(1, ""),
				at.InputJSONDelta(1, `{"path": `), at.Ping(), at.InputJSONDelta(1, `"a.go"}`), at.BlockStop(1),
				at.ToolUseStart(2, "toolu_01B", "ls"), at.BlockStop(2),
				at.MessageDelta("tool_use", 40), at.MessageStop()),
			want: []string{
				"usage in=10 out=1 cr=0 cw=0 total=11",
				"text_start", "text_delta Reading.", "text_end",
				"tool_start toolu_01A read", `tool_delta {"path": `, `tool_delta "a.go"}`, `tool_end {"path":"a.go"}`,
				"tool_start toolu_01B ls", "tool_end {}",
				"usage in=10 out=40 cr=0 cw=0 total=50",
				"done toolUse msg_1",
			},
		},
		{
			name: "usage with cache tokens, revised in message_delta",
			script: stream(
				at.MessageStart("msg_2", "claude-test", at.Usage{Input: 3, Output: 1, CacheRead: 1500, CacheWrite: 200}),
				at.TextStart(0), at.TextDelta(0, "hi"), at.BlockStop(0),
				at.Event{Data: []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":5,"cache_creation_input_tokens":200,"cache_read_input_tokens":1600,"output_tokens":12}}`)},
				at.MessageStop()),
			want: []string{
				"usage in=3 out=1 cr=1500 cw=200 total=1704",
				"text_start", "text_delta hi", "text_end",
				"usage in=5 out=12 cr=1600 cw=200 total=1817",
				"done stop msg_2",
			},
		},
		{
			name: "unknown blocks and events are skipped",
			script: stream(start,
				at.Event{Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`)},
				at.InputJSONDelta(0, `{"query":"x"}`), at.BlockStop(0),
				at.Event{Data: []byte(`{"type":"future_event","x":1}`)},
				at.TextStart(1), at.Event{Data: []byte(`{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"c","document_index":0,"document_title":null,"start_char_index":0,"end_char_index":1}}}`)},
				at.TextDelta(1, "cited"), at.BlockStop(1),
				at.MessageDelta("end_turn", 9), at.MessageStop()),
			want: []string{
				"usage in=10 out=1 cr=0 cw=0 total=11",
				"text_start", "text_delta cited", "text_end",
				"usage in=10 out=9 cr=0 cw=0 total=19",
				"done stop msg_1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err, _ := collect(t, tt.script, func(u string) *engine.Request { return userRequest(testModel(u), "hi") })
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if g, w := strings.Join(got, "\n"), strings.Join(tt.want, "\n"); g != w {
				t.Errorf("events:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason   string
		want     engine.StopReason
		wantKind engine.ErrorKind // when want is ""
	}{
		{"end_turn", engine.StopStop, 0},
		{"pause_turn", engine.StopStop, 0},
		{"stop_sequence", engine.StopStop, 0},
		{"max_tokens", engine.StopLength, 0},
		{"tool_use", engine.StopToolUse, 0},
		{"refusal", "", engine.ErrorOther},
		{"model_context_window_exceeded", "", engine.ErrorContextOverflow},
		{"something_new", "", engine.ErrorOther},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			script := stream(at.MessageStart("msg_s", "claude-test", at.Usage{Input: 1}),
				at.TextStart(0), at.TextDelta(0, "x"), at.BlockStop(0),
				at.MessageDelta(tt.reason, 2), at.MessageStop())
			got, err, _ := collect(t, script, func(u string) *engine.Request { return userRequest(testModel(u), "hi") })
			if tt.want != "" {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				if last, want := got[len(got)-1], "done "+string(tt.want)+" msg_s"; last != want {
					t.Errorf("last event %q, want %q", last, want)
				}
				return
			}
			var pe *engine.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *engine.ProviderError", err)
			}
			if pe.Kind != tt.wantKind || !strings.Contains(pe.Message, tt.reason) {
				t.Errorf("got kind %v message %q, want kind %v naming %q", pe.Kind, pe.Message, tt.wantKind, tt.reason)
			}
			for _, ev := range got {
				if strings.HasPrefix(ev, "done") {
					t.Errorf("StreamDone sent before the error: %v", got)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	start := at.MessageStart("msg_e", "claude-test", at.Usage{Input: 1})
	tests := []struct {
		name       string
		resp       at.Response
		kind       engine.ErrorKind
		status     int
		retryAfter time.Duration
		message    string // the exact message, or a part of it after "~"
	}{
		{
			name:    "401",
			resp:    at.ErrorResponse(401, "authentication_error", "invalid x-api-key", nil),
			kind:    engine.ErrorAuth,
			status:  401,
			message: `401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
		},
		{
			name:    "403",
			resp:    at.ErrorResponse(403, "permission_error", "Your API key does not have permission", nil),
			kind:    engine.ErrorAuth,
			status:  403,
			message: "~403 {",
		},
		{
			name:       "429 with retry-after",
			resp:       at.ErrorResponse(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"Retry-After": "7", "anthropic-ratelimit-tokens-reset": "2026-12-03T14:00:07Z"}),
			kind:       engine.ErrorRateLimit,
			status:     429,
			retryAfter: 7 * time.Second,
			message:    `429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
		},
		{
			name:       "429 with retry-after-ms",
			resp:       at.ErrorResponse(429, "rate_limit_error", "slow down", map[string]string{"retry-after-ms": "1500", "retry-after": "2"}),
			kind:       engine.ErrorRateLimit,
			status:     429,
			retryAfter: 1500 * time.Millisecond,
			message:    "~slow down",
		},
		{
			name:    "500",
			resp:    at.ErrorResponse(500, "api_error", "Internal server error", nil),
			kind:    engine.ErrorOverloaded,
			status:  500,
			message: `500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
		},
		{
			name:    "529 overloaded",
			resp:    at.ErrorResponse(529, "overloaded_error", "Overloaded", nil),
			kind:    engine.ErrorOverloaded,
			status:  529,
			message: `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		},
		{
			name:    "502 without a JSON body",
			resp:    at.Response{Status: 502, Body: []byte(`"<html>bad gateway</html>"`)},
			kind:    engine.ErrorOverloaded,
			status:  502,
			message: `~502 `,
		},
		{
			name:    "200 with a proxy's page",
			resp:    at.Response{RawBody: "<!DOCTYPE html>\n<html><head><title>Access denied | Corp Proxy</title></head><body>blocked</body></html>"},
			kind:    engine.ErrorProtocol,
			status:  200,
			message: `the server answered 200 with text/html instead of an event stream: "<title>Access denied | Corp Proxy</title>"`,
		},
		{
			name:    "200 with JSON, not a stream",
			resp:    at.Response{RawBody: `{"id":"msg_1","type":"message"}`, Headers: map[string]string{"content-type": "application/json"}},
			kind:    engine.ErrorProtocol,
			status:  200,
			message: `the server answered 200 with application/json instead of an event stream: "{\"id\":\"msg_1\",\"type\":\"message\"}"`,
		},
		{
			name:    "line over the decoder's cap",
			resp:    at.Response{Events: []at.Event{start, {Raw: "event: content_block_delta\ndata: " + strings.Repeat("y", 33<<20) + "\n\n"}}},
			kind:    engine.ErrorProtocol,
			status:  200,
			message: `the server sent a line over 32 MiB in its event stream, starting "data: ` + strings.Repeat("y", 74) + `…"`,
		},
		{
			name:    "prompt too long",
			resp:    at.ErrorResponse(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum", nil),
			kind:    engine.ErrorContextOverflow,
			status:  400,
			message: "~prompt is too long",
		},
		{
			name:    "other 400",
			resp:    at.ErrorResponse(400, "invalid_request_error", "messages: roles must alternate", nil),
			kind:    engine.ErrorOther,
			status:  400,
			message: "~roles must alternate",
		},
		{
			name:    "error event mid-stream",
			resp:    at.Response{Events: []at.Event{start, at.TextStart(0), at.TextDelta(0, "par"), at.ErrorEvent("overloaded_error", "Overloaded")}},
			kind:    engine.ErrorOverloaded,
			message: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		},
		{
			name:    "connection cut",
			resp:    at.Response{Events: []at.Event{start, at.TextStart(0), at.TextDelta(0, "par")}, End: at.EndCut},
			kind:    engine.ErrorTransport,
			message: "~Connection error: ",
		},
		{
			name:    "ends before message_stop",
			resp:    at.Response{Events: []at.Event{start, at.TextStart(0), at.TextDelta(0, "par"), at.BlockStop(0), at.MessageDelta("end_turn", 3)}},
			kind:    engine.ErrorTransport,
			message: "Connection error: the stream ended before message_stop",
		},
		{
			name:    "malformed event",
			resp:    at.Response{Events: []at.Event{start, at.TextStart(0), {Raw: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n"}, at.MessageStop()}},
			kind:    engine.ErrorOther,
			message: "~Malformed stream event",
		},
		{
			name:    "the key echoed by a gateway is scrubbed",
			resp:    at.ErrorResponse(401, "authentication_error", "bad key "+testKey, nil),
			kind:    engine.ErrorAuth,
			status:  401,
			message: "~bad key [redacted]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err, _ := collect(t, at.Script{Responses: []at.Response{tt.resp}}, func(u string) *engine.Request { return userRequest(testModel(u), "hi") })
			checkError(t, err, tt.kind, tt.status, tt.retryAfter, tt.message)
		})
	}
}

func checkError(t *testing.T, err error, kind engine.ErrorKind, status int, retryAfter time.Duration, message string) {
	t.Helper()
	var pe *engine.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want a *engine.ProviderError", err, err)
	}
	t.Logf("message: %s", pe.Message)
	if pe.Kind != kind || pe.Status != status || pe.RetryAfter != retryAfter {
		t.Errorf("kind %v status %d retryAfter %v, want %v %d %v", pe.Kind, pe.Status, pe.RetryAfter, kind, status, retryAfter)
	}
	if part, ok := strings.CutPrefix(message, "~"); ok {
		if !strings.Contains(pe.Message, part) {
			t.Errorf("message %q does not contain %q", pe.Message, part)
		}
	} else if pe.Message != message {
		t.Errorf("message %q, want %q", pe.Message, message)
	}
	if pe.Err == nil {
		t.Errorf("Err is nil, want the SDK's error")
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v", err), testKey) {
		t.Errorf("the key appears in the error text: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := at.New(at.Script{})
	url := srv.URL
	srv.Close()
	err := newProvider(testKey).Stream(context.Background(), userRequest(testModel(url), "hi"), func(engine.StreamEvent) error { return nil })
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorTransport || !strings.HasPrefix(pe.Message, "Connection error: ") {
		t.Fatalf("err = %#v, want a transport ProviderError", err)
	}
	if strings.Contains(pe.Message, testKey) {
		t.Errorf("the key appears in %q", pe.Message)
	}
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	srv := at.New(at.Script{})
	t.Cleanup(srv.Close)
	err := newProvider("").Stream(context.Background(), userRequest(testModel(srv.URL), "hi"), func(engine.StreamEvent) error { return nil })
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorAuth {
		t.Fatalf("err = %v, want an auth ProviderError", err)
	}
	if !errors.Is(err, anthropic.ErrNoAPIKey) {
		t.Errorf("err = %v, want ErrNoAPIKey", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key", n)
	}
}

// TestStallCancelled: a stream that goes silent ends as soon as ctx is
// cancelled, with ctx's error and no ProviderError.
func TestStallCancelled(t *testing.T) {
	t.Parallel()
	script := at.Script{Responses: []at.Response{{
		Events: []at.Event{at.MessageStart("msg_x", "claude-test", at.Usage{Input: 1}), at.TextStart(0), at.TextDelta(0, "waiting")},
		End:    at.EndStall,
	}}}
	srv := at.New(script)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := newProvider(testKey).Stream(ctx, userRequest(testModel(srv.URL), "hi"), func(ev engine.StreamEvent) error {
		if ev.Kind == engine.StreamTextDelta {
			// The server now holds the stream open forever.
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var pe *engine.ProviderError
	if errors.As(err, &pe) {
		t.Errorf("a cancelled call returned a ProviderError: %v", pe)
	}
}

// TestCallbackError: an error from fn stops the stream and comes back as is.
func TestCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("consumer stopped")
	srv := at.New(at.Script{Responses: []at.Response{at.TextResponse("msg_c", "hello")}})
	t.Cleanup(srv.Close)
	var n int
	err := newProvider(testKey).Stream(context.Background(), userRequest(testModel(srv.URL), "hi"), func(ev engine.StreamEvent) error {
		n++
		if ev.Kind == engine.StreamTextStart {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("err = %v, want the callback's error unchanged", err)
	}
	if n != 2 {
		t.Errorf("fn called %d times, want 2 (usage, text_start)", n)
	}
}

func TestScriptExhausted(t *testing.T) {
	t.Parallel()
	srv := at.New(at.Script{})
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("status %d, want 500 for a request past the script", resp.StatusCode)
	}
}

// TestHeaderSecretScrubbed: a credential configured as a model header is
// scrubbed like the key when a gateway echoes it.
func TestHeaderSecretScrubbed(t *testing.T) {
	t.Parallel()
	const secret = "gw-secret-0123456789"
	resp := at.ErrorResponse(403, "permission_error", "token "+secret+" or Bearer "+secret+" revoked", nil)
	_, err, _ := collect(t, at.Script{Responses: []at.Response{resp}}, func(u string) *engine.Request {
		m := testModel(u)
		m.Headers = map[string]string{"X-Gateway-Auth": "Bearer " + secret, "X-Region": "eu"}
		return userRequest(m, "hi")
	})
	checkError(t, err, engine.ErrorAuth, 403, 0, "~token [redacted] or [redacted] revoked")
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the header secret appears in %q", err)
	}
}

// TestRetryAfterDate: an HTTP-date retry-after is passed on as RetryAt, for
// the engine to measure on its own clock.
func TestRetryAfterDate(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 1, 1, 0, 1, 30, 0, time.UTC)
	resp := at.ErrorResponse(429, "rate_limit_error", "slow down", map[string]string{"Retry-After": date.Format(http.TimeFormat)})
	_, err, _ := collect(t, at.Script{Responses: []at.Response{resp}}, func(u string) *engine.Request { return userRequest(testModel(u), "hi") })
	checkError(t, err, engine.ErrorRateLimit, 429, 0, "~slow down")
	var pe *engine.ProviderError
	if errors.As(err, &pe) && !pe.RetryAt.Equal(date) {
		t.Errorf("RetryAt = %v, want %v", pe.RetryAt, date)
	}
}
