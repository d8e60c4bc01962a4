package ollama_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
	"github.com/xcsh-go/xcsh/engine/provider/ollama/ollamatest"
)

// trace renders events one per line, so expectations read like the stream.
func trace(evs []engine.StreamEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case engine.StreamTextStart:
			b.WriteString("text_start\n")
		case engine.StreamTextDelta:
			fmt.Fprintf(&b, "text %q\n", ev.Delta)
		case engine.StreamTextEnd:
			b.WriteString("text_end\n")
		case engine.StreamThinkingStart:
			b.WriteString("thinking_start\n")
		case engine.StreamThinkingDelta:
			fmt.Fprintf(&b, "thinking %q\n", ev.Delta)
		case engine.StreamThinkingEnd:
			b.WriteString("thinking_end\n")
		case engine.StreamToolCallStart:
			fmt.Fprintf(&b, "call_start %s %s\n", ev.ToolCallID, ev.ToolName)
		case engine.StreamToolCallDelta:
			fmt.Fprintf(&b, "call_delta %s\n", ev.Delta)
		case engine.StreamToolCallEnd:
			fmt.Fprintf(&b, "call_end %s\n", ev.Arguments)
		case engine.StreamUsage:
			u := ev.Usage
			fmt.Fprintf(&b, "usage in=%d out=%d total=%d\n", u.Input, u.Output, u.TotalTokens)
		case engine.StreamDone:
			fmt.Fprintf(&b, "done %s\n", ev.StopReason)
		default:
			fmt.Fprintf(&b, "kind %d\n", ev.Kind)
		}
	}
	return b.String()
}

func testModel(url string) engine.Model {
	return engine.Model{ID: "qwen3:8b", API: "ollama", Provider: "ollama", BaseURL: url, ContextWindow: 40960, MaxTokens: 8192, Reasoning: true}
}

func userText(s string) engine.Message {
	return &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(s)}}
}

// run streams one call against a server replaying replies.
func run(t *testing.T, replies ...ollamatest.Reply) (string, error, *ollamatest.Server) {
	t.Helper()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: replies})
	t.Cleanup(srv.Close)
	req := &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")}}
	evs, err := stream(t.Context(), req)
	return trace(evs), err, srv
}

