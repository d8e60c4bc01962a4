package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"google.golang.org/genai"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// streamState turns the chunks of one streamed response into engine events
// through a provider.StreamWriter. It lives for one Stream call, on its
// goroutine.
//
// Gemini streams whole parts: text and thought text come in pieces over
// several chunks (consecutive parts of one kind make one block), a
// function call comes whole in one part. A thought signature comes on a
// part, sometimes on an empty text part after the text it belongs to; the
// last one a block received is its signature (sig), given to the writer
// when the block ends.
type streamState struct {
	w            *provider.StreamWriter
	open         string // engine.BlockText, engine.BlockThinking or "": the block sig belongs to
	sig          string
	id           string // responseId
	calls        int    // function calls emitted
	ids          map[string]bool
	finishReason genai.FinishReason
	reason       string // finishMessage
	usage        *genai.GenerateContentResponseUsageMetadata
	block        *genai.GenerateContentResponsePromptFeedback
}

// chunk folds one GenerateContentResponse into engine events.
func (s *streamState) chunk(c *genai.GenerateContentResponse) error {
	if s.id == "" && c.ResponseID != "" {
		s.id = c.ResponseID
		s.w.ResponseID(c.ResponseID)
	}
	if c.UsageMetadata != nil {
		// Cumulative: the last one counts.
		s.usage = c.UsageMetadata
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		s.block = c.PromptFeedback
	}
	if len(c.Candidates) == 0 || c.Candidates[0] == nil {
		return nil
	}
	cand := c.Candidates[0]
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p == nil {
				continue
			}
			if err := s.part(p); err != nil {
				return err
			}
		}
	}
	if cand.FinishReason != "" {
		s.finishReason, s.reason = cand.FinishReason, cand.FinishMessage
	}
	return nil
}

func (s *streamState) part(p *genai.Part) error {
	sig := ""
	if len(p.ThoughtSignature) > 0 {
		sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	if fc := p.FunctionCall; fc != nil {
		if err := s.endOpen(); err != nil {
			return err
		}
		args := []byte("{}")
		if len(fc.Args) > 0 {
			b, err := json.Marshal(fc.Args)
			if err != nil {
				return &engine.ProviderError{Kind: engine.ErrorOther, Message: "Malformed function call in the provider's stream: " + err.Error(), Err: err}
			}
			args = b
		}
		s.calls++
		if err := s.w.ToolCallStart(s.callID(fc), fc.Name); err != nil {
			return err
		}
		if err := s.w.ToolCallDelta(string(args)); err != nil {
			return err
		}
		s.w.ToolCallSignature(sig)
		return s.w.ToolCallEnd(args)
	}
	kind := engine.BlockText
	if p.Thought {
		kind = engine.BlockThinking
	}
	if p.Text == "" && (sig == "" || s.open == kind) {
		// An empty part carries at most the signature of the open block.
		if sig != "" {
			s.sig = sig
		}
		return nil
	}
	if p.Text == "" {
		// A signature with nothing open to belong to (after a function
		// call): nothing to send it back with.
		return nil
	}
	if s.open != kind {
		if err := s.endOpen(); err != nil {
			return err
		}
		s.open = kind
	}
	if sig != "" {
		s.sig = sig
	}
	if kind == engine.BlockThinking {
		return s.w.Thinking(p.Text)
	}
	return s.w.Text(p.Text)
}

// endOpen ends the open text or thinking block with its signature.
func (s *streamState) endOpen() error {
	open, sig := s.open, s.sig
	s.open, s.sig = "", ""
	switch open {
	case engine.BlockText:
		s.w.TextSignature(sig)
		return s.w.EndText()
	case engine.BlockThinking:
		s.w.ThinkingSignature(sig)
		return s.w.EndThinking()
	}
	return nil
}

// callID is a function call's id: the one the API gave, else (the Gemini
// API mostly gives none) one made from the response id and the call's
// place, unique in the conversation as the engine needs: the response id
// is unique per response. The next request sends it back in the call and
// its response.
func (s *streamState) callID(fc *genai.FunctionCall) string {
	id := fc.ID
	if id == "" || s.ids[id] {
		resp := s.id
		if resp == "" {
			var b [6]byte
			_, _ = rand.Read(b[:])
			resp = hex.EncodeToString(b[:])
		}
		id = fc.Name + "_" + resp + "_" + strconv.Itoa(s.calls)
	}
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	s.ids[id] = true
	return id
}

// finish ends a stream that ended cleanly: the open block, the usage, and
// the stop reason its finishReason says, or the failure it is.
func (s *streamState) finish(red []string) error {
	if err := s.endOpen(); err != nil {
		return err
	}
	if s.usage != nil {
		if err := s.w.Usage(usageOf(s.usage)); err != nil {
			return err
		}
	}
	if s.finishReason == "" {
		if s.block != nil {
			return blockedError(s.block)
		}
		return transportError(errNoFinish, red)
	}
	switch s.finishReason {
	case genai.FinishReasonStop:
		stop := engine.StopStop
		if s.calls > 0 {
			stop = engine.StopToolUse
		}
		return s.w.Done(stop, s.id)
	case genai.FinishReasonMaxTokens:
		return s.w.Done(engine.StopLength, s.id)
	}
	return finishError(s.finishReason, s.reason, red)
}

// usageOf maps Gemini's usage: cached prompt tokens are cache reads, not
// input (promptTokenCount counts them); thoughts are output, as the
// original counts them.
func usageOf(u *genai.GenerateContentResponseUsageMetadata) engine.Usage {
	cached := int64(u.CachedContentTokenCount)
	in := int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount) - cached
	out := int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount)
	total := int64(u.TotalTokenCount)
	if total == 0 {
		total = in + cached + out
	}
	return engine.Usage{Input: in, Output: out, CacheRead: cached, TotalTokens: total}
}
