package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// maxTokensCap is the ceiling on max_tokens without thinking, as the
// original sends min(model.maxTokens, 32000) (agent-core.md §9.4): a larger
// value only makes the API hold more capacity for a reply that is rarely
// that long. A model whose MaxTokens is unknown (0) gets the cap too: every
// Claude model from the 4 family on accepts 32000 output tokens.
const maxTokensCap = 32000

// minThinkingBudget is the API's smallest budget_tokens, and also the room
// left for the visible answer when the budget has to shrink to fit.
const minThinkingBudget = 1024

// thinkingBudgets are the default thinkingBudgets settings group, which the
// original always passes and which takes precedence over the adapter's
// built-in table (1024/4096/8192/16384/32768), so the built-in table is
// never used. engine.Request carries no settings, so a user's own
// thinkingBudgets are not honoured yet.
var thinkingBudgets = map[engine.ThinkingLevel]int64{
	engine.ThinkingMinimal: 1024,
	engine.ThinkingLow:     2048,
	engine.ThinkingMedium:  8192,
	engine.ThinkingHigh:    16384,
	engine.ThinkingXHigh:   32768,
}

// adaptiveEfforts maps a level onto output_config.effort for models in the
// anthropic-adaptive mode (Claude ≥ 4.6), as §9.4 does: there is no
// "minimal", and xhigh asks for the most the model has.
var adaptiveEfforts = map[engine.ThinkingLevel]sdk.OutputConfigEffort{
	engine.ThinkingMinimal: sdk.OutputConfigEffortLow,
	engine.ThinkingLow:     sdk.OutputConfigEffortLow,
	engine.ThinkingMedium:  sdk.OutputConfigEffortMedium,
	engine.ThinkingHigh:    sdk.OutputConfigEffortHigh,
	engine.ThinkingXHigh:   sdk.OutputConfigEffortMax,
}

// adaptiveMode is the Model.Thinking.Mode of models that take an effort
// instead of a token budget.
const adaptiveMode = "anthropic-adaptive"

// betaInterleavedThinking lets a budget-thinking model think between tool
// calls; the original turns it on by default.
const betaInterleavedThinking = "interleaved-thinking-2025-05-14"

// thinkingPlan is the thinking part of a request: what goes into the body
// and whether the interleaved-thinking beta header is needed.
type thinkingPlan struct {
	maxTokens   int64
	budget      int64                  // > 0: thinking {type: enabled, budget_tokens}
	effort      sdk.OutputConfigEffort // != "": thinking {type: adaptive} and output_config.effort
	interleaved bool
}

// planThinking chooses max_tokens and the thinking parameters.
//
// With a budget, max_tokens must exceed budget_tokens, so the budget is
// added on top of the usual output room, up to what the model can produce,
// and the budget shrinks to leave 1024 tokens of answer when the model
// cannot fit both (the original's non-interleaved rule). The original skips
// this adjustment when interleaved thinking is on, because the beta lets the
// budget exceed max_tokens; doing it always keeps every request valid
// whether or not a gateway forwards the beta header.
func planThinking(m engine.Model, level engine.ThinkingLevel) thinkingPlan {
	base := int64(maxTokensCap)
	if m.MaxTokens > 0 && int64(m.MaxTokens) < base {
		base = int64(m.MaxTokens)
	}
	p := thinkingPlan{maxTokens: base}
	if !m.Reasoning || level == "" || level == engine.ThinkingOff {
		return p
	}
	if m.Thinking != nil && m.Thinking.Mode == adaptiveMode {
		if e, ok := adaptiveEfforts[level]; ok {
			p.effort = e
		}
		return p
	}
	budget, ok := thinkingBudgets[level]
	if !ok {
		return p
	}
	limit := int64(m.MaxTokens)
	if limit <= 0 {
		// An unknown output limit: allow the budget on top of the cap
		// rather than starve the answer.
		limit = base + budget
	}
	p.maxTokens = min(base+budget, limit)
	if budget > p.maxTokens-minThinkingBudget {
		budget = p.maxTokens - minThinkingBudget
	}
	if budget < minThinkingBudget {
		// No room for the API's smallest budget: answer without thinking.
		p.maxTokens = base
		return p
	}
	p.budget = budget
	p.interleaved = true
	return p
}

// buildParams converts an engine request into the Messages API body.
func buildParams(req *engine.Request) (sdk.MessageNewParams, thinkingPlan) {
	plan := planThinking(req.Model, req.ThinkingLevel)
	params := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model.ID),
		MaxTokens: plan.maxTokens,
		Messages:  convertMessages(req),
	}
	if req.SystemPrompt != "" {
		params.System = []sdk.TextBlockParam{{
			Text: req.SystemPrompt,
			// The system prompt is the stable prefix of every call: caching
			// it is the cheapest way to make cache reads happen at all.
			CacheControl: sdk.NewCacheControlEphemeralParam(),
		}}
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: convertTool(t)})
	}
	switch {
	case plan.budget > 0:
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(plan.budget)
	case plan.effort != "":
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
		params.OutputConfig = sdk.OutputConfigParam{Effort: plan.effort}
	}
	return params, plan
}

