package otel

import (
	"encoding/json"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// The content attributes (gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions) are JSON strings shaped as the GenAI
// conventions' message schema: a role and its parts. They are made only
// under Options.Content.

type chatMessage struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
	MimeType  string          `json:"mime_type,omitempty"`
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// textMessages is one message of role with one text part.
func textMessages(role, text string) string {
	return marshal([]chatMessage{{Role: role, Parts: []part{{Type: "text", Content: text}}}})
}

// textParts is the parts of a system prompt.
func textParts(text string) string {
	return marshal([]part{{Type: "text", Content: text}})
}

// parts converts content blocks; images are named by type, not carried.
func parts(blocks []engine.ContentBlock) []part {
	out := make([]part, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case engine.BlockText:
			out = append(out, part{Type: "text", Content: b.Text})
		case engine.BlockThinking:
			out = append(out, part{Type: "reasoning", Content: b.Thinking})
		case engine.BlockToolCall:
			args := json.RawMessage(b.Arguments)
			if !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			out = append(out, part{Type: "tool_call", ID: b.ID, Name: b.Name, Arguments: args})
		case engine.BlockImage:
			out = append(out, part{Type: "blob", MimeType: b.MimeType})
		}
	}
	return out
}

// inputMessages is a request's context in the conventions' shape.
func inputMessages(msgs []engine.Message) string {
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		switch m := m.(type) {
		case *engine.UserMessage:
			out = append(out, chatMessage{Role: "user", Parts: parts(m.Content)})
		case *engine.AssistantMessage:
			out = append(out, chatMessage{Role: "assistant", Parts: parts(m.Content)})
		case *engine.ToolResultMessage:
			out = append(out, chatMessage{Role: "tool", Parts: []part{{Type: "tool_call_response", ID: m.ToolCallID, Response: blocksText(m.Content)}}})
		}
	}
	return marshal(out)
}

// outputMessages is an answer in the conventions' shape.
func outputMessages(m *engine.AssistantMessage) string {
	return marshal([]chatMessage{{Role: "assistant", Parts: parts(m.Content), FinishReason: finishReason(m.StopReason)}})
}

// resultText is a tool result's text.
func resultText(r *engine.ToolResult) string { return blocksText(r.Content) }

func blocksText(blocks []engine.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Type == engine.BlockText {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}
