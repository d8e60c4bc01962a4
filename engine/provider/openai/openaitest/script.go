// Package openaitest serves scripted OpenAI responses on 127.0.0.1 so that
// adapters and end-to-end tests run without a network or a key: chat
// completions (the default), or the Responses API for a script in the
// Responses format. The server replays, one per request, the responses of
// a Script, byte-accurate to the real API's wire format: a chat stream is
// "text/event-stream" with one "data: <chunk JSON>\n\n" event per chunk and
// a closing "data: [DONE]\n\n"; a Responses stream sends "event: <type>"
// and "data: <event JSON>" per event and no [DONE]; an error is the API's
// own body {"error":{"message":...,"type":...,"param":...,"code":...}} with
// its status and headers. It records every request it receives, so a test
// can assert the body the adapter sent.
//
// # Script format
//
// A Script is JSON (see ParseScript and LoadScript) so that a testscript
// command can start a server from a file:
//
//	{
//	  "repeat": false,
//	  "responses": [
//	    {"chunks": [
//	      {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",
//	       "choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]},
//	      {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",
//	       "choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
//	    ]},
//	    {"status": 429, "headers": {"retry-after": "2"},
//	     "error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
//	  ]
//	}
//
// The fields of a response (all optional):
//
//   - "status": the HTTP status; 200 when absent.
//   - "headers": extra response headers.
//   - "error": an error object, sent as the API's error body (as
//     application/json; the status defaults to 400 when only "error" is set).
//   - "body": a raw body sent verbatim instead (e.g. a proxy's HTML page).
//   - "chunks": the stream's chunk objects, each sent as one SSE event.
//   - "malformed": a string sent verbatim as one more event's data after the
//     chunks, to exercise a decoder on bad JSON.
//   - "end": how a stream ends after its chunks: "done" (the default) sends
//     "data: [DONE]"; "eof" ends the body cleanly without it; "cut" drops the
//     TCP connection mid-stream, so the client sees an unterminated chunked
//     body; "stall" sends nothing more until the client goes away (or the
//     server closes).
//
// With "format": "responses" the script speaks OpenAI's Responses API
// instead (POST <URL>/responses): each chunk is a Responses stream event,
// an object whose "type" names it, sent as "event: <type>\ndata: <event
// JSON>\n\n" as the API sends it, and a stream ends cleanly without
// "[DONE]" (its last event, response.completed, is the end); "end": "done"
// still adds one. NewEvents builds such events.
//
// "get" maps a path to the JSON body of GET requests for it, the way a
// local server describes its models: {"get": {"/v1/models": {"object":
// "list", "data": [{"id": "qwen3-4b", "object": "model"}]}, "/props":
// {...}}}. GETs never take one of the responses; a GET of a path not in
// the map gets a 404.
//
// With "repeat": true the responses are replayed in a cycle forever (for
// benchmarks); otherwise a request past the end gets a 500 error naming the
// exhausted script, which fails the test that made it.
//
// The helpers RoleChunk, ContentChunk, ReasoningChunk, ToolCallChunk,
// FinishChunk and UsageChunk build chunks shaped like the real API's, and
// NewEvents the events of a Responses stream.
package openaitest

import (
	"encoding/json"
	"fmt"
	"os"
)

// Script is the ordered list of responses a Server replays.
type Script struct {
	// Format is the wire the chunks are sent in: FormatChat (the default)
	// or FormatResponses.
	Format    Format     `json:"format,omitempty"`
	Responses []Response `json:"responses"`
	// Repeat replays Responses in a cycle instead of failing once they are used up.
	Repeat bool `json:"repeat,omitempty"`
	// Get holds the bodies of GET requests by path ("/v1/models", and
	// llama.cpp's "/props" or LM Studio's "/api/v0/models"), for model
	// discovery: each is sent with status 200 as application/json, as often
	// as asked. A GET of another path gets a 404. GETs use no response.
	Get map[string]json.RawMessage `json:"get,omitempty"`
}

// Response is one scripted reply. The zero value is an empty successful
// stream ending with [DONE].
type Response struct {
	Status    int               `json:"status,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Error     *APIError         `json:"error,omitempty"`
	Body      string            `json:"body,omitempty"`
	Chunks    []json.RawMessage `json:"chunks,omitempty"`
	Malformed string            `json:"malformed,omitempty"`
	End       End               `json:"end,omitempty"`
}

// APIError is the object of the API's error body. Param and Code are sent
// as null when empty, as the API does.
type APIError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Format is an OpenAI streaming wire format.
type Format string

// The formats a server speaks.
const (
	FormatChat      Format = "chat"      // chat completions: "data: <chunk>" events, then "data: [DONE]"
	FormatResponses Format = "responses" // Responses: "event: <type>" and "data: <event>", no [DONE]
)

// End says how a stream ends after its chunks.
type End string

// The ways a stream can end.
const (
	EndDone  End = "done"  // "data: [DONE]" then a clean end of body (the chat default)
	EndEOF   End = "eof"   // a clean end of body without [DONE] (the Responses default)
	EndCut   End = "cut"   // the connection is dropped mid-body
	EndStall End = "stall" // nothing more is sent until the client goes away
)

// ParseScript decodes and checks a JSON script.
func ParseScript(data []byte) (*Script, error) {
	var s Script
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("openaitest: script: %w", err)
	}
	switch s.Format {
	case "", FormatChat, FormatResponses:
	default:
		return nil, fmt.Errorf("openaitest: script: unknown format %q", s.Format)
	}
	for i, r := range s.Responses {
		if s.Format == FormatResponses {
			for j, c := range r.Chunks {
				if eventType(c) == "" {
					return nil, fmt.Errorf("openaitest: script: response %d: event %d has no \"type\"", i, j)
				}
			}
		}
		switch r.End {
		case "", EndDone, EndEOF, EndCut, EndStall:
		default:
			return nil, fmt.Errorf("openaitest: script: response %d: unknown end %q", i, r.End)
		}
		if r.Error != nil && r.Body != "" {
			return nil, fmt.Errorf("openaitest: script: response %d: both error and body", i)
		}
	}
	if s.Repeat && len(s.Responses) == 0 {
		return nil, fmt.Errorf("openaitest: script: repeat with no responses")
	}
	return &s, nil
}

// LoadScript reads a JSON script from a file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("openaitest: %w", err)
	}
	return ParseScript(data)
}

// eventType is a Responses event's "type", or "" when it has none.
func eventType(ev json.RawMessage) string {
	var t struct {
		Type string `json:"type"`
	}
	json.Unmarshal(ev, &t)
	return t.Type
}
