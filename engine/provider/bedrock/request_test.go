package bedrock

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/bedrock/bedrocktest"
)

// sentBody runs req against a server that answers text and returns the
// body the SDK sent.
func sentBody(t *testing.T, req *engine.Request) []byte {
	t.Helper()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{bedrocktest.TextResponse("ok")}})
	defer srv.Close()
	req.Model.BaseURL = srv.URL
	if _, err := collect(t, newTestProvider(nil), req); err != nil {
		t.Fatal(err)
	}
	return srv.Requests()[0].Body
}

func text(s string) engine.ContentBlock { return engine.ContentBlock{Type: engine.BlockText, Text: s} }

func TestReplayOfATurnWithThinkingAndToolCalls(t *testing.T) {
	t.Parallel()
	m := testModel("")
	png := engine.ContentBlock{Type: engine.BlockImage, MimeType: "image/png", Data: "iVBORw0KGgo="}
	other := &engine.AssistantMessage{API: "openai-responses", Provider: "openai", Model: "gpt-5", StopReason: engine.StopToolUse,
		Content: []engine.ContentBlock{
			{Type: engine.BlockThinking, Thinking: "their thoughts", ThinkingSignature: `{"type":"reasoning"}`},
			{Type: engine.BlockToolCall, ID: "call_9|fc_9", Name: "ls", Arguments: []byte(`{}`)},
		}}
	failed := &engine.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: engine.StopError,
		Content: []engine.ContentBlock{{Type: engine.BlockToolCall, ID: "tooluse_x", Name: "bash", Arguments: []byte(`{"comm`)}}}
	mine := &engine.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: engine.StopToolUse,
		Content: []engine.ContentBlock{
			{Type: engine.BlockThinking, Thinking: "Two reads.", ThinkingSignature: "sig-1"},
			{Type: engine.BlockThinking, Thinking: "unsigned, cut short"},
			text("Reading."),
			{Type: engine.BlockToolCall, ID: "tooluse_1", Name: "read", Arguments: []byte(`{"path":"a.txt","limit":10}`)},
			{Type: engine.BlockToolCall, ID: "tooluse_2", Name: "read", Arguments: []byte(`{"path":"b.png"}`)},
		}}
	req := &engine.Request{Model: m, ThinkingLevel: engine.ThinkingOff, Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{text("look"), png}},
		other,
		&engine.ToolResultMessage{ToolCallID: "call_9|fc_9", Content: []engine.ContentBlock{text("a.txt b.png")}},
		failed,
		&engine.ToolResultMessage{ToolCallID: "tooluse_x", IsError: true, Content: []engine.ContentBlock{text("aborted")}},
		&engine.DeveloperMessage{Content: []engine.ContentBlock{text("keep going")}},
		mine,
		&engine.ToolResultMessage{ToolCallID: "tooluse_1", Content: []engine.ContentBlock{text("alpha")}},
		&engine.ToolResultMessage{ToolCallID: "tooluse_2", IsError: true, Content: []engine.ContentBlock{png}},
		&engine.UserMessage{Content: []engine.ContentBlock{text("  ")}},
	}}
	body := sentBody(t, req)
	var got struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got.Messages, `[
	 {"role":"user","content":[{"text":"look"},{"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}}]},
	 {"role":"assistant","content":[{"text":"their thoughts"},{"toolUse":{"toolUseId":"call_9_fc_9","name":"ls","input":{}}}]},
	 {"role":"user","content":[{"toolResult":{"toolUseId":"call_9_fc_9","content":[{"text":"a.txt b.png"}],"status":"success"}},{"text":"keep going"}]},
	 {"role":"assistant","content":[
	   {"reasoningContent":{"reasoningText":{"text":"Two reads.","signature":"sig-1"}}},
	   {"text":"unsigned, cut short"},
	   {"text":"Reading."},
	   {"toolUse":{"toolUseId":"tooluse_1","name":"read","input":{"limit":10,"path":"a.txt"}}},
	   {"toolUse":{"toolUseId":"tooluse_2","name":"read","input":{"path":"b.png"}}}]},
	 {"role":"user","content":[
	   {"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"alpha"}],"status":"success"}},
	   {"toolResult":{"toolUseId":"tooluse_2","content":[{"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}}],"status":"error"}},
	   {"cachePoint":{"type":"default"}}]}
	]`)
}

