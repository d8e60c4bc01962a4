package engine

import "encoding/json"

// The codec of every message type, content block, usage and file mention
// (AppendJSON, MarshalJSON, UnmarshalJSON and the fast readers) is
// generated from one table per object: see internal/codecgen.
//go:generate go run ./internal/codecgen/cmd/codecgen

// Message is any message of the agent's context: the LLM roles (user,
// assistant, toolResult) and the coding-agent roles (bashExecution, ...).
// Each concrete type encodes itself with the exact key order of the
// original (agent-core.md §1).
type Message interface {
	Role() string
	json.Marshaler
}

// Block types.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redactedThinking"
	BlockImage            = "image"
	BlockToolCall         = "toolCall"
)

// ContentBlock is one part of a message's content. Which fields are used
// depends on Type.
type ContentBlock struct {
	Type              string
	Text              string // text
	TextSignature     string // text, optional
	Thinking          string // thinking
	ThinkingSignature string // thinking, optional
	Data              string // image (base64), redactedThinking
	MimeType          string // image
	ID                string // toolCall
	Name              string // toolCall
	Arguments         []byte // toolCall: a JSON object, compact
	ThoughtSignature  string // toolCall, optional
	Intent            string // toolCall, optional

	// cut says why a tool call must not run (its arguments were cut off);
	// set when the streamed message ends, never encoded (cutcalls.go).
	cut cutReason

	// raw is the whole block as decoded when its type is one this package
	// does not know; it is re-encoded verbatim so nothing is lost.
	raw []byte
}

// TextBlock returns a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: BlockText, Text: s} }

// MarshalJSON implements json.Marshaler.
func (b ContentBlock) MarshalJSON() ([]byte, error) { return b.AppendJSON(nil), nil }

func appendBlocks(dst []byte, blocks []ContentBlock) []byte {
	dst = append(dst, '[')
	for i := range blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = blocks[i].AppendJSON(dst)
	}
	return append(dst, ']')
}

// appendContent appends a content value: a JSON string when asString and
// the content is one text block (the original keeps content given as a
// string as a string), else the array of blocks.
func appendContent(dst []byte, blocks []ContentBlock, asString bool) []byte {
	if asString && len(blocks) == 1 && blocks[0].Type == BlockText && blocks[0].raw == nil {
		return AppendJSONString(dst, blocks[0].Text)
	}
	return appendBlocks(dst, blocks)
}

// Cost is the dollar cost of one response.
type Cost struct {
	Input      float64
	Output     float64
	CacheRead  float64
	CacheWrite float64
	Total      float64
}

// Usage is the token accounting of one response.
type Usage struct {
	Input           int64
	Output          int64
	CacheRead       int64
	CacheWrite      int64
	TotalTokens     int64
	PremiumRequests *int64
	Cost            Cost
}

// ApplyCost fills u.Cost from the model's per-million prices.
func (u *Usage) ApplyCost(c ModelCost) {
	u.Cost.Input = c.Input / 1e6 * float64(u.Input)
	u.Cost.Output = c.Output / 1e6 * float64(u.Output)
	u.Cost.CacheRead = c.CacheRead / 1e6 * float64(u.CacheRead)
	u.Cost.CacheWrite = c.CacheWrite / 1e6 * float64(u.CacheWrite)
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
}

// StopReason says why an assistant message ended.
type StopReason string

// The stop reasons of the wire.
const (
	StopStop    StopReason = "stop"
	StopLength  StopReason = "length"
	StopToolUse StopReason = "toolUse"
	StopError   StopReason = "error"
	StopAborted StopReason = "aborted"
)

// AbortedMessage is the errorMessage of an aborted assistant message.
const AbortedMessage = "Request was aborted"

// UserMessage is a message typed by the user (or queued by the host).
//
// The booleans are together at the end so the struct is 80 bytes, not 96
// (a loaded session holds one per user message).
type UserMessage struct {
	Content         []ContentBlock
	Attribution     string // "user" unless set
	ProviderPayload []byte // raw JSON; omitted when nil
	Timestamp       int64
	StringContent   bool // encode a single text block as a JSON string
	Synthetic       bool

	// noAttribution is set when a decoded message had no attribution key,
	// so it encodes again without one; messages built here always carry it.
	noAttribution bool
}

