package engine

import "context"

// Concurrency says how a tool call may overlap with others of the same turn.
type Concurrency int

// Shared tools run in parallel with each other; an exclusive tool runs alone.
const (
	Shared Concurrency = iota
	Exclusive
)

// Tool is a model-callable tool.
type Tool interface {
	Name() string
	Description() string
	Schema() []byte // JSON Schema object for the arguments
	Concurrency() Concurrency
	// Run executes one call. A failure the model should see is a result with
	// IsError set, not a Go error; a Go error means infrastructure failure
	// or cancellation and is turned into an error result by the loop.
	Run(ctx context.Context, call ToolCall, update func(ToolResult)) (ToolResult, error)
}

// IdempotentTool is a Tool that says whether running one call again has
// the same effect as running it once (a tool that only reads: read, grep,
// find). A durable runner (engine/durable) runs such a call again when it
// may have started before a crash and left no result; any other call in
// that state is reported as interrupted, never repeated.
type IdempotentTool interface {
	Idempotent() bool
}

// IsIdempotent reports whether t declares itself idempotent.
func IsIdempotent(t Tool) bool {
	it, ok := t.(IdempotentTool)
	return ok && it.Idempotent()
}

// ToolCall is one invocation of a tool by the model.
type ToolCall struct {
	ID        string
	Name      string
	Arguments []byte // JSON object
	// UI asks the host's user (dialogs), for the tools and the gate that
	// need to; the session sets it on every call (never nil there).
	UI UI
	// Todos returns the session's todo list as it stands (a copy), for the
	// todo tool; nil when the call has no session (tests).
	Todos func() []TodoPhase

	// order is the call's turn to send requests to the host (deterministic
	// mode; nil otherwise).
	order *sendOrder
}

// ToolResult is what a tool returns.
type ToolResult struct {
	Content   []ContentBlock
	Details   []byte // raw JSON object; nil encodes as {}
	IsError   bool
	IsWarning bool
	// Raw, when set, is the result object as the tool's owner sent it (a
	// host tool's result): tool_execution_end and updates carry it verbatim,
	// extra keys included; Content and Details still feed the tool result
	// message.
	Raw []byte
}
