package bedrocktest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// The helpers below write the events with the members and the key order
// the service sends, so a test reads like a captured stream.

// pad is the "p" member Bedrock adds to every event so that the size of
// an event does not give its content away; clients ignore it, and so must
// the adapter.
const pad = `"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"`

// Usage is the token counts of a metadata event.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// MessageStart opens the assistant's message.
func MessageStart() Event { return event("messageStart", `{`+pad+`,"role":"assistant"}`) }

// TextDelta adds text to the block at index (text blocks have no start
// event).
func TextDelta(index int, text string) Event {
	return event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"text":%s},%s}`, index, quote(text), pad))
}

// ReasoningDelta adds reasoning text to the block at index.
func ReasoningDelta(index int, text string) Event {
	return event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"reasoningContent":{"text":%s}},%s}`, index, quote(text), pad))
}

// SignatureDelta carries the signature of a reasoning block, after its
// text.
func SignatureDelta(index int, sig string) Event {
	return event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"reasoningContent":{"signature":%s}},%s}`, index, quote(sig), pad))
}

// RedactedDelta is a block of encrypted reasoning, whole.
func RedactedDelta(index int, data []byte) Event {
	return event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"reasoningContent":{"redactedContent":%s}},%s}`, index, quote(base64.StdEncoding.EncodeToString(data)), pad))
}

// ToolUseStart opens a toolUse block; its input streams as ToolUseDelta.
func ToolUseStart(index int, id, name string) Event {
	return event("contentBlockStart", fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"name":%s,"toolUseId":%s}},%s}`, index, quote(name), quote(id), pad))
}

// ToolUseDelta is a fragment of a toolUse block's input JSON.
func ToolUseDelta(index int, input string) Event {
	return event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"toolUse":{"input":%s}},%s}`, index, quote(input), pad))
}

// BlockStop closes the block at index.
func BlockStop(index int) Event {
	return event("contentBlockStop", fmt.Sprintf(`{"contentBlockIndex":%d,%s}`, index, pad))
}

// MessageStop ends the message with a stop reason (end_turn, tool_use,
// max_tokens, ...).
func MessageStop(reason string) Event {
	return event("messageStop", fmt.Sprintf(`{%s,"stopReason":%s}`, pad, quote(reason)))
}

// Metadata is the last event: the usage and the latency.
func Metadata(u Usage) Event {
	var cache strings.Builder
	if u.CacheRead > 0 || u.CacheWrite > 0 {
		fmt.Fprintf(&cache, `,"cacheReadInputTokens":%d,"cacheWriteInputTokens":%d`, u.CacheRead, u.CacheWrite)
	}
	total := u.Input + u.Output + u.CacheRead + u.CacheWrite
	return event("metadata", fmt.Sprintf(`{"metrics":{"latencyMs":312},%s,"usage":{"inputTokens":%d,"outputTokens":%d,"totalTokens":%d%s}}`,
		pad, u.Input, u.Output, total, cache.String()))
}

// Exception is an error inside the stream (throttlingException,
// serviceUnavailableException, validationException,
// modelStreamErrorException, internalServerException).
func Exception(typ, message string) Event {
	return Event{Exception: typ, Data: json.RawMessage(ErrorBody(message))}
}

// ErrorBody is the service's error body.
func ErrorBody(message string) string { return `{"message":` + quote(message) + `}` }

// ErrorResponse is an HTTP error: its status, exception type and message.
func ErrorResponse(status int, errorType, message string) Response {
	return Response{Status: status, ErrorType: errorType, Body: json.RawMessage(ErrorBody(message))}
}

// TextResponse is a whole stream answering text with end_turn.
func TextResponse(text string) Response {
	return Response{Events: []Event{
		MessageStart(),
		TextDelta(0, text),
		BlockStop(0),
		MessageStop("end_turn"),
		Metadata(Usage{Input: 10, Output: 5}),
	}}
}

func event(name, data string) Event { return Event{Event: name, Data: json.RawMessage(data)} }

// quote writes a JSON string without escaping <, > and &.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
