package ollama

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
)

// buildRequest converts an engine request into Ollama's chat request.
func buildRequest(req *engine.Request) (*api.ChatRequest, error) {
	msgs := make([]api.Message, 0, len(req.Messages)+1)
	if req.SystemPrompt != "" {
		msgs = append(msgs, api.Message{Role: "system", Content: req.SystemPrompt})
	}
	for _, m := range req.Messages {
		am, ok, err := convertMessage(m)
		if err != nil {
			return nil, err
		}
		if ok {
			msgs = append(msgs, am)
		}
	}
	tools, err := convertTools(req.Tools)
	if err != nil {
		return nil, err
	}
	// truncate false: a prompt that does not fit num_ctx is refused (400
	// "the input length exceeds the context length"), which the engine
	// recovers from by compacting, instead of cut from the front without
	// a word. A server too old for the flag ignores it; the silent
	// truncation warning still covers that case.
	stream, truncate := true, false
	out := &api.ChatRequest{
		Model:    req.Model.ID,
		Messages: msgs,
		Stream:   &stream,
		Truncate: &truncate,
		Tools:    tools,
		Think:    think(req.Model, req.ThinkingLevel),
		Options:  map[string]any{},
	}
	if n := req.Model.ContextWindow; n > 0 {
		out.Options["num_ctx"] = n
	}
	if n := req.Model.MaxTokens; n > 0 {
		out.Options["num_predict"] = n
	}
	// An output schema is Ollama's format, on a request that offers no
	// tools: with format set, Ollama's grammar holds every reply to the
	// schema and no tool call comes back (ollama/ollama#8095, #13750), so a
	// run that may call tools gets the schema in its system prompt only and
	// the engine checks the answer.
	if o := req.Output; o != nil && len(tools) == 0 {
		out.Format = json.RawMessage(o.Schema)
	}
	return out, nil
}

// convertMessage converts one LLM message; ok is false for a message with
// nothing Ollama can take (a role this adapter does not know).
func convertMessage(m engine.Message) (api.Message, bool, error) {
	switch v := m.(type) {
	case *engine.UserMessage:
		am, err := userLike("user", v.Content)
		return am, err == nil, err
	case *engine.DeveloperMessage:
		// Ollama has no developer role; the engine's contract is that such
		// providers see it as a user message.
		am, err := userLike("user", v.Content)
		return am, err == nil, err
	case *engine.AssistantMessage:
		am, err := assistant(v)
		return am, err == nil, err
	case *engine.ToolResultMessage:
		am, err := userLike("tool", v.Content)
		am.ToolName = v.ToolName
		am.ToolCallID = v.ToolCallID
		return am, err == nil, err
	}
	// Custom roles are converted by the engine before a provider sees them
	// (engine.ConvertToLLM); one that is left has no meaning for the model.
	return api.Message{}, false, nil
}

// userLike converts text and image blocks; images travel as raw bytes
// (the api encodes them as base64 again on the wire). Ollama's content is
// one string, so several text blocks (the engine merges consecutive user
// messages into one) are joined by newlines to keep them apart.
func userLike(role string, blocks []engine.ContentBlock) (api.Message, error) {
	am := api.Message{Role: role}
	var text strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case engine.BlockText:
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(b.Text)
		case engine.BlockImage:
			img, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil {
				return am, fmt.Errorf("image block (%s): %w", b.MimeType, err)
			}
			am.Images = append(am.Images, api.ImageData(img))
		}
	}
	am.Content = text.String()
	return am, nil
}

func assistant(m *engine.AssistantMessage) (api.Message, error) {
	am := api.Message{Role: "assistant"}
	var text, thinking strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case engine.BlockText:
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(b.Text)
		case engine.BlockThinking:
			if thinking.Len() > 0 {
				thinking.WriteByte('\n')
			}
			thinking.WriteString(b.Thinking)
		case engine.BlockToolCall:
			args := api.NewToolCallFunctionArguments()
			if len(b.Arguments) > 0 {
				if err := json.Unmarshal(b.Arguments, &args); err != nil {
					return am, fmt.Errorf("tool call %s (%s) arguments: %w", b.ID, b.Name, err)
				}
			}
			am.ToolCalls = append(am.ToolCalls, api.ToolCall{
				ID: b.ID,
				Function: api.ToolCallFunction{
					Index:     len(am.ToolCalls),
					Name:      b.Name,
					Arguments: args,
				},
			})
		}
	}
	am.Content = text.String()
	am.Thinking = thinking.String()
	return am, nil
}

