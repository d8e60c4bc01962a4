package engine

import (
	"encoding/json"
	"strconv"
)

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

// AppendJSON appends the block's JSON encoding.
func (b *ContentBlock) AppendJSON(dst []byte) []byte {
	if b.raw != nil {
		return append(dst, b.raw...)
	}
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, b.Type)
	switch b.Type {
	case BlockText:
		dst = appendStringField(dst, "text", b.Text)
		if b.TextSignature != "" {
			dst = appendStringField(dst, "textSignature", b.TextSignature)
		}
	case BlockThinking:
		dst = appendStringField(dst, "thinking", b.Thinking)
		if b.ThinkingSignature != "" {
			dst = appendStringField(dst, "thinkingSignature", b.ThinkingSignature)
		}
	case BlockRedactedThinking:
		dst = appendStringField(dst, "data", b.Data)
	case BlockImage:
		dst = appendStringField(dst, "data", b.Data)
		dst = appendStringField(dst, "mimeType", b.MimeType)
	case BlockToolCall:
		dst = appendStringField(dst, "id", b.ID)
		dst = appendStringField(dst, "name", b.Name)
		args := b.Arguments
		if len(args) == 0 {
			args = []byte("{}")
		}
		dst = appendRawField(dst, "arguments", args)
		if b.ThoughtSignature != "" {
			dst = appendStringField(dst, "thoughtSignature", b.ThoughtSignature)
		}
		if b.Intent != "" {
			dst = appendStringField(dst, "intent", b.Intent)
		}
	}
	return append(dst, '}')
}

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

// AppendJSON appends the usage object.
func (u *Usage) AppendJSON(dst []byte) []byte {
	dst = strconv.AppendInt(append(dst, `{"input":`...), u.Input, 10)
	dst = appendIntField(dst, "output", u.Output)
	dst = appendIntField(dst, "cacheRead", u.CacheRead)
	dst = appendIntField(dst, "cacheWrite", u.CacheWrite)
	dst = appendIntField(dst, "totalTokens", u.TotalTokens)
	if u.PremiumRequests != nil {
		dst = appendIntField(dst, "premiumRequests", *u.PremiumRequests)
	}
	dst = appendFloat(append(dst, `,"cost":{"input":`...), u.Cost.Input)
	dst = appendFloat(appendKey(dst, "output"), u.Cost.Output)
	dst = appendFloat(appendKey(dst, "cacheRead"), u.Cost.CacheRead)
	dst = appendFloat(appendKey(dst, "cacheWrite"), u.Cost.CacheWrite)
	dst = appendFloat(appendKey(dst, "total"), u.Cost.Total)
	return append(dst, '}', '}')
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

// MarshalJSON implements json.Marshaler.
func (m *UserMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *UserMessage) sizeHint() int {
	return 96 + blocksHint(m.Content) + len(m.Attribution) + len(m.ProviderPayload)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *UserMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"user","content":`...)
	dst = appendContent(dst, m.Content, m.StringContent)
	if m.Synthetic {
		dst = appendBoolField(dst, "synthetic", true)
	}
	if attr := m.Attribution; attr != "" || !m.noAttribution {
		if attr == "" {
			attr = "user"
		}
		dst = appendStringField(dst, "attribution", attr)
	}
	if m.ProviderPayload != nil {
		dst = appendRawField(dst, "providerPayload", m.ProviderPayload)
	}
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	return append(dst, '}')
}

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

// MarshalJSON implements json.Marshaler.
func (m *AssistantMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *AssistantMessage) sizeHint() int {
	return 320 + blocksHint(m.Content) + len(m.API) + len(m.Provider) + len(m.Model) + len(m.ResponseID) + strHint(m.ErrorMessage) + len(m.ProviderPayload)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *AssistantMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"assistant","content":`...)
	dst = appendBlocks(dst, m.Content)
	return m.appendTail(dst)
}

