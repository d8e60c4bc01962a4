package ollama

import (
	"errors"
	"strconv"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
)

// errStop ends the api client's read loop after the done line: nothing
// that follows can change the answer.
var errStop = errors.New("ollama: done")

// block is the kind of content block that is open.
type block int

const (
	blockNone block = iota
	blockText
	blockThinking
)

// streamer turns the chunks of one /api/chat response into engine events.
// It runs on the goroutine that called Stream (the api client calls back
// synchronously), so it needs no lock.
type streamer struct {
	fn     func(engine.StreamEvent) error
	open   block
	nextID int   // the n of the next minted call_<n>
	calls  int   // tool calls emitted in this response
	done   bool  // StreamDone was delivered
	cbErr  error // fn's error, or one made here, returned by Stream as is
}

// emit calls fn and remembers its error, so Stream can return it unchanged
// rather than mistake it for a failure of the client.
func (s *streamer) emit(ev engine.StreamEvent) error {
	if err := s.fn(ev); err != nil {
		s.cbErr = err
		return err
	}
	return nil
}

// chunk handles one line of the stream.
func (s *streamer) chunk(r api.ChatResponse) error {
	if t := r.Message.Thinking; t != "" {
		if err := s.delta(blockThinking, t); err != nil {
			return err
		}
	}
	if t := r.Message.Content; t != "" {
		if err := s.delta(blockText, t); err != nil {
			return err
		}
	}
	for _, tc := range r.Message.ToolCalls {
		if err := s.toolCall(tc); err != nil {
			return err
		}
	}
	if !r.Done {
		return nil
	}
	if err := s.close(); err != nil {
		return err
	}
	in, out := int64(r.PromptEvalCount), int64(r.EvalCount)
	if err := s.emit(engine.StreamEvent{Kind: engine.StreamUsage, Usage: engine.Usage{Input: in, Output: out, TotalTokens: in + out}}); err != nil {
		return err
	}
	if err := s.emit(engine.StreamEvent{Kind: engine.StreamDone, StopReason: s.stopReason(r.DoneReason)}); err != nil {
		return err
	}
	s.done = true
	return errStop
}

func (s *streamer) stopReason(doneReason string) engine.StopReason {
	switch {
	case doneReason == "length":
		return engine.StopLength
	case s.calls > 0:
		return engine.StopToolUse
	}
	return engine.StopStop
}

// delta appends text to a block of kind k, closing a block of the other
// kind first: the engine keeps one open block per kind, and Ollama may
// switch from thinking to text (and, with some templates, back) mid-stream.
func (s *streamer) delta(k block, text string) error {
	if s.open != k {
		if err := s.close(); err != nil {
			return err
		}
		start := engine.StreamTextStart
		if k == blockThinking {
			start = engine.StreamThinkingStart
		}
		if err := s.emit(engine.StreamEvent{Kind: start}); err != nil {
			return err
		}
		s.open = k
	}
	kind := engine.StreamTextDelta
	if k == blockThinking {
		kind = engine.StreamThinkingDelta
	}
	return s.emit(engine.StreamEvent{Kind: kind, Delta: text})
}

// close ends the open text or thinking block, if any.
func (s *streamer) close() error {
	k := s.open
	s.open = blockNone
	switch k {
	case blockText:
		return s.emit(engine.StreamEvent{Kind: engine.StreamTextEnd})
	case blockThinking:
		return s.emit(engine.StreamEvent{Kind: engine.StreamThinkingEnd})
	}
	return nil
}

// toolCall emits one whole tool call: Ollama parses calls out of the
// model's output and sends each complete, never as argument deltas.
func (s *streamer) toolCall(tc api.ToolCall) error {
	if err := s.close(); err != nil {
		return err
	}
	args, err := compactArgs(tc.Function.Arguments)
	if err != nil {
		// Arguments came from JSON, so they encode again; this is a bug
		// guard, reported as a failed call rather than a panic.
		s.cbErr = &engine.ProviderError{Kind: engine.ErrorOther, Message: "ollama: tool call arguments: " + err.Error(), Err: err}
		return s.cbErr
	}
	id := tc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(s.nextID)
	}
	s.nextID++
	s.calls++
	if err := s.emit(engine.StreamEvent{Kind: engine.StreamToolCallStart, ToolCallID: id, ToolName: tc.Function.Name}); err != nil {
		return err
	}
	if err := s.emit(engine.StreamEvent{Kind: engine.StreamToolCallDelta, ToolCallID: id, Delta: string(args)}); err != nil {
		return err
	}
	return s.emit(engine.StreamEvent{Kind: engine.StreamToolCallEnd, ToolCallID: id, ToolName: tc.Function.Name, Arguments: args})
}
