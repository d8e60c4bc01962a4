package openai

import (
	"slices"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// defaultReasoningFields are the delta fields of wireDelta that carry
// reasoning text, tried in order.
var defaultReasoningFields = [...]string{"reasoning_content", "reasoning", "reasoning_text"}

// toolCall is one tool call of the choice, by its stream index.
type toolCall struct {
	index   int64
	id      string
	name    string
	args    []byte // buffered argument fragments, until the call is emitted
	started bool   // StreamToolCallStart sent
	ended   bool   // StreamToolCallEnd sent
}

// streamState turns chunks into engine events through an
// provider.StreamWriter, which keeps the block contract (one open block,
// start/delta/end). It lives for one Stream call, on its goroutine.
//
// Invariant: at most one tool call streams live (active, an index into
// calls); every other call only buffers until finish, when the calls are
// emitted whole in index order, so chat completions' interleaved argument
// deltas never interleave blocks.
type streamState struct {
	w       *provider.StreamWriter
	c       *compat
	calls   []toolCall
	active  int  // index into calls of the live call; -1 before the first
	flushed bool // tool calls ended at finish_reason; later tool deltas are dropped

	id     string // response id
	finish string
}

// chunk folds one decoded chunk into events. Only choice 0 is read: the
// request never asks for n > 1.
func (s *streamState) chunk(ch *wireChunk, raw []byte) error {
	if s.id == "" && ch.ID != "" {
		s.id = ch.ID
		s.w.ResponseID(ch.ID)
	}
	for i := range ch.Choices {
		choice := &ch.Choices[i]
		if choice.Index != 0 {
			continue
		}
		d := &choice.Delta
		if text, field := s.reasoning(raw, d); text != "" {
			if err := s.thinkingDelta(text, field); err != nil {
				return err
			}
		}
		if d.Content != "" {
			if err := s.textDelta(d.Content); err != nil {
				return err
			}
		}
		for j := range d.ToolCalls {
			if err := s.toolDelta(&d.ToolCalls[j]); err != nil {
				return err
			}
		}
		if choice.FinishReason != "" && s.finish == "" {
			s.finish = choice.FinishReason
			if err := s.closeAll(); err != nil {
				return err
			}
		}
	}
	if ch.Usage != nil {
		return s.w.Usage(usage(ch.Usage))
	}
	return nil
}

// reasoning returns the delta's reasoning text and the field it came in.
func (s *streamState) reasoning(raw []byte, d *wireDelta) (string, string) {
	switch f := s.c.ReasoningContentField; f {
	case "":
	case "reasoning_content":
		return string(d.ReasoningContent), f
	case "reasoning":
		return string(d.Reasoning), f
	case "reasoning_text":
		return string(d.ReasoningText), f
	default:
		return namedField(raw, f), f
	}
	switch {
	case d.ReasoningContent != "":
		return string(d.ReasoningContent), "reasoning_content"
	case d.Reasoning != "":
		return string(d.Reasoning), "reasoning"
	case d.ReasoningText != "":
		return string(d.ReasoningText), "reasoning_text"
	}
	return "", ""
}

func (s *streamState) textDelta(t string) error {
	if s.active >= 0 { // checked here: endLive is too big to inline
		if err := s.endLive(); err != nil {
			return err
		}
	}
	return s.w.Text(t)
}

// thinkingDelta adds reasoning text. A thinking block's signature is the
// field its first text came in, so that the next request can send it back
// in the same field (see assistantMessage).
func (s *streamState) thinkingDelta(t, field string) error {
	if s.active >= 0 {
		if err := s.endLive(); err != nil {
			return err
		}
	}
	opening := s.w.Open() != engine.BlockThinking
	if err := s.w.Thinking(t); err != nil {
		return err
	}
	if opening {
		s.w.ThinkingSignature(field)
	}
	return nil
}

// endLive ends the live tool call before a text or thinking block opens:
// blocks never interleave. Fragments of that call that come later have
// nowhere to go and are dropped (no server is known to send content
// between a call's fragments; some send it between calls).
func (s *streamState) endLive() error {
	c := &s.calls[s.active]
	if !c.started || c.ended {
		return nil
	}
	c.ended = true
	return s.w.ToolCallEnd(nil)
}

// toolDelta streams the first call live and buffers the others.
func (s *streamState) toolDelta(d *wireToolCall) error {
	if s.flushed {
		// A fragment after finish_reason has nowhere to go: its call's
		// end was already sent.
		return nil
	}
	if s.w.Open() != engine.BlockToolCall {
		// The open text or thinking block ends at the first sign of a
		// call; an open tool call is the live one and stays open.
		if err := s.w.EndBlock(); err != nil {
			return err
		}
	}
	i := slices.IndexFunc(s.calls, func(c toolCall) bool { return c.index == d.Index })
	if i < 0 {
		s.calls = append(s.calls, toolCall{index: d.Index})
		i = len(s.calls) - 1
		if s.active < 0 {
			s.active = i
		}
	}
	c := &s.calls[i]
	if c.id == "" {
		c.id = d.ID
	}
	if c.name == "" {
		c.name = d.Function.Name
	}
	args := d.Function.Arguments
	switch {
	case c.ended:
		return nil
	case i != s.active:
		c.args = append(c.args, args...)
		return nil
	}
	if !c.started {
		if c.name == "" {
			// Some servers send the id before the name: the start event
			// needs both.
			c.args = append(c.args, args...)
			return nil
		}
		c.started = true
		if err := s.w.ToolCallStart(c.id, c.name); err != nil {
			return err
		}
		if len(c.args) > 0 {
			buf := string(c.args)
			c.args = nil
			if err := s.w.ToolCallDelta(buf); err != nil {
				return err
			}
		}
	}
	return s.w.ToolCallDelta(args)
}

// closeAll ends the open block and every tool call: the live one first,
// then the buffered ones in index order, each whole.
func (s *streamState) closeAll() error {
	if s.w.Open() != engine.BlockToolCall {
		if err := s.w.EndBlock(); err != nil {
			return err
		}
	}
	if s.flushed || len(s.calls) == 0 {
		s.flushed = true
		return nil
	}
	s.flushed = true
	first := s.calls[s.active]
	rest := append(s.calls[:s.active:s.active], s.calls[s.active+1:]...)
	slices.SortStableFunc(rest, func(a, b toolCall) int { return int(a.index - b.index) })
	if err := s.emitCall(&first); err != nil {
		return err
	}
	for i := range rest {
		if err := s.emitCall(&rest[i]); err != nil {
			return err
		}
	}
	return nil
}

// emitCall sends what is left of a call: its start if not sent, its
// buffered arguments, its end.
func (s *streamState) emitCall(c *toolCall) error {
	if c.ended {
		return nil
	}
	if !c.started {
		c.started = true
		if err := s.w.ToolCallStart(c.id, c.name); err != nil {
			return err
		}
	}
	if err := s.w.ToolCallDelta(string(c.args)); err != nil {
		return err
	}
	c.ended = true
	return s.w.ToolCallEnd(nil)
}

// end finishes a stream that the server closed normally.
func (s *streamState) end(red redactor) error {
	switch s.finish {
	case "":
		return transportError(errNoFinish, red)
	case "stop", "end":
		return s.done(engine.StopStop)
	case "length":
		return s.done(engine.StopLength)
	case "tool_calls", "function_call":
		return s.done(engine.StopToolUse)
	}
	return finishError(s.finish)
}

func (s *streamState) done(r engine.StopReason) error {
	return s.w.Done(r, s.id)
}

// usage maps OpenAI's counts (agent-core.md §1.2): cached prompt tokens are
// cache reads, not input. Reasoning tokens are part of completion_tokens
// on OpenAI; a server that counts them apart shows it in total_tokens.
func usage(u *wireUsage) engine.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	reasoning := u.CompletionTokensDetails.ReasoningTokens
	out := u.CompletionTokens
	if reasoning > 0 && u.TotalTokens == u.PromptTokens+u.CompletionTokens+reasoning {
		out += reasoning
	}
	in := u.PromptTokens - cached
	return engine.Usage{Input: in, Output: out, CacheRead: cached, TotalTokens: in + out + cached}
}
