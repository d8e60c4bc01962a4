package provider

import "github.com/xcsh-go/xcsh/engine"

// StreamWriter emits a provider's stream events in the shape the engine
// reads (docs/providers.md "Writing an adapter"): every block has its start,
// its deltas and its end; at most one block is open, and opening a block of
// another kind (or a second tool call) ends the open one first; Done ends
// the open block before engine.StreamDone. An adapter converts what its
// backend sends into calls on a StreamWriter and keeps no block state of its
// own beyond what its backend needs (OpenAI's buffered tool calls,
// Anthropic's per-index arguments).
//
// The first error the callback returns is kept: every later call returns
// it and emits nothing, so an adapter may check errors at its own pace.
// After Done, calls emit nothing and return nil (or the kept error).
//
// A StreamWriter belongs to one Stream call and its goroutine.
type StreamWriter struct {
	fn      func(engine.StreamEvent) error
	err     error // the callback's first error; sticky
	open    openKind
	stopped bool // err is set or Done was emitted: nothing more is emitted

	sig        string // signature of the open thinking or text block
	id, name   string // the open tool call
	responseID string // to attach to the next event (ResponseID)
}

// openKind is the kind of the open block.
type openKind uint8

const (
	openNone openKind = iota
	openText
	openThinking
	openToolCall
)

// NewStreamWriter returns a writer that emits through fn, the callback
// given to engine.Provider.Stream.
func NewStreamWriter(fn func(engine.StreamEvent) error) *StreamWriter {
	return &StreamWriter{fn: fn}
}

// Err returns the first error the callback returned, or nil.
func (w *StreamWriter) Err() error { return w.err }

// Open returns the type of the open block: engine.BlockText,
// engine.BlockThinking, engine.BlockToolCall, or "" when none is open.
func (w *StreamWriter) Open() string {
	switch w.open {
	case openText:
		return engine.BlockText
	case openThinking:
		return engine.BlockThinking
	case openToolCall:
		return engine.BlockToolCall
	}
	return ""
}

// emit calls the callback unless an earlier call failed or the stream is
// done.
func (w *StreamWriter) emit(ev engine.StreamEvent) error {
	if w.stopped {
		return w.err
	}
	if w.responseID != "" && ev.ResponseID == "" {
		ev.ResponseID, w.responseID = w.responseID, ""
	}
	if err := w.fn(ev); err != nil {
		w.err, w.stopped = err, true
		return err
	}
	return nil
}

// ResponseID gives the backend's id for the response as soon as it is
// known (a first chunk, message_start): it rides on the next event, so the
// partial message carries it from then on, as the family's snapshots do.
func (w *StreamWriter) ResponseID(id string) { w.responseID = id }

// start ends the open block and opens one of kind k with ev (its start
// event).
func (w *StreamWriter) start(k openKind, ev engine.StreamEvent) error {
	if err := w.EndBlock(); err != nil || w.stopped {
		return err
	}
	w.open, w.sig = k, ""
	return w.emit(ev)
}

// Text appends delta to the open text block, ending any other open block
// and starting a text block first. An empty delta only starts the block
// (an empty text block is Text("") then EndText).
func (w *StreamWriter) Text(delta string) error {
	if w.open != openText || delta == "" || w.stopped {
		return w.text(delta)
	}
	// The hot path, small enough to inline into an adapter's loop.
	if err := w.fn(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: delta}); err != nil {
		w.err, w.stopped = err, true
		return err
	}
	return nil
}

func (w *StreamWriter) text(delta string) error {
	if w.open != openText {
		if err := w.start(openText, engine.StreamEvent{Kind: engine.StreamTextStart}); err != nil {
			return err
		}
	}
	if delta == "" {
		return w.err
	}
	return w.emit(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: delta})
}

// TextSignature appends part to the signature that the open text block's
// end carries (the Responses API's message item id, which the next request
// sends back). It does nothing when no text block is open, and emits
// nothing itself.
func (w *StreamWriter) TextSignature(part string) {
	if w.open == openText {
		w.sig += part
	}
}

// EndText ends the open text block with the signature collected; it does
// nothing when the open block is not text.
func (w *StreamWriter) EndText() error {
	if w.open != openText {
		return w.err
	}
	w.open = openNone
	sig := w.sig
	w.sig = ""
	return w.emit(engine.StreamEvent{Kind: engine.StreamTextEnd, Signature: sig})
}

// Thinking appends delta to the open thinking block, ending any other open
// block and starting a thinking block first. An empty delta only starts
// the block.
func (w *StreamWriter) Thinking(delta string) error {
	if w.open != openThinking {
		if err := w.start(openThinking, engine.StreamEvent{Kind: engine.StreamThinkingStart}); err != nil {
			return err
		}
	}
	if delta == "" {
		return w.err
	}
	return w.emit(engine.StreamEvent{Kind: engine.StreamThinkingDelta, Delta: delta})
}