func stream(ctx context.Context, req *engine.Request) ([]engine.StreamEvent, error) {
	var evs []engine.StreamEvent
	err := ollama.New(ollama.Options{}).Stream(ctx, req, func(ev engine.StreamEvent) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}

func lines(ls ...ollamatest.Line) ollamatest.Reply { return ollamatest.Reply{Lines: ls} }

func TestStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply ollamatest.Reply
		want  string
	}{
		{
			name:  "text",
			reply: lines(ollamatest.Text("Hel"), ollamatest.Text("lo"), ollamatest.Done("stop", 26, 2)),
			want:  "text_start\ntext \"Hel\"\ntext \"lo\"\ntext_end\nusage in=26 out=2 total=28\ndone stop\n",
		},
		{
			name: "thinking then text",
			reply: lines(ollamatest.Thinking("Let me"), ollamatest.Thinking(" see."), ollamatest.Text("Yes."),
				ollamatest.Done("stop", 10, 5)),
			want: "thinking_start\nthinking \"Let me\"\nthinking \" see.\"\nthinking_end\n" +
				"text_start\ntext \"Yes.\"\ntext_end\nusage in=10 out=5 total=15\ndone stop\n",
		},
		{
			name: "thinking and content in one chunk, then thinking again",
			reply: lines(
				ollamatest.Chunk(api.ChatResponse{Message: api.Message{Role: "assistant", Thinking: "a", Content: "b"}}),
				ollamatest.Thinking("c"), ollamatest.Done("stop", 1, 3)),
			want: "thinking_start\nthinking \"a\"\nthinking_end\ntext_start\ntext \"b\"\ntext_end\n" +
				"thinking_start\nthinking \"c\"\nthinking_end\nusage in=1 out=3 total=4\ndone stop\n",
		},
		{
			name:  "length",
			reply: lines(ollamatest.Text("abc"), ollamatest.Done("length", 7, 8192)),
			want:  "text_start\ntext \"abc\"\ntext_end\nusage in=7 out=8192 total=8199\ndone length\n",
		},
		{
			name:  "empty answer",
			reply: lines(ollamatest.Done("stop", 3, 0)),
			want:  "usage in=3 out=0 total=3\ndone stop\n",
		},
		{
			name:  "unknown done reason is stop",
			reply: lines(ollamatest.Text("x"), ollamatest.Done("unload", 1, 1)),
			want:  "text_start\ntext \"x\"\ntext_end\nusage in=1 out=1 total=2\ndone stop\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err, _ := run(t, tt.reply)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got != tt.want {
				t.Errorf("events:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestStreamToolCalls(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(
		ollamatest.Text("Reading."),
		ollamatest.ToolCall("", "read", `{ "path": "a<b>&c.go", "limit": 10, "opts": {"z": 1, "a": [true, null]} }`),
		ollamatest.ToolCall("call_srv7", "bash", `{"command":"ls"}`),
		ollamatest.ToolCall("", "todo_write", `{}`),
		ollamatest.Done("stop", 100, 20),
	)}})
	t.Cleanup(srv.Close)
	// Two tool calls in the history: the minted ids continue at call_2.
	history := &engine.AssistantMessage{Content: []engine.ContentBlock{
		{Type: engine.BlockToolCall, ID: "call_0", Name: "ls", Arguments: []byte(`{}`)},
		{Type: engine.BlockToolCall, ID: "call_1", Name: "ls", Arguments: []byte(`{}`)},
	}}
	req := &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi"), history}}
	evs, err := stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `text_start
text "Reading."
text_end
call_start call_2 read
call_delta {"path":"a<b>&c.go","limit":10,"opts":{"a":[true,null],"z":1}}
call_end {"path":"a<b>&c.go","limit":10,"opts":{"a":[true,null],"z":1}}
call_start call_srv7 bash
call_delta {"command":"ls"}
call_end {"command":"ls"}
call_start call_4 todo_write
call_delta {}
call_end {}
usage in=100 out=20 total=120
done toolUse
`
	if got := trace(evs); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

