package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// openBlock is one content block between its start and stop: its type as
// the API names it (text, thinking, redacted_thinking, tool_use; the types
// the engine has none for, such as server tools, are skipped) and, for a
// tool_use, its arguments. The provider.StreamWriter keeps everything else
// (the open block, the thinking signature).
type openBlock struct {
	typ     string
	args    bytes.Buffer
	initial string // the input object of a tool_use start, used when no delta follows
}

// streamer turns SSE events into engine stream events through an
// provider.StreamWriter. It lives for one Stream call on its goroutine.
type streamer struct {
	w          *provider.StreamWriter
	blocks     map[int64]*openBlock
	usage      engine.Usage
	stopReason sdk.StopReason
	responseID string
}

// handle processes one event; done is true after message_stop.
func (s *streamer) handle(ev sdk.MessageStreamEventUnion) (done bool, err error) {
	switch ev.Type {
	case "message_start":
		m := ev.Message
		s.responseID = m.ID
		s.w.ResponseID(m.ID)
		s.usage.Input = m.Usage.InputTokens
		s.usage.Output = m.Usage.OutputTokens
		s.usage.CacheRead = m.Usage.CacheReadInputTokens
		s.usage.CacheWrite = m.Usage.CacheCreationInputTokens
		return false, s.emitUsage()
	case "content_block_start":
		return false, s.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		return false, s.delta(ev.Index, ev.Delta)
	case "content_block_stop":
		return false, s.stop(ev.Index)
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			s.stopReason = r
		}
		// output_tokens is cumulative in every message_delta; the input
		// counts appear there only when the API revises them (server tools).
		u := ev.Usage
		s.usage.Output = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			s.usage.Input = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			s.usage.CacheRead = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			s.usage.CacheWrite = u.CacheCreationInputTokens
		}
		return false, s.emitUsage()
	case "message_stop":
		return true, nil
	}
	// Event types this adapter does not know are skipped, as the API
	// documents new ones may appear.
	return false, nil
}

func (s *streamer) emitUsage() error {
	u := &s.usage
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	return s.w.Usage(*u)
}

func (s *streamer) start(index int64, cb sdk.ContentBlockStartEventContentBlockUnion) error {
	if s.blocks == nil {
		s.blocks = map[int64]*openBlock{}
	}
	b := &openBlock{typ: cb.Type}
	s.blocks[index] = b
	switch cb.Type {
	case "text":
		return s.w.Text(cb.Text)
	case "thinking":
		if err := s.w.Thinking(cb.Thinking); err != nil {
			return err
		}
		s.w.ThinkingSignature(cb.Signature)
	case "redacted_thinking":
		return s.w.RedactedThinking(cb.Data)
	case "tool_use":
		b.initial = cb.JSON.Input.Raw()
		return s.w.ToolCallStart(cb.ID, cb.Name)
	}
	return nil
}

func (s *streamer) delta(index int64, d sdk.MessageStreamEventUnionDelta) error {
	b := s.blocks[index]
	if b == nil {
		return nil
	}
	switch {
	case d.Type == "text_delta" && b.typ == "text":
		return s.w.Text(d.Text)
	case d.Type == "thinking_delta" && b.typ == "thinking":
		return s.w.Thinking(d.Thinking)
	case d.Type == "signature_delta" && b.typ == "thinking":
		s.w.ThinkingSignature(d.Signature)
	case d.Type == "input_json_delta" && b.typ == "tool_use":
		b.args.WriteString(d.PartialJSON)
		return s.w.ToolCallDelta(d.PartialJSON)
	}
	return nil
}

func (s *streamer) stop(index int64) error {
	b := s.blocks[index]
	if b == nil {
		return nil
	}
	delete(s.blocks, index)
	switch b.typ {
	case "text":
		return s.w.EndText()
	case "thinking":
		return s.w.EndThinking()
	case "tool_use":
		return s.w.ToolCallEnd(finalArguments(b))
	}
	return nil
}

// finalArguments is the compact arguments object of a finished tool_use:
// the input_json_delta fragments joined, or the start's input when no
// fragment came (a tool without parameters), or nil when the joined text is
// not a JSON object, leaving the engine with the raw fragments it saw.
func finalArguments(b *openBlock) []byte {
	raw := b.args.Bytes()
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte(b.initial)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil
	}
	var out bytes.Buffer
	if json.Compact(&out, raw) != nil {
		return nil
	}
	return out.Bytes()
}

// finish ends a stream that reached message_stop: StreamDone for the stop
// reasons the wire has, a ProviderError for the others (agent-core.md §1.2
// maps refusal and unknown reasons to stopReason "error").
func (s *streamer) finish() error {
	var reason engine.StopReason
	switch s.stopReason {
	case sdk.StopReasonEndTurn, sdk.StopReasonPauseTurn, sdk.StopReasonStopSequence:
		reason = engine.StopStop
	case sdk.StopReasonMaxTokens:
		reason = engine.StopLength
	case sdk.StopReasonToolUse:
		reason = engine.StopToolUse
	case sdk.StopReasonModelContextWindowExceeded:
		return &engine.ProviderError{
			Kind:    engine.ErrorContextOverflow,
			Message: "Provider stop_reason: model_context_window_exceeded",
		}
	default:
		r := string(s.stopReason)
		if r == "" {
			r = "(none)"
		}
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: fmt.Sprintf("Provider stop_reason: %s", r)}
	}
	return s.w.Done(reason, s.responseID)
}
