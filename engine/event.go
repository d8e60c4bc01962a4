package engine

import (
	"slices"
	"strconv"
)

// Event is one session event as forwarded on the wire (agent-core.md §2).
// Events are delivered to the Sink from a function running on the session's
// executor, so an event's pointers (notably MessageUpdate.Partial) are only
// valid for the duration of the Sink call: encode, do not retain.
type Event interface {
	EventType() string
	// AppendJSON appends the event's wire encoding (one JSON object).
	AppendJSON(dst []byte) []byte
}

// Sink receives events in production order. It is called from the
// session's executor and may block (backpressure); it must not call back
// into the session (Post or Call).
type Sink interface {
	Event(ev Event)
}

// AgentStart opens a run.
type AgentStart struct{}

// AgentEnd closes a run; Messages are the messages the run added. Budget
// is the budget it stopped on (nil: none), sent as stopReason
// "budget_reached" and budget (ours, additive).
type AgentEnd struct {
	Messages []Message
	Budget   *BudgetError
}

// TurnStart opens a turn (one assistant response and its tool round).
type TurnStart struct{}

// TurnEnd closes a turn.
type TurnEnd struct {
	Message     *AssistantMessage
	ToolResults []*ToolResultMessage
}

// MessageStart announces a message (user, assistant, toolResult, ...).
type MessageStart struct{ Message Message }

// MessageEnd completes a message.
type MessageEnd struct{ Message Message }

// UpdateKind is the assistantMessageEvent type of a MessageUpdate.
type UpdateKind string

// The assistantMessageEvent types forwarded as message_update.
const (
	UpdateTextStart     UpdateKind = "text_start"
	UpdateTextDelta     UpdateKind = "text_delta"
	UpdateTextEnd       UpdateKind = "text_end"
	UpdateThinkingStart UpdateKind = "thinking_start"
	UpdateThinkingDelta UpdateKind = "thinking_delta"
	UpdateThinkingEnd   UpdateKind = "thinking_end"
	UpdateToolCallStart UpdateKind = "toolcall_start"
	UpdateToolCallDelta UpdateKind = "toolcall_delta"
	UpdateToolCallEnd   UpdateKind = "toolcall_end"
)

// MessageUpdate is one streaming step of the assistant message.
type MessageUpdate struct {
	Kind         UpdateKind
	ContentIndex int
	Delta        string        // *_delta
	Content      string        // text_end, thinking_end
	ToolCall     *ContentBlock // toolcall_end
	Partial      *Partial      // the message so far; valid during the Sink call only
	// Lean drops the two partial snapshots (--rpc-updates=delta).
	Lean bool
}

// ToolExecutionStart announces a tool call's execution.
type ToolExecutionStart struct {
	ToolCallID string
	ToolName   string
	Args       []byte
	Intent     string
}

// ToolExecutionUpdate carries streamed partial output of a tool.
type ToolExecutionUpdate struct {
	ToolCallID    string
	ToolName      string
	Args          []byte
	PartialResult []byte // raw JSON object
}

// ToolExecutionEnd carries a tool's result. Placeholder results for
// unexecuted calls of an aborted message omit isWarning (NoWarning).
type ToolExecutionEnd struct {
	ToolCallID string
	ToolName   string
	Result     []byte // raw JSON object
	IsError    bool
	IsWarning  bool
	NoWarning  bool
}

// AutoRetryStart announces a retry wait after a transient failure.
type AutoRetryStart struct {
	Attempt      int
	MaxAttempts  int
	DelayMs      int64
	ErrorMessage string
}

// AutoRetryEnd closes a retry: success at the first good assistant
// message, or failure (exhausted, cancelled, or a failure of another kind).
type AutoRetryEnd struct {
	Success    bool
	Attempt    int
	FinalError string // omitted when empty
}

// EventType implements Event.
func (AutoRetryStart) EventType() string { return "auto_retry_start" }

// EventType implements Event.
func (AutoRetryEnd) EventType() string { return "auto_retry_end" }

// AppendJSON implements Event.
func (e AutoRetryStart) AppendJSON(dst []byte) []byte {
	dst = appendIntField(appendType(dst, "auto_retry_start"), "attempt", int64(e.Attempt))
	dst = appendIntField(dst, "maxAttempts", int64(e.MaxAttempts))
	dst = appendIntField(dst, "delayMs", e.DelayMs)
	dst = appendStringField(dst, "errorMessage", e.ErrorMessage)
	return append(dst, '}')
}

// AppendJSON implements Event.
func (e AutoRetryEnd) AppendJSON(dst []byte) []byte {
	dst = appendBoolField(appendType(dst, "auto_retry_end"), "success", e.Success)
	dst = appendIntField(dst, "attempt", int64(e.Attempt))
	if e.FinalError != "" {
		dst = appendStringField(dst, "finalError", e.FinalError)
	}
	return append(dst, '}')
}

// SizeHint bounds the encoded length of the frame.
func (e MessageUpdate) SizeHint() int {
	n := 160 + len(e.Delta) + len(e.Content)
	if e.ToolCall != nil {
		n += len(e.ToolCall.Arguments) + len(e.ToolCall.Name) + len(e.ToolCall.ID) + 64
	}
	if !e.Lean && e.Partial != nil {
		n += 2 * e.Partial.SizeHint()
	}
	return n
}

