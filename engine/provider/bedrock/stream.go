package bedrock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// blockKind is what a content block of the stream turned out to be: text
// and reasoning blocks have no start event (their first delta says), a
// toolUse block has one.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockThinking
	blockTool
)

// streamer turns ConverseStream events into engine stream events through a
// provider.StreamWriter. It lives for one Stream call, on its goroutine.
//
// Bedrock sends the blocks of a message one after the other (start,
// deltas, stop by contentBlockIndex), then messageStop with the stop
// reason, then metadata with the usage; the stream's end follows.
type streamer struct {
	w    *provider.StreamWriter
	kind map[int32]blockKind
	args map[int32]*bytes.Buffer // a toolUse block's input fragments
	stop types.StopReason
}

// handle processes one event.
func (s *streamer) handle(ev types.ConverseStreamOutput) error {
	switch e := ev.(type) {
	case *types.ConverseStreamOutputMemberMessageStart:
		// The role only: always the assistant's.
	case *types.ConverseStreamOutputMemberContentBlockStart:
		return s.start(index(e.Value.ContentBlockIndex), e.Value.Start)
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		return s.delta(index(e.Value.ContentBlockIndex), e.Value.Delta)
	case *types.ConverseStreamOutputMemberContentBlockStop:
		return s.end(index(e.Value.ContentBlockIndex))
	case *types.ConverseStreamOutputMemberMessageStop:
		s.stop = e.Value.StopReason
		if s.stop == "" {
			s.stop = "(none)"
		}
	case *types.ConverseStreamOutputMemberMetadata:
		if u := e.Value.Usage; u != nil {
			return s.w.Usage(usageOf(u))
		}
	}
	// Members this adapter does not know (types.UnknownUnionMember) are
	// skipped: the service adds event types.
	return nil
}

func index(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func (s *streamer) setKind(i int32, k blockKind) {
	if s.kind == nil {
		s.kind = map[int32]blockKind{}
	}
	s.kind[i] = k
}

func (s *streamer) start(i int32, st types.ContentBlockStart) error {
	tu, ok := st.(*types.ContentBlockStartMemberToolUse)
	if !ok {
		// Image and tool result starts belong to server-side features the
		// engine has no block for.
		return nil
	}
	s.setKind(i, blockTool)
	if s.args == nil {
		s.args = map[int32]*bytes.Buffer{}
	}
	s.args[i] = &bytes.Buffer{}
	return s.w.ToolCallStart(deref(tu.Value.ToolUseId), deref(tu.Value.Name))
}

func (s *streamer) delta(i int32, d types.ContentBlockDelta) error {
	switch v := d.(type) {
	case *types.ContentBlockDeltaMemberText:
		if s.kind[i] == blockNone {
			s.setKind(i, blockText)
		}
		if s.kind[i] != blockText {
			return nil
		}
		return s.w.Text(v.Value)
	case *types.ContentBlockDeltaMemberReasoningContent:
		if s.kind[i] == blockNone {
			s.setKind(i, blockThinking)
		}
		if s.kind[i] != blockThinking {
			return nil
		}
		switch r := v.Value.(type) {
		case *types.ReasoningContentBlockDeltaMemberText:
			return s.w.Thinking(r.Value)
		case *types.ReasoningContentBlockDeltaMemberSignature:
			s.w.ThinkingSignature(r.Value)
		case *types.ReasoningContentBlockDeltaMemberRedactedContent:
			// Encrypted reasoning arrives whole; the engine keeps it as a
			// redactedThinking block, base64 as Anthropic sends its own.
			s.setKind(i, blockNone)
			return s.w.RedactedThinking(base64.StdEncoding.EncodeToString(r.Value))
		}
	case *types.ContentBlockDeltaMemberToolUse:
		if s.kind[i] != blockTool {
			return nil
		}
		frag := deref(v.Value.Input)
		s.args[i].WriteString(frag)
		return s.w.ToolCallDelta(frag)
	}
	return nil
}

func (s *streamer) end(i int32) error {
	k := s.kind[i]
	delete(s.kind, i)
	switch k {
	case blockText:
		return s.w.EndText()
	case blockThinking:
		return s.w.EndThinking()
	case blockTool:
		args := finalArguments(s.args[i].Bytes())
		delete(s.args, i)
		return s.w.ToolCallEnd(args)
	}
	return nil
}

// finalArguments is the compact arguments object of a finished toolUse:
// its fragments joined ({} for none: a tool without parameters), or nil
// when they are not a JSON object, leaving the engine the raw fragments.
func finalArguments(raw []byte) []byte {
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

// usageOf maps Bedrock's token usage: inputTokens are the tokens read
// fresh, beside the cache reads and writes, as Anthropic counts them.
func usageOf(u *types.TokenUsage) engine.Usage {
	out := engine.Usage{
		Input:      int64(deref32(u.InputTokens)),
		Output:     int64(deref32(u.OutputTokens)),
		CacheRead:  int64(deref32(u.CacheReadInputTokens)),
		CacheWrite: int64(deref32(u.CacheWriteInputTokens)),
	}
	out.TotalTokens = int64(deref32(u.TotalTokens))
	if out.TotalTokens == 0 {
		out.TotalTokens = out.Input + out.Output + out.CacheRead + out.CacheWrite
	}
	return out
}

// finish ends a stream that closed cleanly: StreamDone for the stop
// reasons the engine has, a ProviderError for the others (a guardrail,
// a content filter, malformed output), and a transport failure when
// messageStop never came.
func (s *streamer) finish() error {
	var reason engine.StopReason
	switch s.stop {
	case "":
		return &engine.ProviderError{
			Kind:    engine.ErrorTransport,
			Message: "Connection error: the stream ended before messageStop",
			Err:     ErrStreamEnded,
		}
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		reason = engine.StopStop
	case types.StopReasonToolUse:
		reason = engine.StopToolUse
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		// The original reports a full window as a cut answer, as the
		// model stopped writing for lack of room.
		reason = engine.StopLength
	default:
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: fmt.Sprintf("Bedrock stream ended with stopReason: %s", s.stop)}
	}
	return s.w.Done(reason, "")
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func deref32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
