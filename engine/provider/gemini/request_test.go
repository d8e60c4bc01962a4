package gemini_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/gemini/geminitest"
)

// body sends req to a server that answers "ok" and returns the body the
// adapter sent.
func body(t *testing.T, req *engine.Request) string {
	t.Helper()
	r := stream(t, req, chunks(geminitest.Chunk("r1", "STOP", nil, geminitest.TextPart("ok"))))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !json.Valid(r.reqs[0].Body) {
		t.Fatalf("body %s", r.reqs[0].Body)
	}
	return string(r.reqs[0].Body)
}

func user(text string) *engine.UserMessage {
	return &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}}
}

// A conversation with thinking, text and two calls of the same model, one
// answered with an image, then another model's turn: the same model's
// parts go back with their signatures, the responses to one turn's calls
// in one user content with their ids and names, an unanswered call gets a
// response that says so, and another model's thinking is plain text.
func TestRequestContents(t *testing.T) {
	t.Parallel()
	m := testModel("gemini-2.5-flash")
	req := &engine.Request{Model: m, SystemPrompt: "Be brief.", Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("look"), {Type: engine.BlockImage, MimeType: "image/png", Data: "iVBORw0K"}}},
		&engine.AssistantMessage{Provider: "google", API: "google-generative-ai", Model: m.ID, StopReason: engine.StopToolUse, Content: []engine.ContentBlock{
			{Type: engine.BlockThinking, Thinking: "plan", ThinkingSignature: "dGhvdWdodA=="},
			{Type: engine.BlockText, Text: "Reading.", TextSignature: "dGV4dA=="},
			{Type: engine.BlockToolCall, ID: "read_r1_1", Name: "read", Arguments: []byte(`{"path":"a.png"}`), ThoughtSignature: "Y2FsbA=="},
			{Type: engine.BlockToolCall, ID: "ls_r1_2", Name: "ls", Arguments: []byte(`{}`)},
		}},
		&engine.ToolResultMessage{ToolCallID: "read_r1_1", ToolName: "read", Content: []engine.ContentBlock{{Type: engine.BlockImage, MimeType: "image/png", Data: "iVBORw0K"}}},
		&engine.ToolResultMessage{ToolCallID: "ls_r1_2", ToolName: "ls", IsError: true, Content: []engine.ContentBlock{engine.TextBlock("denied")}},
		&engine.AssistantMessage{Provider: "anthropic", API: "anthropic-messages", Model: "claude", StopReason: engine.StopToolUse, Content: []engine.ContentBlock{
			{Type: engine.BlockThinking, Thinking: "other plan", ThinkingSignature: "c2ln"},
			{Type: engine.BlockToolCall, ID: "toolu_1", Name: "ls", Arguments: []byte(`{}`), ThoughtSignature: "eA=="},
		}},
		user("next"),
		&engine.AssistantMessage{Provider: "google", Model: m.ID, StopReason: engine.StopError, Content: []engine.ContentBlock{
			{Type: engine.BlockToolCall, ID: "gone", Name: "ls", Arguments: []byte(`{}`)}}},
		&engine.ToolResultMessage{ToolCallID: "gone", ToolName: "ls", Content: []engine.ContentBlock{engine.TextBlock("x")}},
	}}
	b := body(t, req)
	want := map[string]string{
		"systemInstruction.parts.0.text":               "Be brief.",
		"contents.#":                                   "7",
		"contents.0.role":                              "user",
		"contents.0.parts.1.inlineData.mimeType":       "image/png",
		"contents.0.parts.1.inlineData.data":           "iVBORw0K",
		"contents.1.role":                              "model",
		"contents.1.parts.0.thought":                   "true",
		"contents.1.parts.0.thoughtSignature":          "dGhvdWdodA==",
		"contents.1.parts.1.text":                      "Reading.",
		"contents.1.parts.1.thoughtSignature":          "dGV4dA==",
		"contents.1.parts.2.functionCall.id":           "read_r1_1",
		"contents.1.parts.2.functionCall.args.path":    "a.png",
		"contents.1.parts.2.thoughtSignature":          "Y2FsbA==",
		"contents.1.parts.3.thoughtSignature":          "",
		"contents.2.role":                              "user",
		"contents.2.parts.#":                           "2",
		"contents.2.parts.0.functionResponse.id":       "read_r1_1",
		"contents.2.parts.0.functionResponse.name":     "read",
		"contents.2.parts.0.functionResponse.response": `{"output":"(see attached image)"}`,
		"contents.2.parts.1.functionResponse.response": `{"error":"denied"}`,
		"contents.3.parts.0.text":                      "Tool result image:",
		"contents.3.parts.1.inlineData.data":           "iVBORw0K",
		"contents.3.parts.#":                           "2",
		"contents.4.parts.0.text":                      "other plan",
		"contents.4.parts.0.thought":                   "",
		"contents.4.parts.1.functionCall.id":           "toolu_1",
		"contents.4.parts.1.thoughtSignature":          "",
		"contents.5.parts.0.functionResponse.id":       "toolu_1",
		"contents.5.parts.0.functionResponse.response": `{"error":"No result provided"}`,
		"contents.6.parts.0.text":                      "next",
		"generationConfig.maxOutputTokens":             "32000",
		"generationConfig.thinkingConfig":              "",
		"generationConfig.responseMimeType":            "",
	}
	for path, v := range want {
		if got := gjson.Get(b, path).String(); got != v {
			t.Errorf("%s = %q, want %q", path, got, v)
		}
	}
	if t.Failed() {
		t.Logf("body %s", b)
	}
}