// EventType implementations.
func (AgentStart) EventType() string          { return "agent_start" }
func (AgentEnd) EventType() string            { return "agent_end" }
func (TurnStart) EventType() string           { return "turn_start" }
func (TurnEnd) EventType() string             { return "turn_end" }
func (MessageStart) EventType() string        { return "message_start" }
func (MessageEnd) EventType() string          { return "message_end" }
func (MessageUpdate) EventType() string       { return "message_update" }
func (ToolExecutionStart) EventType() string  { return "tool_execution_start" }
func (ToolExecutionUpdate) EventType() string { return "tool_execution_update" }
func (ToolExecutionEnd) EventType() string    { return "tool_execution_end" }

func appendType(dst []byte, t string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, t...)
	return append(dst, '"')
}

func appendMessage(dst []byte, m Message) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	if a, ok := m.(interface{ AppendJSON([]byte) []byte }); ok {
		return a.AppendJSON(dst)
	}
	b, _ := m.MarshalJSON()
	return append(dst, b...)
}

// AppendMessages appends a JSON array of messages, each in its own
// encoding (no re-validation: get_messages of a 100k-message session is
// one append pass).
func AppendMessages(dst []byte, ms []Message) []byte { return appendMessages(dst, ms) }

func appendMessages(dst []byte, ms []Message) []byte {
	n := 2 + len(ms)
	for _, m := range ms {
		n += messageSizeHint(m)
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessage(dst, m)
	}
	return append(dst, ']')
}

func orEmptyObject(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("{}")
	}
	return raw
}

// AppendJSON implementations. Key orders follow the original.
func (AgentStart) AppendJSON(dst []byte) []byte { return append(appendType(dst, "agent_start"), '}') }
func (e AgentEnd) AppendJSON(dst []byte) []byte {
	dst = appendMessages(appendKey(appendType(dst, "agent_end"), "messages"), e.Messages)
	if e.Budget != nil {
		dst = appendStringField(dst, "stopReason", StopBudgetReached)
		dst = e.Budget.appendJSON(appendKey(dst, "budget"))
	}
	return append(dst, '}')
}
func (TurnStart) AppendJSON(dst []byte) []byte { return append(appendType(dst, "turn_start"), '}') }
func (e TurnEnd) AppendJSON(dst []byte) []byte {
	dst = appendKey(appendType(dst, "turn_end"), "message")
	dst = appendMessage(dst, e.Message)
	dst = append(appendKey(dst, "toolResults"), '[')
	for i, r := range e.ToolResults {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMessage(dst, r)
	}
	return append(dst, ']', '}')
}
func (e MessageStart) AppendJSON(dst []byte) []byte {
	return append(appendMessage(appendKey(appendType(dst, "message_start"), "message"), e.Message), '}')
}
func (e MessageEnd) AppendJSON(dst []byte) []byte {
	return append(appendMessage(appendKey(appendType(dst, "message_end"), "message"), e.Message), '}')
}

// AppendJSON encodes {"type":"message_update","assistantMessageEvent":{...,
// "partial":P},"message":P}. P is encoded once from the partial's cached
// bytes and copied for the second occurrence.
func (e MessageUpdate) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"message_update","assistantMessageEvent":{"type":"`...)
	dst = append(dst, e.Kind...)
	dst = append(dst, `","contentIndex":`...)
	dst = strconv.AppendInt(dst, int64(e.ContentIndex), 10)
	switch e.Kind {
	case UpdateTextDelta, UpdateThinkingDelta, UpdateToolCallDelta:
		dst = appendStringField(dst, "delta", e.Delta)
	case UpdateTextEnd, UpdateThinkingEnd:
		dst = appendStringField(dst, "content", e.Content)
	case UpdateToolCallEnd:
		if e.ToolCall != nil {
			dst = e.ToolCall.AppendJSON(appendKey(dst, "toolCall"))
		}
	}
	if e.Lean || e.Partial == nil {
		return append(dst, '}', '}')
	}
	dst = appendKey(dst, "partial")
	start := len(dst)
	dst = e.Partial.AppendJSON(dst)
	end := len(dst)
	dst = append(dst, `},"message":`...)
	dst = append(dst, dst[start:end]...)
	return append(dst, '}')
}

func (e ToolExecutionStart) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "tool_execution_start"), "toolCallId", e.ToolCallID)
	dst = appendStringField(dst, "toolName", e.ToolName)
	dst = appendRawField(dst, "args", orEmptyObject(e.Args))
	if e.Intent != "" {
		dst = appendStringField(dst, "intent", e.Intent)
	}
	return append(dst, '}')
}
func (e ToolExecutionUpdate) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "tool_execution_update"), "toolCallId", e.ToolCallID)
	dst = appendStringField(dst, "toolName", e.ToolName)
	dst = appendRawField(dst, "args", orEmptyObject(e.Args))
	dst = appendRawField(dst, "partialResult", orEmptyObject(e.PartialResult))
	return append(dst, '}')
}
func (e ToolExecutionEnd) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "tool_execution_end"), "toolCallId", e.ToolCallID)
	dst = appendStringField(dst, "toolName", e.ToolName)
	dst = appendRawField(dst, "result", orEmptyObject(e.Result))
	dst = appendBoolField(dst, "isError", e.IsError)
	if !e.NoWarning {
		dst = appendBoolField(dst, "isWarning", e.IsWarning)
	}
	return append(dst, '}')
}