func TestStreamRequestOptions(t *testing.T) {
	t.Parallel()
	plain := engine.Model{ID: "llama3.2", ContextWindow: 131072, MaxTokens: 8192}
	reasoning := engine.Model{ID: "qwen3:8b", ContextWindow: 40960, MaxTokens: 8192, Reasoning: true}
	gptoss := engine.Model{ID: "gpt-oss:20b", ContextWindow: 131072, MaxTokens: 8192, Reasoning: true}
	renamed := engine.Model{ID: "mybot", Reasoning: true, Compat: json.RawMessage(`{"thinkLevels":true}`)}
	noLevels := engine.Model{ID: "gpt-oss-lookalike", Reasoning: true, Compat: json.RawMessage(`{"thinkLevels":false}`)}
	tests := []struct {
		name      string
		model     engine.Model
		level     engine.ThinkingLevel
		wantThink string // the think field as sent; "" when absent
		wantOpts  string
	}{
		{"plain model, level high", plain, engine.ThinkingHigh, "", `{"num_ctx":131072,"num_predict":8192}`},
		{"plain model, unset", plain, "", "", `{"num_ctx":131072,"num_predict":8192}`},
		{"reasoning, unset", reasoning, "", "false", `{"num_ctx":40960,"num_predict":8192}`},
		{"reasoning, off", reasoning, engine.ThinkingOff, "false", `{"num_ctx":40960,"num_predict":8192}`},
		{"reasoning, high", reasoning, engine.ThinkingHigh, "true", `{"num_ctx":40960,"num_predict":8192}`},
		{"reasoning, minimal", reasoning, engine.ThinkingMinimal, "true", `{"num_ctx":40960,"num_predict":8192}`},
		{"gpt-oss, off", gptoss, engine.ThinkingOff, "false", `{"num_ctx":131072,"num_predict":8192}`},
		{"gpt-oss, minimal", gptoss, engine.ThinkingMinimal, `"low"`, `{"num_ctx":131072,"num_predict":8192}`},
		{"gpt-oss, medium", gptoss, engine.ThinkingMedium, `"medium"`, `{"num_ctx":131072,"num_predict":8192}`},
		{"gpt-oss, xhigh", gptoss, engine.ThinkingXHigh, `"high"`, `{"num_ctx":131072,"num_predict":8192}`},
		{"compat thinkLevels, low", renamed, engine.ThinkingLow, `"low"`, `{}`},
		{"compat no levels", noLevels, engine.ThinkingLow, "true", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Done("stop", 1, 1))}})
			t.Cleanup(srv.Close)
			m := tt.model
			m.BaseURL = srv.URL
			if _, err := stream(t.Context(), &engine.Request{Model: m, ThinkingLevel: tt.level, Messages: []engine.Message{userText("hi")}}); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Model   string          `json:"model"`
				Stream  *bool           `json:"stream"`
				Think   json.RawMessage `json:"think"`
				Options json.RawMessage `json:"options"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Model != m.ID || body.Stream == nil || !*body.Stream {
				t.Errorf("model %q stream %v, want %q and true", body.Model, body.Stream, m.ID)
			}
			if string(body.Think) != tt.wantThink {
				t.Errorf("think = %s, want %s", body.Think, tt.wantThink)
			}
			if string(body.Options) != tt.wantOpts {
				t.Errorf("options = %s, want %s", body.Options, tt.wantOpts)
			}
		})
	}
}

func TestStreamMessages(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Done("stop", 1, 1))}})
	t.Cleanup(srv.Close)
	png := []byte("\x89PNG\r\n\x1a\nfake")
	req := &engine.Request{
		Model:        testModel(srv.URL),
		SystemPrompt: "You are terse.",
		Messages: []engine.Message{
			&engine.UserMessage{Content: []engine.ContentBlock{
				engine.TextBlock("What is this?"),
				{Type: engine.BlockImage, MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(png)},
			}},
			&engine.AssistantMessage{Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: "An image."},
				engine.TextBlock("Let me look."),
				{Type: engine.BlockToolCall, ID: "call_0", Name: "read", Arguments: []byte(`{"path":"x.png","limit":2}`)},
			}},
			&engine.ToolResultMessage{ToolCallID: "call_0", ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock("binary")}},
			&engine.DeveloperMessage{Content: []engine.ContentBlock{engine.TextBlock("Be brief.")}},
			&engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock("A PNG.")}},
			&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("Thanks"), engine.TextBlock("Bye")}},
		},
	}
	if _, err := stream(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	got := srv.ChatRequests()[0].Messages
	type msg struct {
		Role, Content, Thinking, ToolName, ToolCallID string
		Images                                        int
		Calls                                         string
	}
	var have []msg
	for _, m := range got {
		var calls []string
		for _, c := range m.ToolCalls {
			calls = append(calls, fmt.Sprintf("%s %s %s", c.ID, c.Function.Name, c.Function.Arguments.String()))
		}
		have = append(have, msg{m.Role, m.Content, m.Thinking, m.ToolName, m.ToolCallID, len(m.Images), strings.Join(calls, ";")})
	}
	want := []msg{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "What is this?", Images: 1},
		{Role: "assistant", Content: "Let me look.", Thinking: "An image.", Calls: `call_0 read {"path":"x.png","limit":2}`},
		{Role: "tool", Content: "binary", ToolName: "read", ToolCallID: "call_0"},
		{Role: "user", Content: "Be brief."},
		{Role: "assistant", Content: "A PNG."},
		{Role: "user", Content: "Thanks\nBye"},
	}
	if !slices.Equal(have, want) {
		t.Errorf("messages:\n%+v\nwant:\n%+v", have, want)
	}
	if !bytes.Equal(got[1].Images[0], png) {
		t.Errorf("image bytes = %q, want %q", got[1].Images[0], png)
	}
}

func TestStreamTools(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Done("stop", 1, 1))}})
	t.Cleanup(srv.Close)
	req := &engine.Request{
		Model:    testModel(srv.URL),
		Messages: []engine.Message{userText("hi")},
		Tools: []engine.ToolSpec{
			{Name: "read", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string","description":"File path"},"limit":{"type":"integer","minimum":1},"mode":{"type":["string","null"],"enum":["a","b"]}},"required":["path"],"additionalProperties":false}`)},
			{Name: "noargs", Description: "No arguments."},
		},
	}
	if _, err := stream(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	// minimum and additionalProperties have no field in Ollama's types: its
	// server would drop them too.
	want := `[{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"File path"},"limit":{"type":"integer"},"mode":{"type":["string","null"],"enum":["a","b"]}}}}},` +
		`{"type":"function","function":{"name":"noargs","description":"No arguments.","parameters":{"type":"object","properties":{}}}}]`
	if string(body.Tools) != want {
		t.Errorf("tools:\n%s\nwant:\n%s", body.Tools, want)
	}
}

