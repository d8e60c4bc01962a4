package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
)

// respOK is a minimal successful Responses stream.
var respOK = openaitest.Response{Chunks: openaitest.NewEvents(respID).Completed(openaitest.ResponseUsage{})}

// respBody sends req through the Responses adapter and returns the decoded
// body the server received.
func respBody(t *testing.T, opts openai.Options, req *engine.Request) (map[string]any, openaitest.Request) {
	t.Helper()
	r := streamResponses(t, opts, req, respOK)
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

func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	if w := decode(t, want); !reflect.DeepEqual(got, w) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, jsonOf(got), jsonOf(w))
	}
}

const reasoningSig = `{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA-enc","summary":[{"type":"summary_text","text":"Plan."}]}`

func assistant(model engine.Model, stop engine.StopReason, blocks ...engine.ContentBlock) *engine.AssistantMessage {
	return &engine.AssistantMessage{Content: blocks, API: model.API, Provider: model.Provider, Model: model.ID, StopReason: stop}
}

func TestResponsesRequestInput(t *testing.T) {
	t.Parallel()
	m := respModel("")
	other := engine.Model{ID: "claude-x", API: "anthropic-messages", Provider: "anthropic"}
	req := &engine.Request{
		Model:         m,
		SystemPrompt:  "Be brief.",
		ThinkingLevel: engine.ThinkingHigh,
		Tools:         []engine.ToolSpec{{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
		Messages: []engine.Message{
			&engine.UserMessage{Content: []engine.ContentBlock{text("look"), image("AAA")}},
			assistant(m, engine.StopToolUse,
				engine.ContentBlock{Type: engine.BlockThinking, Thinking: "Plan.", ThinkingSignature: reasoningSig},
				engine.ContentBlock{Type: engine.BlockText, Text: "Reading.", TextSignature: `{"v":1,"id":"msg_1"}`},
				toolCall("call_1|fc_1", "read", `{"path":"a"}`),
				toolCall("call_2|fc_2", "ls", ``)),
			&engine.ToolResultMessage{ToolCallID: "call_1|fc_1", ToolName: "read", Content: []engine.ContentBlock{text("contents")}},
			&engine.ToolResultMessage{ToolCallID: "call_2|fc_2", ToolName: "ls", Content: []engine.ContentBlock{image("BBB")}},
			// Another model's message: plain content, no ids; its call has
			// no result and gets a placeholder.
			assistant(other, engine.StopToolUse,
				engine.ContentBlock{Type: engine.BlockThinking, Thinking: "I think", ThinkingSignature: "anthropic-signature"},
				text("Hi"),
				toolCall("toolu_1", "read", `{}`)),
			&engine.UserMessage{Content: []engine.ContentBlock{text("next")}},
			// An errored message and its result are left out.
			assistant(m, engine.StopError, toolCall("call_x|fc_x", "read", `{}`)),
			&engine.ToolResultMessage{ToolCallID: "call_x|fc_x", ToolName: "read", Content: []engine.ContentBlock{text("x")}},
			// A reasoning item without its encrypted content cannot go back
			// (store is false); a bare message id is pi's older signature.
			assistant(m, engine.StopStop,
				engine.ContentBlock{Type: engine.BlockThinking, ThinkingSignature: `{"id":"rs_2","type":"reasoning","summary":[]}`},
				engine.ContentBlock{Type: engine.BlockText, Text: "Old.", TextSignature: "msg_legacy"},
				text("plain")),
			&engine.DeveloperMessage{Content: []engine.ContentBlock{text("note")}},
		},
	}
	b, raw := respBody(t, openai.Options{}, req)
	if raw.Path != "/v1/responses" || raw.Method != "POST" {
		t.Errorf("request %s %s, want POST /v1/responses", raw.Method, raw.Path)
	}
	sameJSON(t, "input", b["input"], `[
		{"role":"developer","content":"Be brief."},
		{"role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,AAA"}]},
		`+reasoningSig+`,
		{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},
		{"type":"function_call","call_id":"call_1","id":"fc_1","name":"read","arguments":"{\"path\":\"a\"}"},
		{"type":"function_call","call_id":"call_2","id":"fc_2","name":"ls","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":"contents"},
		{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,BBB"}]},
		{"role":"assistant","content":"I think"},
		{"role":"assistant","content":"Hi"},
		{"type":"function_call","call_id":"toolu_1","name":"read","arguments":"{}"},
		{"type":"function_call_output","call_id":"toolu_1","output":"No result provided"},
		{"role":"user","content":[{"type":"input_text","text":"next"}]},
		{"type":"message","role":"assistant","id":"msg_legacy","status":"completed","content":[{"type":"output_text","text":"Old.","annotations":[]}]},
		{"role":"assistant","content":"plain"},
		{"role":"developer","content":[{"type":"input_text","text":"note"}]}
	]`)
	for k, want := range map[string]string{
		"model":             `"gpt-test"`,
		"stream":            `true`,
		"store":             `false`,
		"max_output_tokens": `16384`,
		"reasoning":         `{"effort":"high","summary":"auto"}`,
		"include":           `["reasoning.encrypted_content"]`,
		"tools":             `[{"type":"function","name":"read","description":"Read a file","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]`,
	} {
		sameJSON(t, k, b[k], want)
	}
	// The schema goes out byte for byte (a map would sort its keys).
	if !strings.Contains(string(raw.Body), `"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`) {
		t.Errorf("schema reordered: %s", raw.Body)
	}
	for _, k := range []string{"instructions", "text", "tool_choice", "parallel_tool_calls"} {
		if _, ok := b[k]; ok {
			t.Errorf("%s sent: %s", k, jsonOf(b[k]))
		}
	}
}

func TestResponsesRequestModels(t *testing.T) {
	t.Parallel()
	user := []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("hi"), image("AAA")}}}
	result := &engine.ToolResultMessage{ToolCallID: "c|fc", ToolName: "shot", Content: []engine.ContentBlock{image("BBB")}}
	tests := []struct {
		name   string
		model  func(*engine.Model)
		level  engine.ThinkingLevel
		msgs   []engine.Message
		checks map[string]string // key: want ("" means absent)
	}{
		{
			name:  "a GPT-5 model asked for no reasoning gets the original's juice line",
			model: func(m *engine.Model) { m.ID, m.Name = "gpt-5-mini", "GPT-5 Mini" },
			msgs:  user,
			checks: map[string]string{"reasoning": "", "include": `["reasoning.encrypted_content"]`,
				"input": `[{"role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,AAA"}]},{"role":"developer","content":[{"type":"input_text","text":"# Juice: 0 !important"}]}]`},
		},
		{
			name:   "thinking off is no reasoning parameter",
			model:  func(m *engine.Model) {},
			level:  engine.ThinkingOff,
			msgs:   user,
			checks: map[string]string{"reasoning": ""},
		},
		{
			name:   "xhigh goes as is (the session clamps first)",
			model:  func(m *engine.Model) {},
			level:  engine.ThinkingXHigh,
			msgs:   user,
			checks: map[string]string{"reasoning": `{"effort":"xhigh","summary":"auto"}`},
		},
		{
			name:  "a text-only model without reasoning: system role, no include, no images",
			model: func(m *engine.Model) { m.Reasoning, m.Input = false, []string{"text"} },
			msgs:  []engine.Message{user[0], assistant(respModel(""), engine.StopToolUse, toolCall("c|fc", "shot", `{}`)), result},
			checks: map[string]string{"include": "", "reasoning": "",
				"input": `[{"role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call","call_id":"c","id":"fc","name":"shot","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"(see attached image)"}]`},
		},
		{
			name:   "no max_output_tokens without a limit; the limit is capped",
			model:  func(m *engine.Model) { m.MaxTokens = 128000 },
			msgs:   user,
			checks: map[string]string{"max_output_tokens": `32000`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := respModel("")
			tt.model(&m)
			b, _ := respBody(t, openai.Options{}, &engine.Request{Model: m, ThinkingLevel: tt.level, Messages: tt.msgs})
			for k, want := range tt.checks {
				if want == "" {
					if v, ok := b[k]; ok {
						t.Errorf("%s = %s, want absent", k, jsonOf(v))
					}
					continue
				}
				sameJSON(t, k, b[k], want)
			}
		})
	}
}