func TestReasoningOfAnotherFamilyHasNoSignature(t *testing.T) {
	t.Parallel()
	m := testModel("")
	m.ID = "deepseek.r1-v1:0"
	prior := &engine.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: engine.StopStop,
		Content: []engine.ContentBlock{{Type: engine.BlockThinking, Thinking: "hmm", ThinkingSignature: "x"}, text("answer")}}
	body := sentBody(t, &engine.Request{Model: m, ThinkingLevel: engine.ThinkingHigh, Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{text("q")}}, prior, &engine.UserMessage{Content: []engine.ContentBlock{text("q2")}},
	}})
	// No cache points, no Claude thinking fields, reasoning without its
	// signature.
	sameJSON(t, body, `{"inferenceConfig":{"maxTokens":32000},"messages":[
	 {"role":"user","content":[{"text":"q"}]},
	 {"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"hmm"}}},{"text":"answer"}]},
	 {"role":"user","content":[{"text":"q2"}]}]}`)
}

func TestPlanThinking(t *testing.T) {
	t.Parallel()
	adaptive := &engine.ModelThinking{MinLevel: engine.ThinkingLow, MaxLevel: engine.ThinkingXHigh, Mode: adaptiveMode}
	tests := []struct {
		name      string
		id        string
		maxTokens int
		thinking  *engine.ModelThinking
		level     engine.ThinkingLevel
		region    string
		want      thinkingPlan
	}{
		{"off", claudeID, 64000, nil, engine.ThinkingOff, "us-east-1", thinkingPlan{maxTokens: 32000}},
		{"unset", claudeID, 64000, nil, "", "us-east-1", thinkingPlan{maxTokens: 32000}},
		{"budget", claudeID, 64000, nil, engine.ThinkingHigh, "us-east-1", thinkingPlan{maxTokens: 48384, fields: map[string]any{
			"thinking":       map[string]any{"type": "enabled", "budget_tokens": int32(16384), "display": "summarized"},
			"anthropic_beta": []any{betaInterleavedThinking}}}},
		{"xhigh thinks as high", claudeID, 64000, nil, engine.ThinkingXHigh, "us-east-1", thinkingPlan{maxTokens: 48384, fields: map[string]any{
			"thinking":       map[string]any{"type": "enabled", "budget_tokens": int32(16384), "display": "summarized"},
			"anthropic_beta": []any{betaInterleavedThinking}}}},
		{"budget shrinks to fit", claudeID, 8192, nil, engine.ThinkingHigh, "us-east-1", thinkingPlan{maxTokens: 8192, fields: map[string]any{
			"thinking":       map[string]any{"type": "enabled", "budget_tokens": int32(7168), "display": "summarized"},
			"anthropic_beta": []any{betaInterleavedThinking}}}},
		{"no room to think", claudeID, 1500, nil, engine.ThinkingLow, "us-east-1", thinkingPlan{maxTokens: 1500}},
		{"GovCloud takes no display", "us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0", 64000, nil, engine.ThinkingMinimal, "us-gov-west-1", thinkingPlan{maxTokens: 33024, fields: map[string]any{
			"thinking":       map[string]any{"type": "enabled", "budget_tokens": int32(1024)},
			"anthropic_beta": []any{betaInterleavedThinking}}}},
		{"adaptive", "global.anthropic.claude-opus-4-6-v1", 128000, adaptive, engine.ThinkingXHigh, "us-east-1", thinkingPlan{maxTokens: 32000, fields: map[string]any{
			"thinking": map[string]any{"type": "adaptive", "display": "summarized"}, "output_config": map[string]any{"effort": "max"}}}},
		{"adaptive sonnet", "us.anthropic.claude-sonnet-4-6", 64000, adaptive, engine.ThinkingMinimal, "us-east-1", thinkingPlan{maxTokens: 32000, fields: map[string]any{
			"thinking": map[string]any{"type": "adaptive", "display": "summarized"}, "output_config": map[string]any{"effort": "low"}}}},
		{"not Claude", "openai.gpt-oss-120b-1:0", 0, nil, engine.ThinkingHigh, "us-east-1", thinkingPlan{maxTokens: 32000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := engine.Model{ID: tc.id, Reasoning: true, MaxTokens: tc.maxTokens, Thinking: tc.thinking}
			if got := planThinking(m, tc.level, tc.region); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestUnsupportedImageIsDropped(t *testing.T) {
	t.Parallel()
	body := sentBody(t, &engine.Request{Model: testModel(""), Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{text("see"), {Type: engine.BlockImage, MimeType: "image/bmp", Data: "Qk0="}}},
	}})
	var got struct {
		Messages json.RawMessage `json:"messages"`
	}
	json.Unmarshal(body, &got)
	sameJSON(t, got.Messages, `[{"role":"user","content":[{"text":"see"},{"cachePoint":{"type":"default"}}]}]`)
}
