package ollama

import (
	"errors"
	"strconv"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// errStop ends the api client's read loop after the done line: nothing
// that follows can change the answer.
var errStop = errors.New("ollama: done")

// streamer turns the chunks of one /api/chat response into engine events
// through an provider.StreamWriter, which keeps the block contract. It runs
// on the goroutine that called Stream (the api client calls back
// synchronously), so it needs no lock.
type streamer struct {
	w      *provider.StreamWriter
	nextID int   // the n of the next minted call_<n>
	calls  int   // tool calls emitted in this response
	done   bool  // StreamDone was delivered
	ownErr error // an error made here (not the callback's)
}

// err is what Stream returns as is, rather than mistake it for a failure
// of the client: the callback's error, or one made here.
func (s *streamer) err() error {
	if err := s.w.Err(); err != nil {
		return err
	}
	return s.ownErr
}

// chunk handles one line of the stream. Ollama may switch from thinking to
// text (and, with some templates, back) mid-stream: the writer closes the
// block of the other kind first.
func (s *streamer) chunk(r api.ChatResponse) error {
	if t := r.Message.Thinking; t != "" {
		if err := s.w.Thinking(t); err != nil {
			return err
		}
	}
	if t := r.Message.Content; t != "" {
		if err := s.w.Text(t); err != nil {
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
	if err := s.w.EndBlock(); err != nil {
		return err
	}
	in, out := int64(r.PromptEvalCount), int64(r.EvalCount)
	if err := s.w.Usage(engine.Usage{Input: in, Output: out, TotalTokens: in + out}); err != nil {
		return err
	}
	if err := s.w.Done(s.stopReason(r.DoneReason), ""); err != nil {
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

// toolCall emits one whole tool call: Ollama parses calls out of the
// model's output and sends each complete, never as argument deltas.
func (s *streamer) toolCall(tc api.ToolCall) error {
	args, err := compactArgs(tc.Function.Arguments)
	if err != nil {
		// Arguments came from JSON, so they encode again; this is a bug
		// guard, reported as a failed call rather than a panic.
		s.ownErr = &engine.ProviderError{Kind: engine.ErrorOther, Message: "ollama: tool call arguments: " + err.Error(), Err: err}
		return s.ownErr
	}
	id := tc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(s.nextID)
	}
	s.nextID++
	s.calls++
	return s.w.ToolCall(id, tc.Function.Name, args)
}