func TestStreamBaseURL(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Done("stop", 1, 1))}})
	t.Cleanup(srv.Close)
	// Discovered models of the original carry the OpenAI-compatible /v1.
	m := testModel(srv.URL + "/v1/")
	if _, err := stream(t.Context(), &engine.Request{Model: m, Messages: []engine.Message{userText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[0]; r.Path != "/api/chat" || r.Method != http.MethodPost {
		t.Errorf("request %s %s, want POST /api/chat", r.Method, r.Path)
	}
}

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      ollamatest.Reply
		wantEvents string
		kind       engine.ErrorKind
		status     int
		msg        string
		is         error
	}{
		{
			name:   "model not found",
			reply:  ollamatest.Reply{Status: 404, Error: `model "qwen3:8b" not found, try pulling it first`},
			kind:   engine.ErrorOther,
			status: 404,
			msg:    `model "qwen3:8b" not found; run: ollama pull qwen3:8b`,
		},
		{
			name:   "server busy",
			reply:  ollamatest.Reply{Status: 503, Error: "server busy, please try again.  maximum pending requests exceeded"},
			kind:   engine.ErrorOverloaded,
			status: 503,
			msg:    "503 server busy, please try again.  maximum pending requests exceeded",
		},
		{
			name:   "internal error",
			reply:  ollamatest.Reply{Status: 500, Error: "llama runner process has terminated: exit status 2"},
			kind:   engine.ErrorOverloaded,
			status: 500,
			msg:    "500 llama runner process has terminated: exit status 2",
		},
		{
			name:   "proxy page",
			reply:  ollamatest.Reply{Status: 502, Body: "<html>Bad Gateway</html>"},
			kind:   engine.ErrorOverloaded,
			status: 502,
			msg:    "502 <html>Bad Gateway</html>",
		},
		{
			name:   "200 with a proxy's page",
			reply:  ollamatest.Reply{Body: "<html><head><title>Proxy login</title></head><body>sign in</body></html>"},
			kind:   engine.ErrorProtocol,
			status: 200,
			msg:    `the server answered 200 with text/html instead of an NDJSON stream: "<title>Proxy login</title>"`,
			is:     provider.ErrNotAStream,
		},
		{
			name:       "line over the client's cap",
			reply:      lines(ollamatest.Text("Par"), ollamatest.Raw(`{"model":"`+strings.Repeat("z", 8_100_000))),
			wantEvents: "text_start\ntext \"Par\"\n",
			kind:       engine.ErrorProtocol,
			status:     200,
			msg:        `the server sent a line over 8 MB in its NDJSON stream, starting "{\"model\":\"` + strings.Repeat("z", 70) + `…"`,
		},
		{
			name:   "rate limited",
			reply:  ollamatest.Reply{Status: 429, Error: "too many requests"},
			kind:   engine.ErrorRateLimit,
			status: 429,
			msg:    "429 too many requests",
		},
		{
			name:   "forbidden",
			reply:  ollamatest.Reply{Status: 403, Error: "forbidden"},
			kind:   engine.ErrorAuth,
			status: 403,
			msg:    "403 forbidden",
		},
		{
			name:   "unauthorized",
			reply:  ollamatest.Reply{Status: 401, Error: "unauthorized"},
			kind:   engine.ErrorAuth,
			status: 401,
			msg:    "ollama: 401 Unauthorized (sign in with: ollama signin)",
		},
		{
			name:   "does not support thinking",
			reply:  ollamatest.Reply{Status: 400, Error: `"qwen3:8b" does not support thinking`},
			kind:   engine.ErrorOther,
			status: 400,
			msg:    `400 "qwen3:8b" does not support thinking`,
		},
		{
			name:   "context overflow",
			reply:  ollamatest.Reply{Status: 500, Error: "input exceeds maximum context length and cannot be truncated further"},
			kind:   engine.ErrorContextOverflow,
			status: 500,
			msg:    "500 input exceeds maximum context length and cannot be truncated further",
		},
		{
			name:       "error line mid-stream",
			reply:      lines(ollamatest.Text("Par"), ollamatest.ErrorLine("model runner has unexpectedly stopped, this may be due to resource limitations")),
			wantEvents: "text_start\ntext \"Par\"\n",
			kind:       engine.ErrorOther,
			msg:        "ollama: model runner has unexpectedly stopped, this may be due to resource limitations",
		},
		{
			name:  "overflow line mid-stream",
			reply: lines(ollamatest.ErrorLine("the input length exceeds the context length")),
			kind:  engine.ErrorContextOverflow,
			msg:   "ollama: the input length exceeds the context length",
		},
		{
			name:       "cut connection",
			reply:      ollamatest.Reply{Lines: []ollamatest.Line{ollamatest.Text("Par")}, End: ollamatest.EndCut},
			wantEvents: "text_start\ntext \"Par\"\n",
			kind:       engine.ErrorTransport,
			msg:        "ollama: stream ended before the response was done",
			is:         ollama.ErrIncomplete,
		},
		{
			name:  "closed without done",
			reply: lines(ollamatest.Text("Par")),
			kind:  engine.ErrorTransport,
			msg:   "ollama: stream ended before the response was done",
			is:    ollama.ErrIncomplete,
			// The text block stays open: the engine closes a failed message.
			wantEvents: "text_start\ntext \"Par\"\n",
		},
		{
			name:  "line with wrong types",
			reply: lines(ollamatest.Raw(`{"model":"qwen3:8b","message":"oops","done":false}`)),
			kind:  engine.ErrorTransport,
			msg:   `ollama: malformed stream line: "message" is a JSON string`,
		},
		{
			// The api client reports a line that is not JSON with the line as
			// its error text, as it reports an error line.
			name:  "line that is not JSON",
			reply: lines(ollamatest.Raw(`{"model":"qwen3`)),
			kind:  engine.ErrorOther,
			msg:   `ollama: {"model":"qwen3`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err, _ := run(t, tt.reply)
			if got != tt.wantEvents {
				t.Errorf("events:\n%s\nwant:\n%s", got, tt.wantEvents)
			}
			var pe *engine.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %#v, want a *engine.ProviderError", err)
			}
			if pe.Kind != tt.kind || pe.Status != tt.status || pe.Message != tt.msg {
				t.Errorf("got kind %v status %d message %q\nwant kind %v status %d message %q", pe.Kind, pe.Status, pe.Message, tt.kind, tt.status, tt.msg)
			}
			if pe.Err == nil && pe.Kind != engine.ErrorProtocol {
				t.Error("Err is nil, want the cause")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}

// TestStreamRetryAfter: the api client's StatusError has no headers, so
// the call's transport keeps them and Retry-After reaches the engine.
func TestStreamRetryAfter(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 1, 1, 0, 1, 30, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		after   time.Duration
		at      time.Time
	}{
		{"seconds", map[string]string{"Retry-After": "30"}, 30 * time.Second, time.Time{}},
		{"fraction", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, time.Time{}},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, time.Time{}},
		{"date", map[string]string{"Retry-After": date.Format(http.TimeFormat)}, 0, date},
		{"none", nil, 0, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err, _ := run(t, ollamatest.Reply{Status: 429, Headers: tt.headers, Error: "too many requests"})
			var pe *engine.ProviderError
			if !errors.As(err, &pe) || pe.Kind != engine.ErrorRateLimit {
				t.Fatalf("err = %v, want a rate limit", err)
			}
			if pe.RetryAfter != tt.after || !pe.RetryAt.Equal(tt.at) {
				t.Errorf("RetryAfter, RetryAt = %v, %v; want %v, %v", pe.RetryAfter, pe.RetryAt, tt.after, tt.at)
			}
		})
	}
}

