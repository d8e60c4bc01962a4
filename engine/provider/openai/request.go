package openai

import (
	"encoding/json"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/xcsh-go/xcsh/engine"
)

// maxTokensCap bounds the max tokens sent when the model allows more, as
// the original does (agent-core.md §9.4).
const maxTokensCap = 32000

// Text that stands in for what the chat-completions API cannot carry.
const (
	imageOnlyToolResult   = "(see attached image)"
	toolImagesIntro       = "Attached image(s) from tool result:"
	missingToolResult     = "No result provided"
	assistantAfterResults = "I have processed the tool results."
)

// buildParams converts an engine request to the SDK's request body.
func buildParams(req *engine.Request, c *compat) sdk.ChatCompletionNewParams {
	m := &req.Model
	p := sdk.ChatCompletionNewParams{
		Model:    shared.ChatModel(m.ID),
		Messages: convertMessages(req, c),
	}
	if c.usageInStreaming() {
		p.StreamOptions.IncludeUsage = param.NewOpt(true)
	}
	if m.MaxTokens > 0 {
		n := int64(min(m.MaxTokens, maxTokensCap))
		if c.MaxTokensField == "max_completion_tokens" {
			p.MaxCompletionTokens = param.NewOpt(n)
		} else {
			p.MaxTokens = param.NewOpt(n)
		}
	}
	if c.SupportsStore {
		p.Store = param.NewOpt(false)
	}
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		if len(t.Parameters) > 0 {
			// The schema goes out byte for byte: FunctionParameters is a map,
			// which would reorder its keys.
			def.SetExtraFields(map[string]any{"parameters": json.RawMessage(t.Parameters)})
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(def))
	}

	chatResponseFormat(req, &p) // structured.go
	extra := map[string]any{}
	thinkingParams(req, c, &p, extra)
	if len(c.OpenRouterRouting) > 0 && string(c.OpenRouterRouting) != "null" {
		// OpenRouter's provider routing object ({only, order}), as configured.
		extra["provider"] = c.OpenRouterRouting
	}
	for k, v := range c.ExtraBody {
		extra[k] = v
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return p
}

// thinkingParams maps the thinking level onto the parameter of the
// configured thinkingFormat (agent-core.md §9.4). Formats the SDK does not
// type go into extra, merged into the body.
func thinkingParams(req *engine.Request, c *compat, p *sdk.ChatCompletionNewParams, extra map[string]any) {
	level := req.ThinkingLevel
	if level == engine.ThinkingOff {
		level = ""
	}
	on := level != ""
	switch c.ThinkingFormat {
	case "zai":
		if on || req.Model.Reasoning {
			t := "disabled"
			if on {
				t = "enabled"
			}
			extra["thinking"] = map[string]string{"type": t}
		}
	case "qwen":
		if on || req.Model.Reasoning {
			extra["enable_thinking"] = on
		}
	case "qwen-chat-template":
		if on || req.Model.Reasoning {
			extra["chat_template_kwargs"] = map[string]bool{"enable_thinking": on}
		}
	case "openrouter":
		if on {
			extra["reasoning"] = map[string]string{"effort": effort(level, c)}
		}
	default: // "openai"
		if on && c.reasoningEffort() {
			p.ReasoningEffort = shared.ReasoningEffort(effort(level, c))
		}
	}
}

// effort is the provider's name for a level: the compat map's, else the
// level itself, with xhigh lowered to high (the chat-completions effort
// enum of most servers stops at high).
func effort(level engine.ThinkingLevel, c *compat) string {
	if e, ok := c.ReasoningEffortMap[string(level)]; ok {
		return e
	}
	if level == engine.ThinkingXHigh {
		return "high"
	}
	return string(level)
}

// convertMessages builds the message list: the system prompt, then the
// context. Errored and aborted assistant messages are left out with their
// tool results (their content may be partial), and a tool call with no
// result gets a placeholder one, because the API rejects a tool call that
// is not answered before the next turn.
func convertMessages(req *engine.Request, c *compat) []sdk.ChatCompletionMessageParamUnion {
	images := acceptsImages(&req.Model)
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.SystemPrompt != "" {
		if c.SupportsDeveloperRole {
			out = append(out, sdk.DeveloperMessage(req.SystemPrompt))
		} else {
			out = append(out, sdk.SystemMessage(req.SystemPrompt))
		}
	}

	var (
		skipped     map[string]bool // tool call ids of left-out assistant messages
		pending     []engine.ContentBlock
		unanswered  []string // tool call ids of the last assistant message without a result yet
		afterResult bool     // the last message sent is a tool result
	)
	// closeTools answers the unanswered calls and sends the images of the
	// tool results just sent, before a message that is not a tool result.
	closeTools := func() {
		for _, id := range unanswered {
			out = append(out, sdk.ToolMessage(missingToolResult, id))
			afterResult = true
		}
		unanswered = unanswered[:0]
		if len(pending) > 0 {
			parts := []sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart(toolImagesIntro)}
			for _, b := range pending {
				parts = append(parts, imagePart(b))
			}
			out = append(out, sdk.UserMessage(parts))
			pending = pending[:0]
			afterResult = false
		}
	}
	for _, msg := range req.Messages {
		switch m := msg.(type) {
		case *engine.UserMessage:
			closeTools()
			if afterResult && c.RequiresAssistantAfterToolResult {
				out = append(out, sdk.AssistantMessage(assistantAfterResults))
			}
			afterResult = false
			if u, ok := userMessage(m.Content, images); ok {
				out = append(out, u)
			}
		case *engine.DeveloperMessage:
			closeTools()
			afterResult = false
			if c.SupportsDeveloperRole {
				out = append(out, sdk.DeveloperMessage(joinText(m.Content, "\n")))
			} else if u, ok := userMessage(m.Content, images); ok {
				out = append(out, u)
			}
		case *engine.AssistantMessage:
			closeTools()
			afterResult = false
			if m.StopReason == engine.StopError || m.StopReason == engine.StopAborted {
				for _, b := range m.Content {
					if b.Type == engine.BlockToolCall {
						if skipped == nil {
							skipped = map[string]bool{}
						}
						skipped[b.ID] = true
					}
				}
				continue
			}
			if a, ok := assistantMessage(m, c); ok {
				out = append(out, a)
				for _, b := range m.Content {
					if b.Type == engine.BlockToolCall {
						unanswered = append(unanswered, b.ID)
					}
				}
			}
		case *engine.ToolResultMessage:
			if skipped[m.ToolCallID] {
				continue
			}
			for i, id := range unanswered {
				if id == m.ToolCallID {
					unanswered = append(unanswered[:i], unanswered[i+1:]...)
					break
				}
			}
			out = append(out, toolMessage(m, c))
			afterResult = true
			if images {
				for _, b := range m.Content {
					if b.Type == engine.BlockImage {
						pending = append(pending, b)
					}
				}
			}
		}
	}
	closeTools()
	return out
}

