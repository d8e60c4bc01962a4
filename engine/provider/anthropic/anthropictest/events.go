package anthropictest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The helpers below write the events with the key order and the fields the
// API sends, so a test reads like a captured stream.

// Usage is the token counts of a message_start.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// MessageStart is the first event of a stream.
func MessageStart(id, model string, u Usage) Event {
	return data(fmt.Sprintf(`{"type":"message_start","message":{"model":%s,"id":%s,"type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0},"output_tokens":%d,"service_tier":"standard"}}}`,
		quote(model), quote(id), u.Input, u.CacheWrite, u.CacheRead, u.CacheWrite, u.Output))
}

// Ping is the keep-alive event the API sends between others; raw, because
// the API writes this one with a space after the colon.
func Ping() Event { return Event{Raw: "event: ping\ndata: {\"type\": \"ping\"}\n\n"} }

// TextStart opens a text block.
func TextStart(index int) Event {
	return data(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
}

// TextDelta adds text to a text block.
func TextDelta(index int, text string) Event {
	return data(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, quote(text)))
}

// ThinkingStart opens a thinking block.
func ThinkingStart(index int) Event {
	return data(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, index))
}

// ThinkingDelta adds thinking text.
func ThinkingDelta(index int, text string) Event {
	return data(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, index, quote(text)))
}

// SignatureDelta carries the signature of a thinking block, just before its
// stop.
func SignatureDelta(index int, sig string) Event {
	return data(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":%s}}`, index, quote(sig)))
}

// RedactedThinking opens a redacted_thinking block, which arrives whole.
func RedactedThinking(index int, payload string) Event {
	return data(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"redacted_thinking","data":%s}}`, index, quote(payload)))
}

// ToolUseStart opens a tool_use block; its input streams as InputJSONDelta.
func ToolUseStart(index int, id, name string) Event {
	return data(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, index, quote(id), quote(name)))
}

// InputJSONDelta is a fragment of a tool_use input.
func InputJSONDelta(index int, partial string) Event {
	return data(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, quote(partial)))
}

// BlockStop closes a content block.
func BlockStop(index int) Event {
	return data(fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// MessageDelta carries the stop reason and the cumulative output tokens.
func MessageDelta(stopReason string, outputTokens int) Event {
	return data(fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, quote(stopReason), outputTokens))
}

// MessageStop is the last event of a complete stream.
func MessageStop() Event { return data(`{"type":"message_stop"}`) }

// ErrorEvent is an error inside a stream, as the API sends when it is
// overloaded after the response has started.
func ErrorEvent(errType, message string) Event { return data(ErrorBody(errType, message)) }

// ErrorBody is the API's error object, the body of every error response.
func ErrorBody(errType, message string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":%s}}`, quote(errType), quote(message))
}

// ErrorResponse is an HTTP error with the API's body.
func ErrorResponse(status int, errType, message string, headers map[string]string) Response {
	return Response{Status: status, Headers: headers, Body: json.RawMessage(ErrorBody(errType, message))}
}

// TextResponse is a whole stream answering text with end_turn.
func TextResponse(id, text string) Response {
	return Response{Events: []Event{
		MessageStart(id, "claude-test", Usage{Input: 10, Output: 1}),
		TextStart(0),
		Ping(),
		TextDelta(0, text),
		BlockStop(0),
		MessageDelta("end_turn", 5),
		MessageStop(),
	}}
}

func data(s string) Event { return Event{Data: json.RawMessage(s)} }

// quote writes a JSON string without escaping <, > and &, as the API does.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
