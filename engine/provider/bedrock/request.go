package bedrock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydocument "github.com/aws/smithy-go/document"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// maxTokensCap is the ceiling on maxTokens without thinking, as the
// original sends min(model.maxTokens, 32000); a model whose MaxTokens is
// unknown gets it too.
const maxTokensCap = 32000

// minThinkingBudget is the smallest budget_tokens Claude takes, and the
// room left for the answer when the budget has to shrink to fit.
const minThinkingBudget = 1024

// thinkingBudgets are the original's Bedrock budgets: Claude has no level
// above high there, so xhigh thinks as much as high.
var thinkingBudgets = map[engine.ThinkingLevel]int32{
	engine.ThinkingMinimal: 1024,
	engine.ThinkingLow:     2048,
	engine.ThinkingMedium:  8192,
	engine.ThinkingHigh:    16384,
	engine.ThinkingXHigh:   16384,
}

// adaptiveMode is the Model.Thinking.Mode of Claude models that take an
// effort instead of a budget (engine/models sets it for Claude ≥ 4.6).
const adaptiveMode = "anthropic-adaptive"

// betaInterleavedThinking lets a budget-thinking Claude think between tool
// calls; the original asks for it on Bedrock through anthropic_beta.
const betaInterleavedThinking = "interleaved-thinking-2025-05-14"

// thinkingPlan is the thinking part of a request: maxTokens and the
// additional model request fields Claude reads.
type thinkingPlan struct {
	maxTokens int32
	fields    map[string]any // nil: no additionalModelRequestFields
}

// isClaude reports whether a model id (a base model, an inference profile
// such as us.anthropic.claude-…, or an ARN that names it) is Anthropic's
// Claude, the one family whose reasoning parameters and signatures Bedrock
// passes through.
func isClaude(id string) bool {
	id = strings.ToLower(id)
	return strings.Contains(id, "anthropic.claude") || strings.Contains(id, "anthropic/claude")
}

// planThinking chooses maxTokens and Claude's thinking fields. With a
// budget, maxTokens must exceed budget_tokens: the budget is added on top
// of the usual room, up to what the model can produce, and shrinks to
// leave 1024 answer tokens when both do not fit (no thinking below the
// minimum budget), as the original's adjustMaxTokensForThinking does.
func planThinking(m engine.Model, level engine.ThinkingLevel, region string) thinkingPlan {
	base := int32(maxTokensCap)
	if m.MaxTokens > 0 && m.MaxTokens < maxTokensCap {
		base = int32(m.MaxTokens)
	}
	p := thinkingPlan{maxTokens: base}
	if !m.Reasoning || level == "" || level == engine.ThinkingOff || !isClaude(m.ID) {
		return p
	}
	thinking := map[string]any{}
	// Claude 4.7 and later hide their thinking unless asked; GovCloud's
	// schema does not take the field yet (the original's rule).
	if !strings.HasPrefix(strings.ToLower(region), "us-gov-") && !strings.HasPrefix(strings.ToLower(m.ID), "us-gov.") {
		thinking["display"] = "summarized"
	}
	if m.Thinking != nil && m.Thinking.Mode == adaptiveMode {
		thinking["type"] = "adaptive"
		p.fields = map[string]any{"thinking": thinking, "output_config": map[string]any{"effort": adaptiveEffort(level, m.ID)}}
		return p
	}
	budget, ok := thinkingBudgets[level]
	if !ok {
		return p
	}
	limit := int32(m.MaxTokens)
	if limit <= 0 {
		limit = base + budget
	}
	p.maxTokens = min(base+budget, limit)
	if budget > p.maxTokens-minThinkingBudget {
		budget = p.maxTokens - minThinkingBudget
	}
	if budget < minThinkingBudget {
		p.maxTokens = base
		return p
	}
	thinking["type"] = "enabled"
	thinking["budget_tokens"] = budget
	p.fields = map[string]any{"thinking": thinking, "anthropic_beta": []any{betaInterleavedThinking}}
	return p
}

// adaptiveEffort maps a level onto output_config.effort as the original
// does on Bedrock: no "minimal"; xhigh is Opus 4.6's "max" and Opus 4.7's
// "xhigh", and "high" for the others, which have nothing above it.
func adaptiveEffort(level engine.ThinkingLevel, id string) string {
	switch level {
	case engine.ThinkingMinimal, engine.ThinkingLow:
		return "low"
	case engine.ThinkingMedium:
		return "medium"
	case engine.ThinkingXHigh:
		id = strings.ToLower(id)
		switch {
		case strings.Contains(id, "opus-4-6") || strings.Contains(id, "opus-4.6"):
			return "max"
		case strings.Contains(id, "opus-4-7") || strings.Contains(id, "opus-4.7"):
			return "xhigh"
		}
	}
	return "high"
}

