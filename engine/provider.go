package engine

import "context"

// Provider streams one model call. Stream must call fn for every event in
// order, from the calling goroutine, and return when the call is over. It
// returns nil after a StreamDone event, a *ProviderError (or any error) when
// the backend failed, and ctx.Err() (possibly wrapped) when ctx was
// cancelled. When fn returns an error, Stream stops and returns it.
//
// The callback style (as in the ollama client) gives backpressure for free:
// the provider cannot run ahead of the consumer.
type Provider interface {
	Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error
}

// Request is what the engine sends to a provider for one assistant turn.
type Request struct {
	Model         Model
	SystemPrompt  string
	Messages      []Message // the LLM context (custom roles already converted)
	Tools         []ToolSpec
	ThinkingLevel ThinkingLevel // "" when no reasoning parameter is sent
}

// ToolSpec is the model-facing description of a tool.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  []byte // raw JSON Schema object
}

// StreamEventKind says what a StreamEvent carries.
type StreamEventKind int

// The stream event kinds, mirroring the block-level events of the wire's
// assistantMessageEvent. Start/End events delimit a content block; the
// engine assigns content indexes in the order blocks start.
const (
	StreamTextStart StreamEventKind = iota + 1
	StreamTextDelta
	StreamTextEnd
	StreamThinkingStart
	StreamThinkingDelta
	StreamThinkingEnd
	StreamToolCallStart // ToolCallID and ToolName set
	StreamToolCallDelta // Delta is a raw fragment of the arguments JSON
	StreamToolCallEnd   // Arguments may carry the final arguments object
	StreamUsage         // Usage set; replaces the message's usage
	StreamDone          // StopReason set (stop, length or toolUse); ResponseID optional
)

// StreamEvent is one event of a provider stream.
type StreamEvent struct {
	Kind       StreamEventKind
	Delta      string
	Signature  string // thinking signature, on StreamThinkingEnd
	ToolCallID string
	ToolName   string
	Arguments  []byte // final arguments JSON object, on StreamToolCallEnd (optional)
	Usage      Usage
	StopReason StopReason
	ResponseID string
}

// ProviderError is a failure reported by a backend (or by the fake provider's
// script). Status is the HTTP-like status code, 0 when there is none.
type ProviderError struct {
	Status  int
	Message string
}

func (e *ProviderError) Error() string { return e.Message }