// ThinkingSignature appends part to the signature that the open thinking
// block's end carries (Anthropic's signature deltas; OpenAI-compatible
// servers' reasoning field name). It does nothing when no thinking block
// is open, and emits nothing itself.
func (w *StreamWriter) ThinkingSignature(part string) {
	if w.open == openThinking {
		w.sig += part
	}
}

// EndThinking ends the open thinking block with the signature collected;
// it does nothing when the open block is not thinking.
func (w *StreamWriter) EndThinking() error {
	if w.open != openThinking {
		return w.err
	}
	w.open = openNone
	sig := w.sig
	w.sig = ""
	return w.emit(engine.StreamEvent{Kind: engine.StreamThinkingEnd, Signature: sig})
}

// ToolCallStart ends the open block (a tool call too: calls follow each
// other, they never nest) and starts tool call id calling name. The id and
// name ride on every event of the call.
func (w *StreamWriter) ToolCallStart(id, name string) error {
	if err := w.start(openToolCall, engine.StreamEvent{Kind: engine.StreamToolCallStart, ToolCallID: id, ToolName: name}); err != nil {
		return err
	}
	w.id, w.name = id, name
	return nil
}

// ToolCallDelta appends a raw fragment of the open tool call's arguments
// JSON. An empty fragment emits nothing, and so does a fragment with no
// tool call open: it has no call to belong to.
func (w *StreamWriter) ToolCallDelta(fragment string) error {
	if w.open != openToolCall || fragment == "" {
		return w.err
	}
	return w.emit(engine.StreamEvent{Kind: engine.StreamToolCallDelta, ToolCallID: w.id, ToolName: w.name, Delta: fragment})
}

// ToolCallSignature sets the signature that the open tool call's end
// carries (Gemini's thought signature of a function call part, which the
// next request sends back with the call). It does nothing when no tool
// call is open, and emits nothing itself.
func (w *StreamWriter) ToolCallSignature(sig string) {
	if w.open == openToolCall {
		w.sig = sig
	}
}

// ToolCallEnd ends the open tool call. args, when not nil, is the final
// arguments object (it wins over the fragments); it does nothing when no
// tool call is open.
func (w *StreamWriter) ToolCallEnd(args []byte) error {
	if w.open != openToolCall {
		return w.err
	}
	w.open = openNone
	id, name, sig := w.id, w.name, w.sig
	w.id, w.name, w.sig = "", "", ""
	return w.emit(engine.StreamEvent{Kind: engine.StreamToolCallEnd, ToolCallID: id, ToolName: name, Arguments: args, Signature: sig})
}

// ToolCall emits a whole tool call whose arguments the backend sent at
// once: its start, args as the one fragment, and its end with args as the
// final object.
func (w *StreamWriter) ToolCall(id, name string, args []byte) error {
	if err := w.ToolCallStart(id, name); err != nil {
		return err
	}
	if err := w.ToolCallDelta(string(args)); err != nil {
		return err
	}
	return w.ToolCallEnd(args)
}

// RedactedThinking ends the open block and adds a whole redacted thinking
// block with the backend's opaque data.
func (w *StreamWriter) RedactedThinking(data string) error {
	if err := w.EndBlock(); err != nil {
		return err
	}
	return w.emit(engine.StreamEvent{Kind: engine.StreamRedactedThinking, Delta: data})
}

// EndBlock ends the open block, whatever its kind (a tool call without
// final arguments).
func (w *StreamWriter) EndBlock() error {
	switch w.open {
	case openText:
		return w.EndText()
	case openThinking:
		return w.EndThinking()
	case openToolCall:
		return w.ToolCallEnd(nil)
	}
	return w.err
}

// Usage reports the call's cumulative token counts; it may come at any
// time, as often as the backend updates them, and leaves the open block
// open.
func (w *StreamWriter) Usage(u engine.Usage) error {
	return w.emit(engine.StreamEvent{Kind: engine.StreamUsage, Usage: u})
}

// Done ends the open block and emits engine.StreamDone: the stream's last
// event. responseID is the backend's id for the response, "" when it has
// none.
func (w *StreamWriter) Done(stop engine.StopReason, responseID string) error {
	if err := w.EndBlock(); err != nil {
		return err
	}
	if err := w.emit(engine.StreamEvent{Kind: engine.StreamDone, StopReason: stop, ResponseID: responseID}); err != nil {
		return err
	}
	w.stopped = true
	return nil
}
