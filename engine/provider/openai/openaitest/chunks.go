package openaitest

import (
	"encoding/json"
	"strconv"
)

// Chunk builders. They produce the key order and the null fields of the
// real API's chunks (with stream_options.include_usage, every chunk carries
// "usage":null until the last one), so a decoder meets what it meets in
// production.

// Model is the model name the builders put in their chunks.
const Model = "gpt-test"

func chunk(id string, delta string, finish string) json.RawMessage {
	b := make([]byte, 0, 192+len(delta))
	b = append(b, `{"id":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":1760000000,"model":"`+Model+`","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":`...)
	b = append(b, delta...)
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, finish)
	}
	b = append(b, `}],"usage":null}`...)
	return b
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ContentChunk is a chunk whose delta carries text content.
func ContentChunk(id, content string) json.RawMessage {
	return chunk(id, `{"content":`+quote(content)+`}`, "")
}

// RoleChunk is the first chunk of a completion: the assistant role and empty
// content.
func RoleChunk(id string) json.RawMessage {
	return chunk(id, `{"role":"assistant","content":"","refusal":null}`, "")
}

// ReasoningChunk is a chunk whose delta carries reasoning text in field
// (e.g. "reasoning_content" or "reasoning"), as OpenAI-compatible servers
// send it.
func ReasoningChunk(id, field, text string) json.RawMessage {
	return chunk(id, `{"content":null,`+quote(field)+`:`+quote(text)+`}`, "")
}

// ToolCallChunk is a chunk with one tool-call delta at index. The first
// delta of a call carries its callID and name; later ones leave them empty
// and carry only argument fragments.
func ToolCallChunk(id string, index int, callID, name, args string) json.RawMessage {
	d := `{"tool_calls":[{"index":` + strconv.Itoa(index)
	if callID != "" {
		d += `,"id":` + quote(callID) + `,"type":"function","function":{"name":` + quote(name) + `,"arguments":` + quote(args) + `}`
	} else {
		d += `,"function":{"arguments":` + quote(args) + `}`
	}
	return chunk(id, d+`}]}`, "")
}

// FinishChunk is the chunk that ends the choice with reason.
func FinishChunk(id, reason string) json.RawMessage {
	return chunk(id, `{}`, reason)
}

// Usage is the token accounting of a usage chunk.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	CachedTokens     int64
	ReasoningTokens  int64
	// TotalTokens defaults to PromptTokens+CompletionTokens, as OpenAI counts.
	TotalTokens int64
}

// UsageChunk is the last chunk of a stream with include_usage: no choices
// and the usage object.
func UsageChunk(id string, u Usage) json.RawMessage {
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	b := []byte(`{"id":` + quote(id) + `,"object":"chat.completion.chunk","created":1760000000,"model":"` + Model + `","service_tier":"default","system_fingerprint":null,"choices":[],"usage":{`)
	b = append(b, `"prompt_tokens":`...)
	b = strconv.AppendInt(b, u.PromptTokens, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, u.CompletionTokens, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, u.CachedTokens, 10)
	b = append(b, `,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, u.ReasoningTokens, 10)
	b = append(b, `,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`...)
	return b
}