// appendTail appends everything after "content" (including the closing
// brace). The streaming partial caches these bytes.
func (m *AssistantMessage) appendTail(dst []byte) []byte {
	dst = appendStringField(dst, "api", m.API)
	dst = appendStringField(dst, "provider", m.Provider)
	dst = appendStringField(dst, "model", m.Model)
	if m.ResponseID != "" {
		dst = appendStringField(dst, "responseId", m.ResponseID)
	}
	dst = m.Usage.AppendJSON(appendKey(dst, "usage"))
	dst = appendStringField(dst, "stopReason", string(m.StopReason))
	if m.ErrorMessage != "" {
		dst = appendStringField(dst, "errorMessage", m.ErrorMessage)
	}
	if m.ProviderPayload != nil {
		dst = appendRawField(dst, "providerPayload", m.ProviderPayload)
	}
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	if m.Duration != nil {
		dst = appendFloat(appendKey(dst, "duration"), *m.Duration)
	}
	if m.TTFT != nil {
		dst = appendFloat(appendKey(dst, "ttft"), *m.TTFT)
	}
	return append(dst, '}')
}

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

// MarshalJSON implements json.Marshaler.
func (m *ToolResultMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *ToolResultMessage) sizeHint() int {
	return 160 + len(m.ToolCallID) + len(m.ToolName) + blocksHint(m.Content) + len(m.Details) + len(m.Attribution)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *ToolResultMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"toolResult"`...)
	dst = appendStringField(dst, "toolCallId", m.ToolCallID)
	dst = appendStringField(dst, "toolName", m.ToolName)
	dst = appendBlocks(appendKey(dst, "content"), m.Content)
	if m.Details != nil {
		dst = appendRawField(dst, "details", m.Details)
	}
	dst = appendBoolField(dst, "isError", m.IsError)
	if m.IsWarning != nil {
		dst = appendBoolField(dst, "isWarning", *m.IsWarning)
	}
	if m.Attribution != "" {
		dst = appendStringField(dst, "attribution", m.Attribution)
	}
	if m.PrunedAt != 0 {
		dst = appendIntField(dst, "prunedAt", m.PrunedAt)
	}
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	return append(dst, '}')
}

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

// MarshalJSON implements json.Marshaler.
func (m *BashExecutionMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *BashExecutionMessage) sizeHint() int {
	return 192 + strHint(m.Command) + strHint(m.Output) + len(m.Meta)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *BashExecutionMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"bashExecution"`...)
	dst = appendStringField(dst, "command", m.Command)
	dst = appendExecution(dst, m.Output, m.ExitCode, m.Cancelled, m.Truncated, m.Meta, m.Timestamp)
	if m.ExcludeFromContext {
		dst = appendBoolField(dst, "excludeFromContext", true)
	}
	return append(dst, '}')
}

// appendExecution appends the keys from "output" to "timestamp", which
// the two execution roles (bash and python) write alike and in this order.
func appendExecution(dst []byte, output string, exitCode *int, cancelled, truncated bool, meta []byte, timestamp int64) []byte {
	dst = appendStringField(dst, "output", output)
	if exitCode != nil {
		dst = appendIntField(dst, "exitCode", int64(*exitCode))
	}
	dst = appendBoolField(dst, "cancelled", cancelled)
	dst = appendBoolField(dst, "truncated", truncated)
	if meta != nil {
		dst = appendRawField(dst, "meta", meta)
	}
	return appendIntField(dst, "timestamp", timestamp)
}

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
		b := &blocks[i]
		if b.raw != nil {
			n += len(b.raw) + 1
			continue
		}
		if b.Type == BlockToolCall {
			n += 32 // its id, name and arguments keys
		}
		n += 32 + strHint(b.Text) + len(b.TextSignature) + strHint(b.Thinking) + len(b.ThinkingSignature) +
			len(b.Data) + len(b.MimeType) + len(b.ID) + len(b.Name) + len(b.Arguments) + len(b.ThoughtSignature) +
			strHint(b.Intent)
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