func TestResponsesRequestOpenAIAuth(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", testKey} {
		req := &engine.Request{Model: respModel("")}
		req.Model.Headers = map[string]string{"X-Team": "platform"}
		_, raw := respBody(t, keyed(key), req)
		wantAuth := ""
		if key != "" {
			wantAuth = "Bearer " + key
		}
		if got := raw.Header.Get("Authorization"); got != wantAuth {
			t.Errorf("key %q: Authorization = %q, want %q", key, got, wantAuth)
		}
		if raw.Header.Get("X-Team") != "platform" || raw.Header.Get("X-Stainless-Retry-Count") != "0" {
			t.Errorf("key %q: headers %v", key, raw.Header)
		}
	}
}

// TestResponsesAzure: Azure takes the key in api-key and an api-version
// query, "v1" unless the baseUrl names one.
func TestResponsesAzure(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ query, want string }{{"", "api-version=v1"}, {"?api-version=2025-04-01-preview", "api-version=2025-04-01-preview"}} {
		srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: []openaitest.Response{respOK}})
		m := respModel(srv.URL + tt.query)
		m.API, m.Provider = "azure-openai-responses", "azure-openai-responses"
		err := openai.NewResponses(keyed(testKey)).Stream(context.Background(), &engine.Request{Model: m}, func(engine.StreamEvent) error { return nil })
		reqs := srv.Requests()
		srv.Close()
		if err != nil || len(reqs) != 1 {
			t.Fatalf("err, requests = %v, %d", err, len(reqs))
		}
		r := reqs[0]
		if r.Path != "/v1/responses" || r.Query != tt.want {
			t.Errorf("url %s?%s, want /v1/responses?%s", r.Path, r.Query, tt.want)
		}
		if r.Header.Get("api-key") != testKey || r.Header.Get("Authorization") != "" {
			t.Errorf("api-key %q, Authorization %q", r.Header.Get("api-key"), r.Header.Get("Authorization"))
		}
	}
	m := respModel("")
	m.API = "azure-openai-responses"
	err := openai.NewResponses(keyed(testKey)).Stream(context.Background(), &engine.Request{Model: m}, func(engine.StreamEvent) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "baseUrl") {
		t.Errorf("no baseUrl: err = %v", err)
	}
}