func convertTool(t engine.ToolSpec) *sdk.ToolParam {
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 || !json.Valid(schema) {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	tool := &sdk.ToolParam{
		Name: t.Name,
		// The schema goes out byte for byte: the SDK's typed schema would
		// drop keywords it does not model.
		InputSchema: param.Override[sdk.ToolInputSchemaParam](json.RawMessage(schema)),
	}
	if t.Description != "" {
		tool.Description = sdk.String(t.Description)
	}
	return tool
}

// convertMessages turns the LLM context into Messages API turns.
//
// Assistant messages that ended in error or were aborted are left out (as
// the original's transformMessages does): their blocks may be partial, a
// thinking block without its signature or a tool call with half its
// arguments, which the API rejects. Tool results whose call was left out
// with them go too, since a tool_result must answer a tool_use of the turn
// before. Consecutive user-role content (tool results, then a steering
// message) is merged into one user turn.
func convertMessages(req *engine.Request) []sdk.MessageParam {
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

	var out []sdk.MessageParam
	addUser := func(blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].OfUser != nil {
			out[n-1].OfUser.Content = append(out[n-1].OfUser.Content, blocks...)
			return
		}
		out = append(out, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: blocks}})
	}
	for _, m := range req.Messages {
		switch v := m.(type) {
		case *engine.UserMessage:
			addUser(userBlocks(v.Content))
		case *engine.DeveloperMessage:
			// No developer role in this API: the original sends it as user text.
			addUser(userBlocks(v.Content))
		case *engine.ToolResultMessage:
			id := provider.ToolID(v.ToolCallID)
			if !calls[id] {
				continue
			}
			addUser([]sdk.ContentBlockParamUnion{{OfToolResult: toolResult(id, v)}})
		case *engine.AssistantMessage:
			if !replayable(v) {
				continue
			}
			if blocks := assistantBlocks(req.Model, v); len(blocks) > 0 {
				out = append(out, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: blocks}})
			}
		}
	}
	markCacheBreakpoint(out)
	return out
}

func replayable(a *engine.AssistantMessage) bool {
	return a.StopReason != engine.StopError && a.StopReason != engine.StopAborted
}

// markCacheBreakpoint puts cache_control on the last block of the last user
// turn, so the next call (which repeats this whole prefix) reads it from
// the cache. Two breakpoints in all (with the system prompt), well under
// the API's limit of four.
func markCacheBreakpoint(msgs []sdk.MessageParam) {
	for i := len(msgs) - 1; i >= 0; i-- {
		u := msgs[i].OfUser
		if u == nil {
			continue
		}
		last := &u.Content[len(u.Content)-1]
		cc := sdk.NewCacheControlEphemeralParam()
		switch {
		case last.OfText != nil:
			last.OfText.CacheControl = cc
		case last.OfImage != nil:
			last.OfImage.CacheControl = cc
		case last.OfToolResult != nil:
			last.OfToolResult.CacheControl = cc
		}
		return
	}
}

// userBlocks converts text and image blocks. Empty text is dropped: the API
// rejects empty text blocks.
func userBlocks(content []engine.ContentBlock) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, b := range content {
		switch b.Type {
		case engine.BlockText:
			if strings.TrimSpace(b.Text) != "" {
				out = append(out, sdk.NewTextBlock(b.Text))
			}
		case engine.BlockImage:
			out = append(out, sdk.NewImageBlockBase64(b.MimeType, b.Data))
		}
	}
	return out
}

func toolResult(id string, m *engine.ToolResultMessage) *sdk.ToolResultBlockParam {
	r := &sdk.ToolResultBlockParam{ToolUseID: id}
	if m.IsError {
		r.IsError = sdk.Bool(true)
	}
	for _, b := range m.Content {
		switch b.Type {
		case engine.BlockText:
			if b.Text != "" {
				r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: b.Text}})
			}
		case engine.BlockImage:
			img := sdk.NewImageBlockBase64(b.MimeType, b.Data).OfImage
			r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img})
		}
	}
	return r
}

// assistantBlocks converts a response for replay. Thinking goes back as
// thinking only when it carries a signature made by this very model: the
// API verifies signatures, and one from another model or provider (or none,
// after an abort) would fail the request. Such thinking is kept as text so
// the model still sees it; redacted thinking from elsewhere cannot be read
// and is dropped.
func assistantBlocks(model engine.Model, a *engine.AssistantMessage) []sdk.ContentBlockParamUnion {
	same := a.API == model.API && a.Provider == model.Provider && a.Model == model.ID
	var out []sdk.ContentBlockParamUnion
	for _, b := range a.Content {
		switch b.Type {
		case engine.BlockText:
			if strings.TrimSpace(b.Text) != "" {
				out = append(out, sdk.NewTextBlock(b.Text))
			}
		case engine.BlockThinking:
			switch {
			case same && b.ThinkingSignature != "":
				out = append(out, sdk.NewThinkingBlock(b.ThinkingSignature, b.Thinking))
			case strings.TrimSpace(b.Thinking) != "":
				out = append(out, sdk.NewTextBlock(b.Thinking))
			}
		case engine.BlockRedactedThinking:
			if same {
				out = append(out, sdk.NewRedactedThinkingBlock(b.Data))
			}
		case engine.BlockToolCall:
			args := bytes.TrimSpace(b.Arguments)
			if len(args) == 0 || !json.Valid(args) {
				args = []byte("{}")
			}
			out = append(out, sdk.NewToolUseBlock(provider.ToolID(b.ID), json.RawMessage(args), b.Name))
		}
	}
	return out
}