// convertTools decodes each tool's JSON Schema into the api's parameter
// types. What those types have no field for is dropped (see the package
// doc: Ollama's server would drop it too).
func convertTools(specs []engine.ToolSpec) (api.Tools, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	tools := make(api.Tools, 0, len(specs))
	for _, s := range specs {
		var params api.ToolFunctionParameters
		if len(bytes.TrimSpace(s.Parameters)) > 0 {
			if err := json.Unmarshal(s.Parameters, &params); err != nil {
				return nil, fmt.Errorf("tool %s: parameters schema: %w", s.Name, err)
			}
		}
		if params.Type == "" {
			params.Type = "object"
		}
		if params.Properties == nil {
			// The api encodes a nil map as null, which some templates render
			// badly; an object tool with no parameters has {}.
			params.Properties = api.NewToolPropertiesMap()
		}
		tools = append(tools, api.Tool{
			Type: "function",
			Function: api.ToolFunction{
				Name:        s.Name,
				Description: s.Description,
				Parameters:  params,
			},
		})
	}
	return tools, nil
}

// think maps the session's level onto Ollama's think field (see the
// package doc for why each case is what it is).
func think(m engine.Model, l engine.ThinkingLevel) *api.ThinkValue {
	if !m.Reasoning {
		return nil
	}
	if l == "" || l == engine.ThinkingOff {
		return &api.ThinkValue{Value: false}
	}
	if !takesLevels(m) {
		return &api.ThinkValue{Value: true}
	}
	switch l {
	case engine.ThinkingMinimal, engine.ThinkingLow:
		return &api.ThinkValue{Value: "low"}
	case engine.ThinkingMedium:
		return &api.ThinkValue{Value: "medium"}
	default:
		return &api.ThinkValue{Value: "high"}
	}
}

// takesLevels reports whether the model's think field takes a level
// rather than a boolean: Compat's thinkLevels when set, else whether the
// id names gpt-oss (the family Ollama renders with its harmony parser).
// offersTools reports whether m can be offered tools: Compat "tools":
// false (discovery sets it for a model whose capabilities lack "tools")
// says it cannot.
func offersTools(m engine.Model) bool {
	if len(m.Compat) > 0 {
		var c struct {
			Tools *bool `json:"tools"`
		}
		if json.Unmarshal(m.Compat, &c) == nil && c.Tools != nil {
			return *c.Tools
		}
	}
	return true
}

func takesLevels(m engine.Model) bool {
	if len(m.Compat) > 0 {
		var c struct {
			ThinkLevels *bool `json:"thinkLevels"`
		}
		if json.Unmarshal(m.Compat, &c) == nil && c.ThinkLevels != nil {
			return *c.ThinkLevels
		}
	}
	return strings.Contains(strings.ToLower(m.ID), "gpt-oss")
}

// countToolCalls counts the tool calls already in the conversation, so the
// ids minted for this response continue the sequence.
func countToolCalls(msgs []engine.Message) int {
	n := 0
	for _, m := range msgs {
		if a, ok := m.(*engine.AssistantMessage); ok {
			for _, b := range a.Content {
				if b.Type == engine.BlockToolCall {
					n++
				}
			}
		}
	}
	return n
}

// compactArgs encodes a tool call's arguments as compact JSON in the order
// the model wrote them, without the HTML escaping of encoding/json's
// default (the engine's wire never escapes <, > and &). Nested objects come
// out with sorted keys: the api decodes them into Go maps.
func compactArgs(args api.ToolCallFunctionArguments) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	out := []byte{'{'}
	first := true
	for k, v := range args.All() {
		if !first {
			out = append(out, ',')
		}
		first = false
		for _, x := range []any{k, v} {
			buf.Reset()
			if err := enc.Encode(x); err != nil {
				return nil, err
			}
			out = append(out, bytes.TrimRight(buf.Bytes(), "\n")...)
			out = append(out, ':')
		}
		out = out[:len(out)-1]
	}
	return append(out, '}'), nil
}