func TestStreamStatusErrorReachable(t *testing.T) {
	t.Parallel()
	_, err, _ := run(t, ollamatest.Reply{Status: 503, Error: "busy"})
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("errors.As(%v, api.StatusError) = %v (%+v)", err, errors.As(err, &se), se)
	}
}

func TestStreamUnreachable(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close() // nothing listens on the port now
	_, err := stream(t.Context(), &engine.Request{Model: testModel(url), Messages: []engine.Message{userText("hi")}})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *engine.ProviderError", err)
	}
	want := fmt.Sprintf(`could not reach Ollama at %s: connection refused, nothing listens there. Start Ollama ("ollama serve", or the Ollama app), or set OLLAMA_HOST to the address it listens on`, url)
	if pe.Kind != engine.ErrorNoServer || pe.Message != want {
		t.Errorf("kind %v message %q, want no_server %q", pe.Kind, pe.Message, want)
	}
	if pe.Err == nil || !strings.Contains(pe.Err.Error(), "connection refused") {
		t.Errorf("Err = %v, want the dial error", pe.Err)
	}
}

func TestStreamCancel(t *testing.T) {
	t.Parallel()
	t.Run("stall after a delta", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{{Lines: []ollamatest.Line{ollamatest.Text("Par")}, End: ollamatest.EndStall}}})
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var evs []engine.StreamEvent
		done := make(chan error, 1)
		go func() {
			done <- ollama.New(ollama.Options{}).Stream(ctx, &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")}}, func(ev engine.StreamEvent) error {
				evs = append(evs, ev)
				if ev.Kind == engine.StreamTextDelta {
					// The server now stalls; the abort must end the call.
					cancel()
				}
				return nil
			})
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Stream did not return after cancel")
		}
		if got, want := trace(evs), "text_start\ntext \"Par\"\n"; got != want {
			t.Errorf("events:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("stall before headers", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{{End: ollamatest.EndStall}}})
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := stream(ctx, &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")}})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.NewServer(ollamatest.Script{})
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := stream(ctx, &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
}

func TestStreamCallbackError(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Text("a"), ollamatest.Text("b"), ollamatest.Done("stop", 1, 1))}})
	t.Cleanup(srv.Close)
	stop := errors.New("consumer gone")
	n := 0
	err := ollama.New(ollama.Options{}).Stream(t.Context(), &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")}}, func(ev engine.StreamEvent) error {
		n++
		if ev.Kind == engine.StreamTextDelta {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("err = %v, want the callback's error unchanged", err)
	}
	if n != 2 {
		t.Errorf("%d events delivered, want 2 (start, first delta)", n)
	}
}

func TestStreamBadRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  engine.Message
		want string
	}{
		{"image not base64", &engine.UserMessage{Content: []engine.ContentBlock{{Type: engine.BlockImage, MimeType: "image/png", Data: "%%%"}}},
			"ollama: image block (image/png): illegal base64 data at input byte 0"},
		{"tool call arguments not an object", &engine.AssistantMessage{Content: []engine.ContentBlock{{Type: engine.BlockToolCall, ID: "c1", Name: "ls", Arguments: []byte(`[1]`)}}},
			"ollama: tool call c1 (ls) arguments: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.NewServer(ollamatest.Script{})
			t.Cleanup(srv.Close)
			_, err := stream(t.Context(), &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{tt.msg}})
			var pe *engine.ProviderError
			if !errors.As(err, &pe) || pe.Kind != engine.ErrorOther || !strings.HasPrefix(pe.Message, tt.want) {
				t.Errorf("err = %v, want kind other with message %q...", err, tt.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// A model that cannot take tools (discovery marks it "tools": false) is
// asked without them, and the engine is told why first (a notice).
func TestStreamModelWithoutTools(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Done("stop", 1, 1))}})
	t.Cleanup(srv.Close)
	m := testModel(srv.URL)
	m.Compat = json.RawMessage(`{"tools":false}`)
	req := &engine.Request{Model: m, Messages: []engine.Message{userText("hi")},
		Tools: []engine.ToolSpec{{Name: "read", Description: "Read a file."}}}
	evs, err := stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].Kind != engine.StreamNotice || !strings.Contains(evs[0].Delta, "cannot call tools") {
		t.Fatalf("events %+v", evs)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["tools"]; ok {
		t.Fatalf("tools sent: %s", srv.Requests()[0].Body)
	}
}

