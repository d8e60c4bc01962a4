package engine

import "strings"

// Reply folds one model call's stream events into its assistant message.
// The in-process loop (streamAssistant) and a durable model-call activity
// (engine/durable) both build their message with it, so how blocks open
// and close, which message_update each event makes, and how the stop
// reason is settled are written once. A Reply is used by one goroutine at
// a time (in process: the executor).
type Reply struct {
	p *Partial
	// Open block indexes of the partial, by kind (-1 when none).
	curText, curThinking, curTool int
	stop                          StopReason // the stream's own stop reason ("" before StreamDone)
	cost                          ModelCost  // prices the usage events
}

// NewReply starts the message of a model call: m carries the model's
// identity, the timestamp and the default stop reason; its content is
// ignored. cost prices the stream's usage.
func NewReply(m AssistantMessage, cost ModelCost) *Reply {
	return &Reply{p: newPartial(m), curText: -1, curThinking: -1, curTool: -1, cost: cost}
}

// Partial is the message as it stands, for message_start and the updates.
func (b *Reply) Partial() *Partial { return b.p }

// Snapshot is a copy of the message as it stands.
func (b *Reply) Snapshot() *AssistantMessage { return b.p.snapshot() }

// Apply folds one provider event into the message and passes each
// message_update it makes to emit. A StreamNotice changes nothing: its
// text is returned for the caller to tell the user ("" otherwise).
func (b *Reply) Apply(ev StreamEvent, emit func(Event)) (notice string) {
	p := b.p
	// An adapter gives the response's id as soon as it knows it, on any
	// event: the snapshots carry it from then on.
	if ev.ResponseID != "" {
		p.setResponseID(ev.ResponseID)
	}
	open := func(cur *int, blk ContentBlock, kind UpdateKind) int {
		if *cur < 0 {
			*cur = p.startBlock(blk)
			emit(MessageUpdate{Kind: kind, ContentIndex: *cur, Partial: p})
		}
		return *cur
	}
	toolBlock := func() ContentBlock {
		return ContentBlock{Type: BlockToolCall, ID: ev.ToolCallID, Name: ev.ToolName, Arguments: []byte("{}")}
	}
	switch ev.Kind {
	case StreamTextStart:
		b.curText = -1
		open(&b.curText, TextBlock(""), UpdateTextStart)
	case StreamTextDelta:
		i := open(&b.curText, TextBlock(""), UpdateTextStart)
		d := strings.ToValidUTF8(ev.Delta, "\uFFFD")
		p.appendDelta(i, d)
		emit(MessageUpdate{Kind: UpdateTextDelta, ContentIndex: i, Delta: d, Partial: p})
	case StreamTextEnd:
		i := open(&b.curText, TextBlock(""), UpdateTextStart)
		p.endBlock(i, ev.Signature, nil)
		b.curText = -1
		emit(MessageUpdate{Kind: UpdateTextEnd, ContentIndex: i, Content: p.blockText(i), Partial: p})
	case StreamThinkingStart:
		b.curThinking = -1
		open(&b.curThinking, ContentBlock{Type: BlockThinking}, UpdateThinkingStart)
	case StreamThinkingDelta:
		i := open(&b.curThinking, ContentBlock{Type: BlockThinking}, UpdateThinkingStart)
		d := strings.ToValidUTF8(ev.Delta, "\uFFFD")
		p.appendDelta(i, d)
		emit(MessageUpdate{Kind: UpdateThinkingDelta, ContentIndex: i, Delta: d, Partial: p})
	case StreamThinkingEnd:
		i := open(&b.curThinking, ContentBlock{Type: BlockThinking}, UpdateThinkingStart)
		p.endBlock(i, ev.Signature, nil)
		b.curThinking = -1
		emit(MessageUpdate{Kind: UpdateThinkingEnd, ContentIndex: i, Content: p.blockText(i), Partial: p})
	case StreamToolCallStart:
		b.curTool = -1
		open(&b.curTool, toolBlock(), UpdateToolCallStart)
	case StreamToolCallDelta:
		i := open(&b.curTool, toolBlock(), UpdateToolCallStart)
		p.appendDelta(i, ev.Delta)
		emit(MessageUpdate{Kind: UpdateToolCallDelta, ContentIndex: i, Delta: ev.Delta, Partial: p})
	case StreamToolCallEnd:
		i := open(&b.curTool, toolBlock(), UpdateToolCallStart)
		p.endBlock(i, ev.Signature, ev.Arguments)
		b.curTool = -1
		tc := p.msg.Content[i]
		emit(MessageUpdate{Kind: UpdateToolCallEnd, ContentIndex: i, ToolCall: &tc, Partial: p})
	case StreamRedactedThinking:
		i := p.startBlock(ContentBlock{Type: BlockRedactedThinking, Data: ev.Delta})
		p.endBlock(i, "", nil)
	case StreamNotice:
		return ev.Delta
	case StreamUsage:
		u := ev.Usage
		u.ApplyCost(b.cost)
		p.setUsage(u)
	case StreamDone:
		b.stop = ev.StopReason
	}
	return ""
}

// Finish closes the message: aborted when the call was cancelled before
// the stream said it was done (cancelled) or a rule cut it (ruleCut), a
// failure when err is set, else the stream's stop reason. Tool calls that
// must not run are marked (cutcalls.go).
func (b *Reply) Finish(cancelled, ruleCut bool, err error) *AssistantMessage {
	msg := b.p.snapshot()
	switch {
	case cancelled && (err != nil || b.stop == ""), ruleCut:
		// Aborted by the user, or cut by a rule (TTSR).
		msg.StopReason = StopAborted
		msg.ErrorMessage = AbortedMessage
	case err != nil:
		msg.StopReason = StopError
		msg.ErrorMessage = err.Error()
	case b.stop != "":
		msg.StopReason = b.stop
	default:
		msg.StopReason = StopStop
	}
	markCutCalls(msg)
	return msg
}

// ToolResultJSON encodes a tool result as tool_execution_end's result.
func ToolResultJSON(res ToolResult) []byte { return resultJSON(res) }

// NewToolResultMessage is the message that records a call's result, at
// timestamp ts.
func NewToolResultMessage(callID, toolName string, res ToolResult, ts int64) *ToolResultMessage {
	tr := &ToolResultMessage{
		ToolCallID: callID, ToolName: toolName, Content: res.Content,
		Details: orEmptyObject(res.Details), IsError: res.IsError, Timestamp: ts,
	}
	if res.IsWarning {
		w := true
		tr.IsWarning = &w
	}
	return tr
}