// Gemini 3 takes the images of a tool result inside its function response.
func TestRequestGemini3ToolImages(t *testing.T) {
	t.Parallel()
	m := testModel("gemini-3-pro-preview")
	req := &engine.Request{Model: m, Messages: []engine.Message{user("look"),
		&engine.AssistantMessage{Provider: "google", Model: m.ID, StopReason: engine.StopToolUse, Content: []engine.ContentBlock{
			{Type: engine.BlockToolCall, ID: "c1", Name: "read", Arguments: []byte(`{}`)}}},
		&engine.ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock("an image"), {Type: engine.BlockImage, MimeType: "image/png", Data: "iVBORw0K"}}},
	}}
	b := body(t, req)
	if gjson.Get(b, "contents.#").Int() != 3 || gjson.Get(b, "contents.2.parts.0.functionResponse.parts.0.inlineData.data").String() != "iVBORw0K" ||
		gjson.Get(b, "contents.2.parts.0.functionResponse.response.output").String() != "an image" {
		t.Errorf("body %s", b)
	}
}

func TestRequestTools(t *testing.T) {
	t.Parallel()
	req := &engine.Request{Model: testModel("gemini-2.5-flash"), Messages: []engine.Message{user("hi")}, Tools: []engine.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "ls"},
	}}
	b := body(t, req)
	d := gjson.Get(b, "tools.0.functionDeclarations")
	if d.Get("#").Int() != 2 || d.Get("0.name").String() != "read" || d.Get("0.description").String() != "Read a file" ||
		d.Get("0.parametersJsonSchema.required.0").String() != "path" || d.Get("0.parametersJsonSchema.additionalProperties").String() != "false" ||
		d.Get("1.parametersJsonSchema.type").String() != "object" || d.Get("0.parameters").Exists() {
		t.Errorf("declarations %s", d.Raw)
	}
}