// codexToken is a ChatGPT access token's shape: a JWT whose claims name
// the account.
func codexToken(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2lnbmF0dXJl"
}

func TestResponsesCodex(t *testing.T) {
	t.Parallel()
	token := codexToken(`{"https://api.openai.com/auth":{"chatgpt_account_id":"acct_123"},"exp":1}`)
	srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: []openaitest.Response{respOK}})
	defer srv.Close()
	m := respModel(strings.TrimSuffix(srv.URL, "/v1") + "/backend-api")
	m.API, m.Provider, m.ID, m.Reasoning = "openai-codex-responses", "openai-codex", "gpt-5.1-codex", false
	req := &engine.Request{Model: m, SystemPrompt: "You are Codex.", Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("hi")}}},
		Tools: []engine.ToolSpec{{Name: "ls", Parameters: []byte(`{"type":"object"}`)}}}
	if err := openai.NewResponses(keyed(token)).Stream(context.Background(), req, func(engine.StreamEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/backend-api/codex/responses" {
		t.Errorf("path %s", r.Path)
	}
	for h, want := range map[string]string{"Authorization": "Bearer " + token, "chatgpt-account-id": "acct_123",
		"OpenAI-Beta": "responses=experimental", "originator": "pi", "Accept": "text/event-stream"} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	var b map[string]any
	if err := r.JSON(&b); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"instructions": `"You are Codex."`, "store": `false`, "include": `["reasoning.encrypted_content"]`,
		"text": `{"verbosity":"medium"}`, "tool_choice": `"auto"`, "parallel_tool_calls": `true`,
		"input": `[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]`,
		"tools": `[{"type":"function","name":"ls","strict":null,"parameters":{"type":"object"}}]`,
	} {
		sameJSON(t, k, b[k], want)
	}
	if _, ok := b["max_output_tokens"]; ok {
		t.Errorf("max_output_tokens sent to Codex")
	}

	// The base URL is resolved as the original does.
	for _, base := range []string{"/backend-api/codex", "/backend-api/codex/responses/"} {
		srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: []openaitest.Response{respOK}})
		req.Model.BaseURL = strings.TrimSuffix(srv.URL, "/v1") + base
		err := openai.NewResponses(keyed(token)).Stream(context.Background(), req, func(engine.StreamEvent) error { return nil })
		reqs := srv.Requests()
		srv.Close()
		if err != nil || len(reqs) != 1 || reqs[0].Path != "/backend-api/codex/responses" {
			t.Errorf("base %s: err %v, requests %v", base, err, reqs)
		}
	}

	// An API key is not a ChatGPT token: refused before any request.
	for _, key := range []string{testKey, codexToken(`{"sub":"x"}`), "a.b!.c"} {
		srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses})
		req.Model.BaseURL = srv.URL
		err := openai.NewResponses(keyed(key)).Stream(context.Background(), req, func(engine.StreamEvent) error { return nil })
		n := len(srv.Requests())
		srv.Close()
		var pe *engine.ProviderError
		if !errors.As(err, &pe) || pe.Kind != engine.ErrorAuth || !strings.Contains(pe.Message, "ChatGPT access token") || n != 0 {
			t.Errorf("key %q: err %v, %d requests; want an auth error and none", key, err, n)
		}
	}
}

