package acp

import (
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
)

// replay sends the session's history for session/load: the user's and
// the agent's messages as chunks (thinking as thought chunks), each tool
// call as tool_call and its result as tool_call_update, a compaction's
// summary as an agent message, then the plan. A message being streamed
// is sent as it stands; its stream goes on after. (actor)
func (ss *session) replay() {
	for _, m := range ss.eng.Messages() {
		switch v := m.(type) {
		case *engine.UserMessage:
			id := ss.newMessageID()
			for _, b := range v.Content {
				switch b.Type {
				case engine.BlockText:
					ss.chunk(updateUserMessage, b.Text, id)
				case engine.BlockImage:
					ss.update(chunkUpdate{SessionUpdate: updateUserMessage, Content: imageBlock{Type: "image", Data: b.Data, MimeType: b.MimeType}, MessageID: id})
				}
			}
		case *engine.AssistantMessage:
			id := ss.msgID
			if v.StopReason != "" || id == "" {
				// A finished message; only the one being streamed (no
				// stop reason yet) keeps the id its live chunks carry.
				id = ss.newMessageID()
			}
			for _, b := range v.Content {
				switch b.Type {
				case engine.BlockThinking:
					ss.chunk(updateAgentThought, b.Thinking, id)
				case engine.BlockText:
					ss.chunk(updateAgentMessage, b.Text, id)
				case engine.BlockToolCall:
					ss.update(toolCallUpdate{SessionUpdate: updateToolCall, ToolCallID: b.ID, Title: toolTitle(b.Name, b.Arguments),
						Kind: toolKind(b.Name), Status: string(sdk.ToolCallStatusPending), RawInput: rawArgs(b.Arguments),
						Locations: toolLocations(ss.cwd, b.Name, b.Arguments)})
				}
			}
		case *engine.ToolResultMessage:
			status := sdk.ToolCallStatusCompleted
			if v.IsError {
				status = sdk.ToolCallStatusFailed
			}
			raw := resultObject(v)
			ss.update(toolCallUpdate{SessionUpdate: updateToolCallUpd, ToolCallID: v.ToolCallID, Status: string(status),
				Content: resultContent(raw), RawOutput: raw})
		case *engine.CompactionSummaryMessage:
			ss.chunk(updateAgentMessage, "The conversation before this point was compacted. Summary:\n\n"+v.Summary, ss.newMessageID())
		}
	}
	if len(ss.eng.Todos()) > 0 {
		ss.sendPlan()
	}
}

// resultObject is a tool result message as tool_execution_end's result:
// {content, details}.
func resultObject(m *engine.ToolResultMessage) json.RawMessage {
	b := []byte(`{"content":[`)
	for i := range m.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = m.Content[i].AppendJSON(b)
	}
	b = append(b, `],"details":`...)
	b = append(b, orEmpty(m.Details)...)
	return append(b, '}')
}