// cachesPrompts reports whether Bedrock caches prompts for the model when
// asked with cache points: Claude 4.x, 3.7 Sonnet and 3.5 Haiku (the
// original's list; other models reject cachePoint blocks or cache on
// their own).
func cachesPrompts(id string) bool {
	id = strings.ToLower(id)
	if !strings.Contains(id, "claude") {
		return false
	}
	return strings.Contains(id, "-4-") || strings.Contains(id, "-4.") ||
		strings.Contains(id, "claude-3-7-sonnet") || strings.Contains(id, "claude-3-5-haiku")
}

// buildInput converts an engine request into ConverseStream's input.
func buildInput(req *engine.Request, region string) *bedrockruntime.ConverseStreamInput {
	m := &req.Model
	plan := planThinking(*m, req.ThinkingLevel, region)
	cache := cachesPrompts(m.ID)
	in := &bedrockruntime.ConverseStreamInput{
		ModelId:         aws.String(m.ID),
		Messages:        convertMessages(req, cache),
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(plan.maxTokens)},
	}
	if req.SystemPrompt != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.SystemPrompt}}
		if cache {
			in.System = append(in.System, &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}})
		}
	}
	if len(req.Tools) > 0 {
		tc := &types.ToolConfiguration{}
		for _, t := range req.Tools {
			spec := types.ToolSpecification{
				Name:        aws.String(t.Name),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: jsonDocument(t.Parameters, `{"type":"object","properties":{}}`)},
			}
			if t.Description != "" {
				spec.Description = aws.String(t.Description)
			}
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
		in.ToolConfig = tc
	}
	if plan.fields != nil {
		in.AdditionalModelRequestFields = document.NewLazyDocument(plan.fields)
	}
	return in
}

// jsonDocument makes a document of raw JSON (a tool's schema, a call's
// arguments); an empty or invalid value is fallback. Numbers keep their
// text (document.Number), so an integer is not sent as a float.
func jsonDocument(raw []byte, fallback string) document.Interface {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !json.Valid(raw) {
		raw = []byte(fallback)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		v = map[string]any{}
	}
	return document.NewLazyDocument(documentValue(v))
}

// documentValue turns json.Number into the SDK's document.Number, which
// its encoder writes verbatim (a json.Number would go as a string).
func documentValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return smithydocument.Number(x)
	case map[string]any:
		for k, e := range x {
			x[k] = documentValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = documentValue(e)
		}
	}
	return v
}

// convertMessages turns the LLM context into Converse turns.
//
// Assistant messages that ended in error or were aborted are left out,
// with the tool results of their calls (a toolResult must answer a
// toolUse of the turn before). User-role content in a row (tool results,
// then a steering message) is one user turn: Bedrock wants the roles to
// alternate, and all the results of a turn's calls in one message.
func convertMessages(req *engine.Request, cache bool) []types.Message {
	calls := map[string]bool{}
	for _, m := range req.Messages {
		if a, ok := m.(*engine.AssistantMessage); ok && replayable(a) {
			for _, b := range a.Content {
				if b.Type == engine.BlockToolCall {
					calls[provider.ToolID(b.ID)] = true
				}
			}
		}
	}
	var out []types.Message
	addUser := func(blocks []types.ContentBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == types.ConversationRoleUser {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, types.Message{Role: types.ConversationRoleUser, Content: blocks})
	}
	for _, m := range req.Messages {
		switch v := m.(type) {
		case *engine.UserMessage:
			addUser(userBlocks(v.Content))
		case *engine.DeveloperMessage:
			// No developer role on this API: the original sends it as user
			// text.
			addUser(userBlocks(v.Content))
		case *engine.ToolResultMessage:
			id := provider.ToolID(v.ToolCallID)
			if !calls[id] {
				continue
			}
			addUser([]types.ContentBlock{&types.ContentBlockMemberToolResult{Value: toolResult(id, v)}})
		case *engine.AssistantMessage:
			if !replayable(v) {
				continue
			}
			if blocks := assistantBlocks(req.Model, v); len(blocks) > 0 {
				out = append(out, types.Message{Role: types.ConversationRoleAssistant, Content: blocks})
			}
		}
	}
	if cache {
		// The last user turn ends with a cache point, so the next call,
		// which repeats this whole prefix, reads it from the cache.
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].Role == types.ConversationRoleUser {
				out[i].Content = append(out[i].Content, &types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}})
				break
			}
		}
	}
	return out
}

