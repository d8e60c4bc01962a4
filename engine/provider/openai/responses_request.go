package openai

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/xcsh-go/xcsh/engine"
)

// flavor is which of the three Responses APIs a model names. They share
// the wire; the differences are the original's (pi's openai-responses.ts,
// azure-openai-responses.ts, openai-codex-responses.ts).
type flavor uint8

const (
	flavorOpenAI flavor = iota // openai-responses: POST <baseUrl>/responses, Bearer key
	flavorAzure                // azure-openai-responses: api-key header, ?api-version=
	flavorCodex                // openai-codex-responses: ChatGPT's backend, an access token
)

func flavorOf(api string) flavor {
	switch api {
	case "azure-openai-responses":
		return flavorAzure
	case "openai-codex-responses":
		return flavorCodex
	}
	return flavorOpenAI
}

// juice is the developer message the original appends for a GPT-5 model
// asked for no reasoning: the API has no "off" for these models, and this
// line is what turns their reasoning down.
const juice = "# Juice: 0 !important"

// buildResponsesParams converts an engine request to the Responses body.
//
// Every flavor sends "store": false, so nothing is kept on the server, and
// asks for the reasoning items' encrypted content from reasoning models,
// so that the next turn sends the model's reasoning back whole (the
// thinking block's signature, see convertInput). The original asks for it
// only with an effort; asked always, a reasoning item from a turn with
// thinking off can still go back.
func buildResponsesParams(req *engine.Request, fl flavor) responses.ResponseNewParams {
	m := &req.Model
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(m.ID),
		Store: param.NewOpt(false),
	}
	input := convertInput(req, fl)
	level := req.ThinkingLevel
	if level == engine.ThinkingOff {
		level = ""
	}
	if level != "" {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(level), Summary: shared.ReasoningSummaryAuto}
	}
	if m.Reasoning || fl == flavorCodex {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if fl == flavorCodex {
		// ChatGPT's backend takes the system prompt as instructions, no
		// output limit, and the Codex CLI's text and tool settings.
		if req.SystemPrompt != "" {
			p.Instructions = param.NewOpt(req.SystemPrompt)
		}
		p.Text = responses.ResponseTextConfigParam{Verbosity: responses.ResponseTextConfigVerbosityMedium}
		p.ToolChoice.OfToolChoiceMode = param.NewOpt(responses.ToolChoiceOptionsAuto)
		p.ParallelToolCalls = param.NewOpt(true)
	} else {
		if m.MaxTokens > 0 {
			p.MaxOutputTokens = param.NewOpt(int64(min(m.MaxTokens, maxTokensCap)))
		}
		if m.Reasoning && level == "" && strings.HasPrefix(strings.ToLower(m.Name), "gpt-5") {
			input = append(input, inputMessage("developer", juice))
		}
	}
	p.Input.OfInputItemList = input
	responsesTextFormat(req, &p) // structured.go
	for _, t := range req.Tools {
		ft := responses.FunctionToolParam{Name: t.Name, Strict: param.NewOpt(false)}
		if fl == flavorCodex {
			ft.Strict = param.Null[bool]()
		}
		if t.Description != "" {
			ft.Description = param.NewOpt(t.Description)
		}
		params := json.RawMessage(t.Parameters)
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		// The schema goes out byte for byte: Parameters is a map, which
		// would reorder its keys.
		ft.SetExtraFields(map[string]any{"parameters": params})
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &ft})
	}
	return p
}

func inputMessage(role, text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role: responses.EasyInputMessageRole(role),
		Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: responses.ResponseInputMessageContentListParam{
			{OfInputText: &responses.ResponseInputTextParam{Text: text}},
		}},
	}}
}