// A model discovery did not describe is offered tools; the server's 400
// "... does not support tools" makes the adapter ask again at once without
// them, with the notice in between, and later calls to that model leave
// them out from the start. Another 400 is not asked again.
func TestStreamToolsRefused(t *testing.T) {
	t.Parallel()
	refusal := ollamatest.Reply{Status: 400, Error: "registry.ollama.ai/library/tiny:latest does not support tools"}
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{
		refusal,
		lines(ollamatest.Text("Hello"), ollamatest.Done("stop", 10, 1)),
		lines(ollamatest.Text("Again"), ollamatest.Done("stop", 12, 1)),
		{Status: 400, Error: "invalid options: num_ctx"},
	}})
	t.Cleanup(srv.Close)
	p := ollama.New(ollama.Options{})
	req := &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")},
		Tools: []engine.ToolSpec{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	call := func() ([]engine.StreamEvent, error) {
		var evs []engine.StreamEvent
		err := p.Stream(t.Context(), req, func(ev engine.StreamEvent) error {
			evs = append(evs, ev)
			return nil
		})
		return evs, err
	}
	evs, err := call()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].Kind != engine.StreamNotice || evs[0].Delta != "ollama/"+req.Model.ID+" cannot call tools (its template has none): it is asked without them, so it can only answer in text" {
		t.Fatalf("first event %+v, want the notice", evs)
	}
	if got := trace(evs[1:]); !strings.Contains(got, `text "Hello"`) || !strings.HasSuffix(got, "done stop\n") {
		t.Errorf("answer %q", got)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 1 || len(reqs[1].Tools) != 0 {
		t.Fatalf("requests: %d, tools %v", len(reqs), reqs)
	}
	// The next call goes without tools at once, notice first.
	evs, err = call()
	if err != nil || len(evs) == 0 || evs[0].Kind != engine.StreamNotice {
		t.Fatalf("second call: %+v, %v", evs, err)
	}
	if reqs := srv.ChatRequests(); len(reqs) != 3 || len(reqs[2].Tools) != 0 {
		t.Fatalf("second call sent tools or was repeated: %d requests", len(reqs))
	}
	// Another model of the same server is not affected, and another 400
	// fails as it is.
	other := *req
	other.Model.ID = "tiny-tools:latest"
	var pe *engine.ProviderError
	if err := p.Stream(t.Context(), &other, func(engine.StreamEvent) error { return nil }); !errors.As(err, &pe) || pe.Status != 400 {
		t.Fatalf("other model: %v", err)
	}
	if reqs := srv.ChatRequests(); len(reqs) != 4 || len(reqs[3].Tools) != 1 {
		t.Errorf("other model: %d requests, tools %v", len(reqs), reqs[len(reqs)-1].Tools)
	}
}

// An output schema is Ollama's format on a request without tools; with
// tools it is not sent (format would suppress every tool call).
func TestStreamOutputFormat(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	for _, c := range []struct {
		name   string
		tools  []engine.ToolSpec
		format string
	}{
		{"no tools", nil, schema},
		{"tools", []engine.ToolSpec{{Name: "read", Description: "Read."}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{lines(ollamatest.Done("stop", 1, 1))}})
			t.Cleanup(srv.Close)
			req := &engine.Request{Model: testModel(srv.URL), Messages: []engine.Message{userText("hi")}, Tools: c.tools,
				Output: &engine.OutputFormat{Name: "output", Schema: []byte(schema)}}
			if _, err := stream(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Format json.RawMessage `json:"format"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if string(body.Format) != c.format {
				t.Errorf("format = %s, want %s", body.Format, c.format)
			}
		})
	}
}