func acceptsImages(m *engine.Model) bool {
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}

// userMessage sends one text block as a string (what most servers expect)
// and anything else as parts; images are dropped for text-only models. It
// reports false when nothing is left to send.
func userMessage(blocks []engine.ContentBlock, images bool) (sdk.ChatCompletionMessageParamUnion, bool) {
	if len(blocks) == 1 && blocks[0].Type == engine.BlockText {
		return sdk.UserMessage(blocks[0].Text), true
	}
	var parts []sdk.ChatCompletionContentPartUnionParam
	for _, b := range blocks {
		switch b.Type {
		case engine.BlockText:
			parts = append(parts, sdk.TextContentPart(b.Text))
		case engine.BlockImage:
			if images {
				parts = append(parts, imagePart(b))
			}
		}
	}
	if len(parts) == 0 {
		return sdk.ChatCompletionMessageParamUnion{}, false
	}
	return sdk.UserMessage(parts), true
}

func imagePart(b engine.ContentBlock) sdk.ChatCompletionContentPartUnionParam {
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
		URL: "data:" + b.MimeType + ";base64," + b.Data,
	})
}

// assistantMessage replays a model response: its text, its tool calls with
// their raw arguments, and its thinking either as leading text (compat
// requiresThinkingAsText) or, when the stream told which field it came in
// (the block's signature, see stream.go), in that field again, as
// llama.cpp and DeepSeek-style servers expect. It reports false for an
// empty message, which the API rejects.
func assistantMessage(m *engine.AssistantMessage, c *compat) (sdk.ChatCompletionMessageParamUnion, bool) {
	var a sdk.ChatCompletionAssistantMessageParam
	text := joinText(m.Content, "")
	var thinking []string
	var field string
	for _, b := range m.Content {
		switch b.Type {
		case engine.BlockThinking:
			if strings.TrimSpace(b.Thinking) == "" {
				continue
			}
			thinking = append(thinking, b.Thinking)
			if field == "" {
				field = b.ThinkingSignature
			}
		case engine.BlockToolCall:
			args := string(b.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args},
				},
			})
		}
	}
	if len(thinking) > 0 {
		if c.RequiresThinkingAsText {
			// Plain text, no tags: tagged thinking teaches models to mimic the tags.
			t := strings.Join(thinking, "\n\n")
			if text != "" {
				t += "\n\n" + text
			}
			text = t
		} else if validField(field, c) {
			a.SetExtraFields(map[string]any{field: strings.Join(thinking, "\n")})
		}
	}
	if text != "" {
		a.Content.OfString = param.NewOpt(text)
	}
	if text == "" && len(a.ToolCalls) == 0 {
		return sdk.ChatCompletionMessageParamUnion{}, false
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

// validField accepts only the reasoning fields this adapter reads, so a
// signature written by another API never becomes a body key.
func validField(f string, c *compat) bool {
	if f == "" {
		return false
	}
	if c.ReasoningContentField != "" {
		return f == c.ReasoningContentField
	}
	for _, d := range defaultReasoningFields {
		if f == d {
			return true
		}
	}
	return false
}

// toolMessage sends a tool result's text; its images follow in a user
// message (the tool role carries text only).
func toolMessage(m *engine.ToolResultMessage, c *compat) sdk.ChatCompletionMessageParamUnion {
	text := joinText(m.Content, "\n")
	if text == "" {
		for _, b := range m.Content {
			if b.Type == engine.BlockImage {
				text = imageOnlyToolResult
				break
			}
		}
	}
	msg := sdk.ToolMessage(text, m.ToolCallID)
	if c.RequiresToolResultName && m.ToolName != "" {
		msg.OfTool.SetExtraFields(map[string]any{"name": m.ToolName})
	}
	return msg
}

func joinText(blocks []engine.ContentBlock, sep string) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == engine.BlockText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}