// Role implements Message.
func (*UserMessage) Role() string { return "user" }

// Text returns the concatenated text blocks.
func (m *UserMessage) Text() string { return joinText(m.Content) }

// AssistantMessage is one model response.
type AssistantMessage struct {
	Content         []ContentBlock
	API             string
	Provider        string
	Model           string
	ResponseID      string
	Usage           Usage
	StopReason      StopReason
	ErrorMessage    string
	ProviderPayload []byte // raw JSON; omitted when nil
	Timestamp       int64
	Duration        *float64 // milliseconds, optional
	TTFT            *float64 // milliseconds to the first token, optional
}

// Role implements Message.
func (*AssistantMessage) Role() string { return "assistant" }

// Text returns the concatenated text blocks.
func (m *AssistantMessage) Text() string { return joinText(m.Content) }

// ToolCalls returns the tool-call blocks.
func (m *AssistantMessage) ToolCalls() []ContentBlock {
	var calls []ContentBlock
	for _, b := range m.Content {
		if b.Type == BlockToolCall {
			calls = append(calls, b)
		}
	}
	return calls
}

// ToolResultMessage is the result of one tool call.
type ToolResultMessage struct {
	ToolCallID  string
	ToolName    string
	Content     []ContentBlock
	Details     []byte // raw JSON; omitted when nil
	IsError     bool
	IsWarning   *bool
	Attribution string // omitted when empty
	PrunedAt    int64  // when tool-output pruning emptied it; omitted when 0
	Timestamp   int64
}

// Role implements Message.
func (*ToolResultMessage) Role() string { return "toolResult" }

// BashExecutionMessage records a shell command the host ran with the RPC
// bash command; the next model call sees it as a user message.
type BashExecutionMessage struct {
	Command            string
	Output             string
	ExitCode           *int
	Cancelled          bool
	Truncated          bool
	Meta               []byte // raw JSON, optional
	Timestamp          int64
	ExcludeFromContext bool
}

// Role implements Message.
func (*BashExecutionMessage) Role() string { return "bashExecution" }

func joinText(blocks []ContentBlock) string {
	var n int
	var only string
	for _, b := range blocks {
		if b.Type == BlockText {
			n++
			only = b.Text
		}
	}
	if n <= 1 {
		return only
	}
	var buf []byte
	for _, b := range blocks {
		if b.Type == BlockText {
			buf = append(buf, b.Text...)
		}
	}
	return string(buf)
}

// The size hints give MarshalJSON a buffer that nearly always holds the
// encoding, so a message costs one allocation instead of a chain of
// doublings (get_messages of a 100k-message session encoded each message
// through four or five of them). They are estimates: text that escapes a
// lot just grows the buffer once more.

// strHint is the room a string value takes, escapes included mostly.
func strHint(s string) int { return len(s) + len(s)/8 }

func blocksHint(blocks []ContentBlock) int {
	n := 2
	for i := range blocks {
		n += 1 + blocks[i].sizeHint()
	}
	return n
}

func blockPtrHint(b *ContentBlock) int {
	if b == nil {
		return 0
	}
	return b.sizeHint()
}

func fileMentionsHint(fs []FileMention) int {
	n := 2
	for i := range fs {
		n += 1 + fs[i].sizeHint()
	}
	return n
}

// messageSizeHint is about the length of m's encoding: appending many
// messages to one buffer (get_messages) can grow it once to the sum
// instead of through a chain of copies (a 23 MB frame grown by append
// leaves about four times its size in garbage).
func messageSizeHint(m Message) int {
	switch m := m.(type) {
	case interface{ sizeHint() int }:
		return m.sizeHint()
	case *OpaqueMessage:
		return len(m.raw)
	}
	return 256
}
