package openai

import (
	"bytes"
	"encoding/json"
)

// The chunk types below are what the adapter decodes each SSE event into,
// in place of the SDK's ChatCompletionChunk. The SDK's type carries every
// field of the API and decodes through a reflective layer that records
// metadata per field: about 25 µs and 56 allocations a chunk, most of a
// stream's CPU. These keep only what becomes an event, decoded once by
// encoding/json; the SDK still builds and sends the request, reports HTTP
// errors and frames the SSE stream (ssestream.Decoder).

// wireChunk is one "chat.completion.chunk", or an error event.
type wireChunk struct {
	ID      string          `json:"id"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"` // null on all chunks but the last
	Error   json.RawMessage `json:"error"` // set on an error event only
}

type wireChoice struct {
	Index        int64     `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content string `json:"content"`
	// Reasoning text, where OpenAI-compatible servers put it (DeepSeek and
	// vLLM: reasoning_content; OpenRouter and Ollama: reasoning; some:
	// reasoning_text). Lenient: a server that sends an object there must
	// not fail the stream.
	ReasoningContent lenientString  `json:"reasoning_content"`
	Reasoning        lenientString  `json:"reasoning"`
	ReasoningText    lenientString  `json:"reasoning_text"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// lenientString is a JSON string; any other JSON value decodes to "".
type lenientString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *lenientString) UnmarshalJSON(b []byte) error {
	*s = lenientString(jsonString(b))
	return nil
}

// jsonString decodes a raw JSON string with one allocation (none for the
// empty string); anything but a string (null, an object) gives "".
func jsonString(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var t string
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	return t
}

// namedField reads choice 0's delta field name from a raw chunk: the slow
// path for a reasoningContentField outside the usual three.
func namedField(raw []byte, name string) string {
	var c struct {
		Choices []struct {
			Index int64                      `json:"index"`
			Delta map[string]json.RawMessage `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	for _, ch := range c.Choices {
		if ch.Index == 0 {
			return jsonString(ch.Delta[name])
		}
	}
	return ""
}