func replayable(a *engine.AssistantMessage) bool {
	return a.StopReason != engine.StopError && a.StopReason != engine.StopAborted
}

// userBlocks converts text and image blocks. Blank text is dropped: the
// API rejects it.
func userBlocks(content []engine.ContentBlock) []types.ContentBlock {
	var out []types.ContentBlock
	for _, b := range content {
		switch b.Type {
		case engine.BlockText:
			if strings.TrimSpace(b.Text) != "" {
				out = append(out, &types.ContentBlockMemberText{Value: b.Text})
			}
		case engine.BlockImage:
			if img, ok := imageBlock(b); ok {
				out = append(out, &types.ContentBlockMemberImage{Value: img})
			}
		}
	}
	return out
}

// imageBlock is an image as bytes of one of the four formats Converse
// takes; false for another type or data that is not base64.
func imageBlock(b engine.ContentBlock) (types.ImageBlock, bool) {
	var f types.ImageFormat
	switch strings.ToLower(b.MimeType) {
	case "image/png":
		f = types.ImageFormatPng
	case "image/jpeg", "image/jpg":
		f = types.ImageFormatJpeg
	case "image/gif":
		f = types.ImageFormatGif
	case "image/webp":
		f = types.ImageFormatWebp
	default:
		return types.ImageBlock{}, false
	}
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return types.ImageBlock{}, false
	}
	return types.ImageBlock{Format: f, Source: &types.ImageSourceMemberBytes{Value: data}}, true
}

// toolResult converts a tool's result: its text and images, and its
// status. A result with nothing in it says so, as Converse rejects an
// empty content list.
func toolResult(id string, m *engine.ToolResultMessage) types.ToolResultBlock {
	r := types.ToolResultBlock{ToolUseId: aws.String(id), Status: types.ToolResultStatusSuccess}
	if m.IsError {
		r.Status = types.ToolResultStatusError
	}
	for _, b := range m.Content {
		switch b.Type {
		case engine.BlockText:
			if b.Text != "" {
				r.Content = append(r.Content, &types.ToolResultContentBlockMemberText{Value: b.Text})
			}
		case engine.BlockImage:
			if img, ok := imageBlock(b); ok {
				r.Content = append(r.Content, &types.ToolResultContentBlockMemberImage{Value: img})
			}
		}
	}
	if len(r.Content) == 0 {
		r.Content = []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "(no output)"}}
	}
	return r
}

// assistantBlocks converts a response for replay. Reasoning goes back as
// reasoning when it is this very model's: with its signature for Claude
// (Bedrock verifies it, and rejects the block without one, so unsigned
// thinking goes as text), without one for the other families (which
// reject the field). Another model's thinking is text, so the model still
// sees it; its redacted reasoning cannot be read and is dropped.
func assistantBlocks(model engine.Model, a *engine.AssistantMessage) []types.ContentBlock {
	same := a.API == model.API && a.Provider == model.Provider && a.Model == model.ID
	claude := isClaude(model.ID)
	var out []types.ContentBlock
	for _, b := range a.Content {
		switch b.Type {
		case engine.BlockText:
			if strings.TrimSpace(b.Text) != "" {
				out = append(out, &types.ContentBlockMemberText{Value: b.Text})
			}
		case engine.BlockThinking:
			if strings.TrimSpace(b.Thinking) == "" {
				continue
			}
			switch {
			case same && claude && b.ThinkingSignature != "":
				out = append(out, reasoning(types.ReasoningTextBlock{Text: aws.String(b.Thinking), Signature: aws.String(b.ThinkingSignature)}))
			case same && !claude:
				out = append(out, reasoning(types.ReasoningTextBlock{Text: aws.String(b.Thinking)}))
			default:
				out = append(out, &types.ContentBlockMemberText{Value: b.Thinking})
			}
		case engine.BlockRedactedThinking:
			if !same {
				continue
			}
			if data, err := base64.StdEncoding.DecodeString(b.Data); err == nil {
				out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: data}})
			}
		case engine.BlockToolCall:
			out = append(out, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String(provider.ToolID(b.ID)),
				Name:      aws.String(b.Name),
				Input:     jsonDocument(b.Arguments, "{}"),
			}})
		}
	}
	return out
}

func reasoning(t types.ReasoningTextBlock) types.ContentBlock {
	return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: t}}
}