func TestRequestThinking(t *testing.T) {
	t.Parallel()
	level := func(lo, hi engine.ThinkingLevel, mode string) *engine.ModelThinking {
		return &engine.ModelThinking{MinLevel: lo, MaxLevel: hi, Mode: mode}
	}
	tests := []struct {
		id       string
		thinking *engine.ModelThinking
		level    engine.ThinkingLevel
		want     string // generationConfig.thinkingConfig
	}{
		{"gemini-2.5-flash", nil, "", ``},
		{"gemini-2.5-flash", nil, engine.ThinkingMedium, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-flash", nil, engine.ThinkingOff, `{"thinkingBudget":0}`},
		{"gemini-2.5-pro", nil, engine.ThinkingHigh, `{"includeThoughts":true,"thinkingBudget":32768}`},
		{"gemini-2.5-pro", nil, engine.ThinkingOff, `{"thinkingBudget":128}`},
		{"gemini-2.5-flash-lite", nil, engine.ThinkingMinimal, `{"includeThoughts":true,"thinkingBudget":512}`},
		{"gemini-2.0-flash-thinking", nil, engine.ThinkingLow, `{"includeThoughts":true,"thinkingBudget":-1}`},
		{"gemini-3-pro-preview", level(engine.ThinkingLow, engine.ThinkingHigh, "google-level"), engine.ThinkingLow, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-pro-preview", nil, engine.ThinkingXHigh, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3-flash-preview", nil, engine.ThinkingMedium, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-3-flash-preview", nil, engine.ThinkingOff, `{"thinkingLevel":"MINIMAL"}`},
		// The model's rules win over its id.
		{"my-gemini", level(engine.ThinkingMinimal, engine.ThinkingHigh, "google-level"), engine.ThinkingMinimal, `{"includeThoughts":true,"thinkingLevel":"MINIMAL"}`},
	}
	for _, tc := range tests {
		t.Run(tc.id+"/"+string(tc.level), func(t *testing.T) {
			t.Parallel()
			m := testModel(tc.id)
			m.Thinking = tc.thinking
			b := body(t, &engine.Request{Model: m, ThinkingLevel: tc.level, Messages: []engine.Message{user("hi")}})
			if got := gjson.Get(b, "generationConfig.thinkingConfig").Raw; got != tc.want {
				t.Errorf("thinkingConfig %s, want %s", got, tc.want)
			}
		})
	}
	// A model that does not reason gets no thinking config.
	m := testModel("gemini-2.0-flash")
	m.Reasoning = false
	if b := body(t, &engine.Request{Model: m, ThinkingLevel: engine.ThinkingHigh, Messages: []engine.Message{user("hi")}}); gjson.Get(b, "generationConfig.thinkingConfig").Exists() {
		t.Errorf("non-reasoning model: %s", b)
	}
}

// An output schema is Gemini's JSON response with responseJsonSchema: on
// any model without tools, and beside tools only on Gemini 3 (before it,
// the API refuses a JSON response type with function calling).
func TestRequestOutputSchema(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`
	tools := []engine.ToolSpec{{Name: "ls"}}
	for _, tc := range []struct {
		id     string
		tools  []engine.ToolSpec
		native bool
	}{
		{"gemini-2.5-flash", nil, true},
		{"gemini-2.5-flash", tools, false},
		{"gemini-3-flash-preview", tools, true},
	} {
		req := &engine.Request{Model: testModel(tc.id), Tools: tc.tools, Messages: []engine.Message{user("hi")},
			Output: &engine.OutputFormat{Name: "out", Schema: []byte(schema)}}
		b := body(t, req)
		g := gjson.Get(b, "generationConfig")
		if got := g.Get("responseMimeType").String() == "application/json" && g.Get("responseJsonSchema.required.0").String() == "answer"; got != tc.native {
			t.Errorf("%s with %d tools: native %v, want %v: %s", tc.id, len(tc.tools), got, tc.native, g.Raw)
		}
	}
}

// The base URL's version segment is the API version; without one, v1beta;
// the model's headers are sent.
func TestRequestEndpoint(t *testing.T) {
	t.Parallel()
	srv := geminitest.New(geminitest.Script{Responses: []geminitest.Response{
		chunks(geminitest.Chunk("r1", "STOP", nil, geminitest.TextPart("a"))),
		chunks(geminitest.Chunk("r2", "STOP", nil, geminitest.TextPart("b"))),
	}})
	defer srv.Close()
	for _, base := range []string{srv.URL + "/v1alpha/", srv.URL} {
		m := testModel("gemini-2.5-flash")
		m.BaseURL, m.Headers = base, map[string]string{"X-Team": "blue"}
		r := streamTo(t, m)
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1alpha/models/gemini-2.5-flash:streamGenerateContent" ||
		reqs[1].Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || reqs[0].Header.Get("X-Team") != "blue" {
		for _, r := range reqs {
			t.Logf("%s %v", r.Path, r.Header)
		}
		t.Error("endpoints")
	}
	if !strings.Contains(reqs[0].Header.Get("User-Agent"), "google-genai-sdk/") {
		t.Errorf("user agent %q", reqs[0].Header.Get("User-Agent"))
	}
}