// convertInput builds the input items: the system prompt (not for Codex,
// which takes it as instructions), then the context, as the original's
// convertResponsesMessages does. Errored and aborted assistant messages
// are left out with their tool results, and a function call with no
// output gets a placeholder one before the next message, because the API
// rejects a call that is not answered.
//
// What a model said comes back as it was said when the message is the
// same model's (same provider, API and id): a thinking block's signature
// is its reasoning item, replayed verbatim; a text block's is its message
// item id; a tool call's id carries its item id. Another model's message
// is plain content: thinking becomes assistant text, and ids that only
// mean something to the model that made them are dropped.
func convertInput(req *engine.Request, fl flavor) responses.ResponseInputParam {
	m := &req.Model
	images := acceptsImages(m)
	out := make(responses.ResponseInputParam, 0, len(req.Messages)+1)
	if req.SystemPrompt != "" && fl != flavorCodex {
		role := "system"
		if m.Reasoning {
			role = "developer"
		}
		out = append(out, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role: responses.EasyInputMessageRole(role), Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(req.SystemPrompt)},
		}})
	}
	var (
		skipped    map[string]bool // tool call ids of left-out assistant messages
		unanswered []string        // call ids of the last assistant message without an output yet
	)
	closeCalls := func() {
		for _, id := range unanswered {
			out = append(out, callOutput(id, responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(missingToolResult)}))
		}
		unanswered = unanswered[:0]
	}
	for _, msg := range req.Messages {
		switch v := msg.(type) {
		case *engine.UserMessage:
			closeCalls()
			if c, ok := inputContent(v.Content, images); ok {
				out = append(out, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
					Role: responses.EasyInputMessageRoleUser, Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: c},
				}})
			}
		case *engine.DeveloperMessage:
			closeCalls()
			if c, ok := inputContent(v.Content, images); ok {
				out = append(out, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
					Role: responses.EasyInputMessageRoleDeveloper, Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: c},
				}})
			}
		case *engine.AssistantMessage:
			closeCalls()
			if v.StopReason == engine.StopError || v.StopReason == engine.StopAborted {
				for _, b := range v.Content {
					if b.Type == engine.BlockToolCall {
						if skipped == nil {
							skipped = map[string]bool{}
						}
						skipped[b.ID] = true
					}
				}
				continue
			}
			same := v.Provider == m.Provider && v.API == m.API && v.Model == m.ID
			for _, b := range v.Content {
				item, ok := outputItem(b, same)
				if !ok {
					continue
				}
				out = append(out, item)
				if b.Type == engine.BlockToolCall {
					unanswered = append(unanswered, b.ID)
				}
			}
		case *engine.ToolResultMessage:
			if skipped[v.ToolCallID] {
				continue
			}
			for i, id := range unanswered {
				if id == v.ToolCallID {
					unanswered = append(unanswered[:i], unanswered[i+1:]...)
					break
				}
			}
			out = append(out, callOutput(v.ToolCallID, toolOutput(v, images)))
		}
	}
	closeCalls()
	return out
}

// splitToolCallID splits the engine's "<call_id>|<item id>" (toolCallID).
func splitToolCallID(id string) (call, item string) {
	call, item, _ = strings.Cut(id, "|")
	return call, item
}

// callOutput answers the call of the engine's tool call id.
func callOutput(id string, o responses.ResponseInputItemFunctionCallOutputOutputUnionParam) responses.ResponseInputItemUnionParam {
	call, _ := splitToolCallID(id)
	return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
		CallID: param.NewOpt(call), Output: o,
	}}
}

// inputContent converts a user message's blocks; images are dropped for a
// text-only model. It reports false when nothing is left to send.
func inputContent(blocks []engine.ContentBlock, images bool) (responses.ResponseInputMessageContentListParam, bool) {
	var c responses.ResponseInputMessageContentListParam
	for _, b := range blocks {
		switch b.Type {
		case engine.BlockText:
			c = append(c, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: b.Text}})
		case engine.BlockImage:
			if images {
				c = append(c, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
					Detail: responses.ResponseInputImageDetailAuto, ImageURL: param.NewOpt(dataURL(b)),
				}})
			}
		}
	}
	return c, len(c) > 0
}

func dataURL(b engine.ContentBlock) string { return "data:" + b.MimeType + ";base64," + b.Data }

