package engine

import (
	"context"
	"time"
)

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
	// Output, when set, asks for a final answer that is JSON valid against
	// a schema (output.go). An adapter whose backend has a native
	// structured output sends it (OpenAI response_format / text.format,
	// Ollama format, Gemini responseSchema); the system prompt says it to
	// every model, and the engine checks the answer either way.
	Output *OutputFormat
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
	// StreamRedactedThinking adds a whole redactedThinking block (Delta is
	// its opaque data, replayed to the provider on the next call). It opens
	// and closes at once, so it has no start or end and no message_update.
	StreamRedactedThinking
	// StreamNotice is something the user should know about the call that
	// is not part of the answer (Delta: the text; a model asked without
	// the tools it cannot take, say). The session tells the host once per
	// text, as a warning notify.
	StreamNotice
)

// StreamEvent is one event of a provider stream.
type StreamEvent struct {
	Kind       StreamEventKind
	Delta      string
	Signature  string // the block's signature, on StreamThinkingEnd and StreamTextEnd; a tool call's thought signature (Gemini) on StreamToolCallEnd
	ToolCallID string
	ToolName   string
	Arguments  []byte // final arguments JSON object, on StreamToolCallEnd (optional)
	Usage      Usage
	StopReason StopReason
	// ResponseID is the backend's id for the response; any event may carry
	// it (the first that can), StreamDone at the latest.
	ResponseID string
}

// ErrorKind classifies a provider failure for the engine's retry and
// overflow handling. Adapters set it from what their backend says (status
// code, error type), so the engine never parses SDK-specific errors.
type ErrorKind int

// The provider error kinds.
const (
	ErrorOther           ErrorKind = iota // not known to be transient
	ErrorRateLimit                        // 429, quota or rate limit
	ErrorOverloaded                       // 5xx, 529, capacity: transient
	ErrorContextOverflow                  // the request does not fit the model's context
	ErrorAuth                             // 401/403, missing or bad key: never retried
	ErrorTransport                        // network failure or a stream that went silent
	// ErrorProtocol: the server answered something that is not the API's
	// stream (a proxy's HTML page with status 200, a line over the
	// decoder's cap). Asking again gets the same answer, so it is never
	// retried, whatever its text says (a page titled "502 Bad Gateway").
	ErrorProtocol
	// ErrorNoServer: nothing listens at the address of a server on this
	// machine (LocalRefused: a refused connection to a loopback address).
	// The server is not running, and asking again in seconds would only
	// hold back the message that says so: never retried.
	ErrorNoServer
)

var errorKindNames = [...]string{"other", "rate_limit", "overloaded", "context_overflow", "auth", "transport", "protocol", "no_server"}

func (k ErrorKind) String() string {
	if int(k) < len(errorKindNames) {
		return errorKindNames[k]
	}
	return "unknown"
}

// Retryable reports whether a failure of this kind may succeed when tried
// again unchanged.
func (k ErrorKind) Retryable() bool {
	return k == ErrorRateLimit || k == ErrorOverloaded || k == ErrorTransport
}

// ProviderError is a failure reported by a backend (or by the fake
// provider's script). Message is the text the host sees as the assistant
// message's errorMessage; Err, when set, is the adapter's underlying error
// (an SDK error type), reachable with errors.As through Unwrap.
//
// The backend's requested wait is RetryAfter when it gave a delay, RetryAt
// when it gave an instant (an HTTP-date Retry-After): the engine measures
// an instant on its own clock, so an adapter never reads the time for it
// (provider.ParseRetryAfter gives both from the headers).
type ProviderError struct {
	Kind       ErrorKind
	Status     int           // HTTP-like status code; 0 when there is none
	Message    string        // "" means Err's text
	RetryAfter time.Duration // the backend's requested delay; 0 when none
	RetryAt    time.Time     // the backend's requested retry instant; zero when none (RetryAfter wins)
	Err        error
}

func (e *ProviderError) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the underlying cause.
func (e *ProviderError) Unwrap() error { return e.Err }
