package extension

import (
	"github.com/xcsh-go/xcsh/engine"
)

// The names an extension may subscribe to, one bit each. Events are sent
// as notifications (nothing is awaited); hooks are requests whose answer
// may change what the session does.
const (
	bitAgentStart uint64 = 1 << iota
	bitAgentEnd
	bitTurnStart
	bitTurnEnd
	bitMessageStart
	bitMessageUpdate
	bitMessageEnd
	bitToolStart
	bitToolUpdate
	bitToolEnd
	bitRetryStart
	bitRetryEnd
	bitSessionStart
	bitSessionShutdown
	bitModelSelect
	bitThinkingSelect

	bitInput
	bitBeforeAgentStart
	bitContext
	bitBeforeProviderRequest
	bitToolCall
	bitToolResult
	bitUserBash
	bitBeforeSwitch
	bitBeforeFork
	bitBeforeCompact

	// bitCommands is set for an extension with commands (not a name).
	bitCommands
)

// names maps the subscribable names to their bits.
var names = map[string]uint64{
	"agent_start":             bitAgentStart,
	"agent_end":               bitAgentEnd,
	"turn_start":              bitTurnStart,
	"turn_end":                bitTurnEnd,
	"message_start":           bitMessageStart,
	"message_update":          bitMessageUpdate,
	"message_end":             bitMessageEnd,
	"tool_execution_start":    bitToolStart,
	"tool_execution_update":   bitToolUpdate,
	"tool_execution_end":      bitToolEnd,
	"auto_retry_start":        bitRetryStart,
	"auto_retry_end":          bitRetryEnd,
	"session_start":           bitSessionStart,
	"session_shutdown":        bitSessionShutdown,
	"model_select":            bitModelSelect,
	"thinking_level_select":   bitThinkingSelect,
	"input":                   bitInput,
	"before_agent_start":      bitBeforeAgentStart,
	"context":                 bitContext,
	"before_provider_request": bitBeforeProviderRequest,
	"tool_call":               bitToolCall,
	"tool_result":             bitToolResult,
	"user_bash":               bitUserBash,
	"session_before_switch":   bitBeforeSwitch,
	"session_before_fork":     bitBeforeFork,
	"session_before_compact":  bitBeforeCompact,
}

// frameBits is the union of the bits of events that are Sink frames.
const frameBits = bitAgentStart | bitAgentEnd | bitTurnStart | bitTurnEnd | bitMessageStart | bitMessageUpdate |
	bitMessageEnd | bitToolStart | bitToolUpdate | bitToolEnd | bitRetryStart | bitRetryEnd

// frameBit is the subscription bit of a session event (0: none an
// extension can subscribe to, such as the UI requests).
func frameBit(ev engine.Event) uint64 {
	switch ev.(type) {
	case engine.MessageUpdate:
		return bitMessageUpdate
	case engine.AgentStart:
		return bitAgentStart
	case engine.AgentEnd:
		return bitAgentEnd
	case engine.TurnStart:
		return bitTurnStart
	case engine.TurnEnd:
		return bitTurnEnd
	case engine.MessageStart:
		return bitMessageStart
	case engine.MessageEnd:
		return bitMessageEnd
	case engine.ToolExecutionStart:
		return bitToolStart
	case engine.ToolExecutionUpdate:
		return bitToolUpdate
	case engine.ToolExecutionEnd:
		return bitToolEnd
	case engine.AutoRetryStart:
		return bitRetryStart
	case engine.AutoRetryEnd:
		return bitRetryEnd
	}
	return 0
}

// Tap returns the Sink that passes every event to next and the events
// extensions subscribed to to them, as notifications whose params are the
// event's wire frame. It runs on the session's executor: sending only
// queues (an extension that stops reading is failed, never waited for).
// With no extension subscribed to an event, the event costs one atomic
// load here and nothing is encoded.
//
// Subscriptions are fixed by the handshakes (they only shrink when an
// extension is removed), so when no loaded extension subscribed to any
// event that is a frame, Tap returns next itself: the session's events
// then never pass through the host at all. Call it after Load.
func (h *Host) Tap(next engine.Sink) engine.Sink {
	if h.subs.Load()&frameBits == 0 {
		return next
	}
	return &tap{h: h, next: next}
}

type tap struct {
	h    *Host
	next engine.Sink
}

// Backlogged passes on the front's word (engine.Backlog): behind a tap,
// a slow host's deltas are still merged.
func (t *tap) Backlogged() bool {
	b, ok := t.next.(engine.Backlog)
	return ok && b.Backlogged()
}

func (t *tap) Event(ev engine.Event) {
	t.next.Event(ev)
	subs := t.h.subs.Load()
	if subs&frameBits == 0 {
		return
	}
	bit := frameBit(ev)
	if subs&bit == 0 {
		return
	}
	exts := t.h.live(bit)
	if len(exts) == 0 {
		return
	}
	// One encoding for all, straight into the line: lines are never
	// modified once queued.
	line := append(make([]byte, 0, 256), `{"jsonrpc":"2.0","method":"`...)
	line = append(line, ev.EventType()...)
	line = append(ev.AppendJSON(append(line, `","params":`...)), '}', '\n')
	for _, e := range exts {
		e.send(line)
	}
}