// toolOutput is a tool result: its text, or with images (for a model that
// takes them) a list of its text and images.
func toolOutput(m *engine.ToolResultMessage, images bool) responses.ResponseInputItemFunctionCallOutputOutputUnionParam {
	text := joinText(m.Content, "\n")
	var imgs []engine.ContentBlock
	for _, b := range m.Content {
		if b.Type == engine.BlockImage {
			imgs = append(imgs, b)
		}
	}
	if len(imgs) == 0 || !images {
		if text == "" && len(imgs) > 0 {
			text = imageOnlyToolResult
		}
		return responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(text)}
	}
	var list responses.ResponseFunctionCallOutputItemListParam
	if text != "" {
		list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: text}})
	}
	for _, b := range imgs {
		list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
			Detail: responses.ResponseInputImageContentDetailAuto, ImageURL: param.NewOpt(dataURL(b)),
		}})
	}
	return responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfResponseFunctionCallOutputItemArray: list}
}

// outputItem converts one block of an assistant message; false when the
// block sends nothing.
func outputItem(b engine.ContentBlock, same bool) (responses.ResponseInputItemUnionParam, bool) {
	switch b.Type {
	case engine.BlockThinking:
		if same && b.ThinkingSignature != "" {
			return reasoningItem(b.ThinkingSignature)
		}
		if same || strings.TrimSpace(b.Thinking) == "" {
			// The same model's thinking without its item cannot go back
			// as thinking; another model's goes as text.
			return responses.ResponseInputItemUnionParam{}, false
		}
		return assistantText(b.Thinking, "", ""), true
	case engine.BlockText:
		if b.Text == "" {
			return responses.ResponseInputItemUnionParam{}, false
		}
		if !same {
			return assistantText(b.Text, "", ""), true
		}
		id, phase := parseTextSignature(b.TextSignature)
		return assistantText(b.Text, id, phase), true
	case engine.BlockToolCall:
		call, item := splitToolCallID(b.ID)
		args := string(b.Arguments)
		if args == "" {
			args = "{}"
		}
		fc := &responses.ResponseFunctionToolCallParam{CallID: call, Name: b.Name, Arguments: args}
		if same && item != "" {
			fc.ID = param.NewOpt(item)
		}
		return responses.ResponseInputItemUnionParam{OfFunctionCall: fc}, true
	}
	return responses.ResponseInputItemUnionParam{}, false
}

// reasoningItem replays a reasoning item from a thinking signature: the
// item's JSON as the model gave it. A signature that is not a reasoning
// item (another API's) is dropped, and so is an item without its encrypted
// content: with store false the server has no copy to find it by id.
func reasoningItem(sig string) (responses.ResponseInputItemUnionParam, bool) {
	var probe struct {
		Type             string  `json:"type"`
		EncryptedContent *string `json:"encrypted_content"`
	}
	if json.Unmarshal([]byte(sig), &probe) != nil || probe.Type != "reasoning" || probe.EncryptedContent == nil {
		return responses.ResponseInputItemUnionParam{}, false
	}
	r := param.Override[responses.ResponseReasoningItemParam](json.RawMessage(sig))
	return responses.ResponseInputItemUnionParam{OfReasoning: &r}, true
}

// assistantText is an assistant message: with its message item id (and
// phase) when it is the same model's, else plain (the API then makes it an
// item of its own).
func assistantText(text, id, phase string) responses.ResponseInputItemUnionParam {
	if id == "" {
		return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role: responses.EasyInputMessageRoleAssistant, Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(text)},
		}}
	}
	if len(id) > 64 {
		// The API takes ids of at most 64 characters.
		sum := sha256.Sum256([]byte(id))
		id = "msg_" + hex.EncodeToString(sum[:12])
	}
	return responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
		ID:     id,
		Status: responses.ResponseOutputMessageStatusCompleted,
		Phase:  responses.ResponseOutputMessagePhase(phase),
		Content: []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
			Text: text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{},
		}}},
	}}
}
