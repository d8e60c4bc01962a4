package geminitest

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The builders below write chunks with the key order and the fields the
// API sends, so a test reads like a captured stream. They return compact
// JSON; the server writes it in Google's style.

// Model is the model version the builders put in their chunks.
const Model = "gemini-test"

// Usage is a chunk's usageMetadata. Prompt counts the cached tokens too,
// as the API counts them; Total defaults to Prompt+Candidates+Thoughts.
type Usage struct {
	Prompt, Candidates, Thoughts, Cached, Total int
}

// TextPart is a part of answer text.
func TextPart(text string) string { return `{"text":` + quote(text) + `}` }

// SignedTextPart is a text part with a thought signature: the API puts one
// on the last part of an answer from a thinking model (often an empty
// text).
func SignedTextPart(text, sig string) string {
	return `{"text":` + quote(text) + `,"thoughtSignature":` + quote(sig) + `}`
}

// ThoughtPart is a part of thought summary (thought: true), with its
// signature when sig is set.
func ThoughtPart(text, sig string) string {
	s := `{"text":` + quote(text) + `,"thought":true`
	if sig != "" {
		s += `,"thoughtSignature":` + quote(sig)
	}
	return s + `}`
}

// CallPart is a functionCall part: args is the arguments object (raw
// JSON), id the call's id ("" for none, as the Gemini API mostly sends),
// sig its thought signature ("" for none). The API sends a call whole.
func CallPart(id, name, args, sig string) string {
	s := `{"functionCall":{`
	if id != "" {
		s += `"id":` + quote(id) + `,`
	}
	s += `"name":` + quote(name) + `,"args":` + args + `}`
	if sig != "" {
		s += `,"thoughtSignature":` + quote(sig)
	}
	return s + `}`
}

// Chunk is one GenerateContentResponse of a stream: the parts of its one
// candidate, its finishReason ("" for none: not the last chunk) and its
// usage (nil for none).
func Chunk(responseID string, finish string, u *Usage, parts ...string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"candidates":[{"content":{"parts":[`)
	b.WriteString(strings.Join(parts, ","))
	b.WriteString(`],"role":"model"}`)
	if finish != "" {
		b.WriteString(`,"finishReason":` + quote(finish))
	}
	b.WriteString(`,"index":0}]`)
	if u != nil {
		b.WriteString(`,"usageMetadata":` + u.json())
	}
	b.WriteString(`,"modelVersion":"` + Model + `","responseId":` + quote(responseID) + `}`)
	return json.RawMessage(b.String())
}

// BlockedChunk is the one chunk of a stream whose prompt was blocked: no
// candidates, a promptFeedback with the reason.
func BlockedChunk(responseID, reason string) json.RawMessage {
	return json.RawMessage(`{"promptFeedback":{"blockReason":` + quote(reason) + `},"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8},"modelVersion":"` +
		Model + `","responseId":` + quote(responseID) + `}`)
}

func (u *Usage) json() string {
	total := u.Total
	if total == 0 {
		total = u.Prompt + u.Candidates + u.Thoughts
	}
	s := `{"promptTokenCount":` + strconv.Itoa(u.Prompt)
	if u.Candidates > 0 {
		s += `,"candidatesTokenCount":` + strconv.Itoa(u.Candidates)
	}
	s += `,"totalTokenCount":` + strconv.Itoa(total)
	if u.Cached > 0 {
		s += `,"cachedContentTokenCount":` + strconv.Itoa(u.Cached)
	}
	s += `,"promptTokensDetails":[{"modality":"TEXT","tokenCount":` + strconv.Itoa(u.Prompt) + `}]`
	if u.Thoughts > 0 {
		s += `,"thoughtsTokenCount":` + strconv.Itoa(u.Thoughts)
	}
	return s + `}`
}

// APIError is the object inside Google's error body.
func APIError(code int, status, message string, details ...string) json.RawMessage {
	s := `{"code":` + strconv.Itoa(code) + `,"message":` + quote(message) + `,"status":` + quote(status)
	if len(details) > 0 {
		s += `,"details":[` + strings.Join(details, ",") + `]`
	}
	return json.RawMessage(s + `}`)
}

// RetryInfo is the detail of a 429 that says how long to wait ("27s").
func RetryInfo(delay string) string {
	return `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":` + quote(delay) + `}`
}

// ErrorInfo is the detail that names the reason of a failure
// (API_KEY_INVALID for a bad key, which comes with status 400).
func ErrorInfo(reason string) string {
	return `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":` + quote(reason) + `,"domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}`
}

// quote writes a JSON string without escaping <, > and &, as the API does.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