// TestResponsesRoundTrip streams a turn with reasoning, text and a call,
// builds the assistant message the engine would keep, and checks that
// the next request gives each item back as the model sent it.
func TestResponsesRoundTrip(t *testing.T) {
	t.Parallel()
	first := openaitest.NewEvents(respID).Reasoning("rs_1", "gAAAA-enc", "Plan.").Message("msg_1", "Reading.").
		Call("fc_1", "call_1", "read", `{"path":"a"}`).Completed(openaitest.ResponseUsage{})
	srv := openaitest.NewServer(&openaitest.Script{Format: openaitest.FormatResponses, Responses: []openaitest.Response{{Chunks: first}, respOK}})
	defer srv.Close()
	p := openai.NewResponses(openai.Options{})
	m := respModel(srv.URL)
	req := &engine.Request{Model: m, ThinkingLevel: engine.ThinkingMedium, Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("read a")}}}}

	msg := assistant(m, engine.StopToolUse)
	var cur *engine.ContentBlock
	err := p.Stream(context.Background(), req, func(ev engine.StreamEvent) error {
		switch ev.Kind {
		case engine.StreamThinkingStart:
			msg.Content = append(msg.Content, engine.ContentBlock{Type: engine.BlockThinking})
		case engine.StreamTextStart:
			msg.Content = append(msg.Content, engine.ContentBlock{Type: engine.BlockText})
		case engine.StreamToolCallStart:
			msg.Content = append(msg.Content, engine.ContentBlock{Type: engine.BlockToolCall, ID: ev.ToolCallID, Name: ev.ToolName})
		}
		if len(msg.Content) > 0 {
			cur = &msg.Content[len(msg.Content)-1]
		}
		switch ev.Kind {
		case engine.StreamThinkingDelta:
			cur.Thinking += ev.Delta
		case engine.StreamThinkingEnd:
			cur.ThinkingSignature = ev.Signature
		case engine.StreamTextDelta:
			cur.Text += ev.Delta
		case engine.StreamTextEnd:
			cur.TextSignature = ev.Signature
		case engine.StreamToolCallEnd:
			cur.Arguments = ev.Arguments
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, msg, &engine.ToolResultMessage{ToolCallID: msg.Content[2].ID, ToolName: "read", Content: []engine.ContentBlock{text("A")}})
	if err := p.Stream(context.Background(), req, func(engine.StreamEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := srv.Requests()[1].JSON(&b); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "second input", b["input"], `[
		{"role":"user","content":[{"type":"input_text","text":"read a"}]},
		{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA-enc","summary":[{"type":"summary_text","text":"Plan."}]},
		{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"Reading.","annotations":[]}]},
		{"type":"function_call","call_id":"call_1","id":"fc_1","name":"read","arguments":"{\"path\":\"a\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"A"}
	]`)
	if got := jsonOf(json.RawMessage(msg.Content[0].ThinkingSignature)); !strings.Contains(got, `"encrypted_content":"gAAAA-enc"`) {
		t.Errorf("thinking signature %s", got)
	}
}

// TestResponsesIgnoresEnvironment: the SDK's OPENAI_* variables do not
// reach a request; the registry decides the base URL and the key.
func TestResponsesIgnoresEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	_, raw := respBody(t, openai.Options{}, nil)
	if raw.Header.Get("Authorization") != "" || raw.Header.Get("OpenAI-Organization") != "" {
		t.Errorf("environment reached the request: %v", raw.Header)
	}
}

// TestResponsesRetriesOff: a failure is reported after one request.
func TestResponsesRetriesOff(t *testing.T) {
	t.Parallel()
	r := streamResponses(t, openai.Options{}, nil,
		openaitest.Response{Status: 503, Error: &openaitest.APIError{Message: "Service unavailable", Type: "server_error"}, Headers: map[string]string{"retry-after": "0"}},
		respOK)
	if r.err == nil || len(r.reqs) != 1 {
		t.Fatalf("err, requests = %v, %d; want an error after 1 request", r.err, len(r.reqs))
	}
}
