package openai

import (
	"encoding/json"
	"errors"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// outItem is one output item of a response, by the order it was added.
type outItem struct {
	index int64  // output_index
	kind  string // reasoning, message or function_call; "" for items the adapter ignores
	id    string
	call  string // function_call: call_id
	name  string // function_call: the tool
	buf   []byte // deltas received while an earlier item streamed

	part     int64 // the summary or content part the last thinking text came in
	hasText  bool  // some text or thinking was emitted or buffered
	hasArgs  bool  // some argument fragment was emitted or buffered
	started  bool  // its block is open (or was)
	done     bool  // output_item.done arrived
	sig      string
	finalArg []byte // function_call: the whole arguments, from its .done events
}

// respState turns Responses events into engine events through an
// provider.StreamWriter. It lives for one Stream call, on its goroutine.
//
// Invariant: items are emitted in the order they were added, one block at
// a time. The first item not yet ended is live: its deltas stream as they
// come. An item added while another is live buffers its deltas and is
// emitted when every item before it has ended (OpenAI streams items one
// after the other, so buffering only meets servers that interleave).
type respState struct {
	w     *provider.StreamWriter
	items []*outItem
	next  int // items[:next] are ended

	id       string        // response id
	calls    bool          // a function call was emitted
	terminal *respResponse // the response of the terminal event, once it came
	kind     string        // the terminal event's type
}

// event folds one decoded event into engine events. It reports true when
// the event ends the stream.
func (s *respState) event(ev *respEvent, data []byte, red redactor) (bool, error) {
	switch ev.Type {
	case "response.created", "response.in_progress":
		if r := ev.Response; r != nil && s.id == "" && r.ID != "" {
			s.id = r.ID
			s.w.ResponseID(r.ID)
		}
	case "response.output_item.added":
		var it respItem
		if err := json.Unmarshal(ev.Item, &it); err != nil {
			return true, malformed(err, red)
		}
		o := &outItem{index: ev.OutputIndex, id: it.ID, call: it.CallID, name: it.Name, part: -1}
		switch it.Type {
		case "reasoning", "message", "function_call":
			o.kind = it.Type
		}
		if it.Arguments != "" {
			o.buf, o.hasArgs = append(o.buf, it.Arguments...), true
		}
		s.items = append(s.items, o)
		return false, s.pump()
	case "response.reasoning_summary_text.delta":
		return false, s.thinking(ev.OutputIndex, ev.SummaryIndex, ev.Delta)
	case "response.reasoning_text.delta":
		// Raw reasoning text (open-weight models behind Responses servers);
		// its parts are keyed apart from the summary's.
		return false, s.thinking(ev.OutputIndex, -2-ev.ContentIndex, ev.Delta)
	case "response.output_text.delta", "response.refusal.delta":
		if o := s.item(ev.OutputIndex, "message"); o != nil && ev.Delta != "" {
			o.hasText = true
			return false, s.add(o, ev.Delta)
		}
	case "response.function_call_arguments.delta":
		if o := s.item(ev.OutputIndex, "function_call"); o != nil && ev.Delta != "" {
			o.hasArgs = true
			return false, s.add(o, ev.Delta)
		}
	case "response.function_call_arguments.done":
		if o := s.item(ev.OutputIndex, "function_call"); o != nil && ev.Arguments != nil {
			o.finalArg = []byte(*ev.Arguments)
		}
	case "response.output_item.done":
		return false, s.itemDone(ev, red)
	case "response.completed", "response.incomplete", "response.failed", "response.done":
		s.kind, s.terminal = ev.Type, ev.Response
		if s.terminal == nil {
			s.terminal = &respResponse{}
		}
		return true, nil
	case "error":
		return true, responseEventError(ev, data, red)
	}
	return false, nil
}

// item finds the item at output index i, if it is of kind.
func (s *respState) item(i int64, kind string) *outItem {
	for j := len(s.items) - 1; j >= 0; j-- {
		if o := s.items[j]; o.index == i {
			if o.kind != kind {
				return nil
			}
			return o
		}
	}
	return nil
}

// thinking adds reasoning text of one part. Parts are joined by a blank
// line, as the original's final thinking text joins them; the separator
// goes before a new part rather than after each, so the streamed text is
// the final text.
func (s *respState) thinking(index, part int64, delta string) error {
	o := s.item(index, "reasoning")
	if o == nil || delta == "" {
		return nil
	}
	if o.part != part && o.hasText {
		delta = "\n\n" + delta
	}
	o.part, o.hasText = part, true
	return s.add(o, delta)
}

// add streams delta when o is live, else buffers it.
func (s *respState) add(o *outItem, delta string) error {
	if !s.live(o) {
		o.buf = append(o.buf, delta...)
		return nil
	}
	return s.emit(o, delta)
}

func (s *respState) live(o *outItem) bool {
	return o.started && s.next < len(s.items) && s.items[s.next] == o
}

func (s *respState) emit(o *outItem, delta string) error {
	switch o.kind {
	case "reasoning":
		return s.w.Thinking(delta)
	case "message":
		return s.w.Text(delta)
	case "function_call":
		return s.w.ToolCallDelta(delta)
	}
	return nil
}

// itemDone records an item's final form: a reasoning item's whole JSON
// (its signature: encrypted content and summary, replayed next turn), a
// message's id, a call's final arguments.
func (s *respState) itemDone(ev *respEvent, red redactor) error {
	var it respItem
	if err := json.Unmarshal(ev.Item, &it); err != nil {
		return malformed(err, red)
	}
	var o *outItem
	for _, c := range s.items {
		if c.index == ev.OutputIndex && !c.done {
			o = c
			break
		}
	}
	if o == nil {
		// A done without an added: the item arrives whole.
		o = &outItem{index: ev.OutputIndex, id: it.ID, call: it.CallID, name: it.Name, part: -1}
		switch it.Type {
		case "reasoning", "message", "function_call":
			o.kind = it.Type
		}
		s.items = append(s.items, o)
	}
	o.done = true
	switch o.kind {
	case "reasoning":
		o.sig = string(ev.Item)
	case "message":
		if it.ID != "" {
			o.id = it.ID
		}
		o.sig = encodeTextSignature(o.id, it.Phase)
	case "function_call":
		if o.call == "" {
			o.call, o.name = it.CallID, it.Name
		}
		if it.ID != "" {
			o.id = it.ID
		}
		if it.Arguments != "" {
			o.finalArg = []byte(it.Arguments)
		}
	}
	return s.pump()
}

// pump emits what can be emitted: it starts the first item not yet ended
// (with what it buffered) and ends it when it is done, then the next.
func (s *respState) pump() error {
	for s.next < len(s.items) {
		o := s.items[s.next]
		if !o.started {
			if err := s.start(o); err != nil {
				return err
			}
		}
		if !o.done {
			return nil
		}
		if err := s.end(o); err != nil {
			return err
		}
		s.next++
	}
	return nil
}

func (s *respState) start(o *outItem) error {
	o.started = true
	var err error
	switch o.kind {
	case "reasoning":
		err = s.w.Thinking("")
	case "message":
		err = s.w.Text("")
	case "function_call":
		s.calls = true
		err = s.w.ToolCallStart(toolCallID(o.call, o.id), o.name)
	default:
		return nil
	}
	if err != nil || len(o.buf) == 0 {
		return err
	}
	buf := string(o.buf)
	o.buf = nil
	return s.emit(o, buf)
}

// end ends an item's block. A call whose arguments only came whole (in
// its .done events, no deltas) gets them as its one fragment.
func (s *respState) end(o *outItem) error {
	switch o.kind {
	case "reasoning":
		s.w.ThinkingSignature(o.sig)
		return s.w.EndThinking()
	case "message":
		s.w.TextSignature(o.sig)
		return s.w.EndText()
	case "function_call":
		if !o.hasArgs && len(o.finalArg) > 0 {
			if err := s.w.ToolCallDelta(string(o.finalArg)); err != nil {
				return err
			}
		}
		return s.w.ToolCallEnd(o.finalArg)
	}
	return nil
}

// toolCallID is the engine's id of a function call: pi's
// "<call_id>|<item id>", both of which the next request needs.
func toolCallID(call, item string) string {
	if item == "" {
		return call
	}
	return call + "|" + item
}

// errNoTerminal is the cause of a stream that ended before its terminal
// event.
var errNoTerminal = errors.New("stream ended before response.completed")

// finish ends a stream whose terminal event came: every item still open is
// ended (what it has is all there is), then the usage and the end.
func (s *respState) finish(red redactor) error {
	r := s.terminal
	if r == nil {
		return transportError(errNoTerminal, red)
	}
	for i := s.next; i < len(s.items); i++ {
		s.items[i].done = true
	}
	if err := s.pump(); err != nil {
		return err
	}
	if s.id == "" && r.ID != "" {
		s.id = r.ID
	}
	if r.Usage != nil {
		if err := s.w.Usage(respUsageOf(r.Usage)); err != nil {
			return err
		}
	}
	status := r.Status
	if status == "" {
		// Codex's response.done and .incomplete may lack it: the event says.
		switch s.kind {
		case "response.incomplete":
			status = "incomplete"
		case "response.failed":
			status = "failed"
		default:
			status = "completed"
		}
	}
	switch status {
	case "completed", "in_progress", "queued":
		stop := engine.StopStop
		if s.calls {
			stop = engine.StopToolUse
		}
		return s.w.Done(stop, s.id)
	case "incomplete":
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			return &engine.ProviderError{Kind: engine.ErrorOther, Message: "Response incomplete: content_filter"}
		}
		return s.w.Done(engine.StopLength, s.id)
	}
	return responseFailed(r, red)
}

// respUsageOf maps the Responses usage (agent-core.md §1.2): cached input
// tokens are cache reads, not input; output_tokens already counts the
// reasoning tokens.
func respUsageOf(u *respUsage) engine.Usage {
	cached := u.InputTokensDetails.CachedTokens
	in := u.InputTokens - cached
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	return engine.Usage{Input: in, Output: u.OutputTokens, CacheRead: cached, TotalTokens: total}
}
