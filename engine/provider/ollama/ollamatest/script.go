package ollamatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ollama/ollama/api"
)

// Script is what a Server replays. See the package doc for its JSON form.
type Script struct {
	// Models are the installed models: /api/tags lists them and /api/show
	// describes them.
	Models []Model `json:"models,omitempty"`
	// Tags, when set, replaces the /api/tags reply built from Models (to
	// script an error or a stall).
	Tags *Reply `json:"tags,omitempty"`
	// Chat holds one reply per /api/chat request, in order; a request past
	// the last one gets a 500.
	Chat []Reply `json:"chat,omitempty"`
}

// Model is one installed model.
type Model struct {
	Name          string   `json:"name"`
	Capabilities  []string `json:"capabilities,omitempty"`  // e.g. completion, tools, thinking, vision
	Architecture  string   `json:"architecture,omitempty"`  // model_info general.architecture; "" is llama
	Family        string   `json:"family,omitempty"`        // details.family; "" is the architecture
	ContextLength int      `json:"contextLength,omitempty"` // model_info <arch>.context_length; 0 leaves it out
	NumCtx        int      `json:"numCtx,omitempty"`        // a Modelfile's PARAMETER num_ctx (show's "parameters"); 0 leaves it out
	// Show, when set, replaces the /api/show reply built from the fields
	// above.
	Show *Reply `json:"show,omitempty"`
}

// Reply is one scripted HTTP response.
type Reply struct {
	// Status is the HTTP status; 0 is 200.
	Status int `json:"status,omitempty"`
	// Headers are added to the response (retry-after, or a content type
	// that replaces the reply's own).
	Headers map[string]string `json:"headers,omitempty"`
	// Error, when set, makes the body Ollama's error object
	// {"error":"<Error>"} (as its server writes it: compact, no newline).
	Error string `json:"error,omitempty"`
	// Body, when set, is written as is (a proxy's HTML page, say).
	Body string `json:"body,omitempty"`
	// Lines are NDJSON lines, each written and flushed on its own with a
	// trailing newline.
	Lines []Line `json:"lines,omitempty"`
	// End says how the response ends after its body: "" closes it
	// normally, "cut" drops the connection (no final chunk), "stall" keeps
	// it open without writing until the client goes away or the server is
	// closed.
	End string `json:"end,omitempty"`
}

// The Reply.End values.
const (
	EndCut   = "cut"
	EndStall = "stall"
)

// Line is one line of an NDJSON stream: a chat chunk the server completes
// (model name and timestamp) when it writes it, or bytes written as given.
type Line struct {
	chunk *api.ChatResponse
	raw   []byte
}

// created is the created_at of every chunk the server completes
// (2026-01-02T03:04:05Z), and the modified_at of every model, so replies
// are byte-for-byte repeatable.
var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Chunk is a line holding r, written as Ollama's server writes it
// (json.Marshal of api.ChatResponse) with Model set to the request's model
// and CreatedAt to 2026-01-02T03:04:05Z.
func Chunk(r api.ChatResponse) Line { return Line{chunk: &r} }

// Raw is a line written exactly as s (without its newline): a malformed
// line, or a chunk spelled out by hand.
func Raw(s string) Line { return Line{raw: []byte(s)} }

// Text is a chunk with assistant content s.
func Text(s string) Line {
	return Chunk(api.ChatResponse{Message: api.Message{Role: "assistant", Content: s}})
}

// Thinking is a chunk with assistant thinking s.
func Thinking(s string) Line {
	return Chunk(api.ChatResponse{Message: api.Message{Role: "assistant", Thinking: s}})
}

// ToolCall is a chunk with one whole tool call, as Ollama sends them. id
// may be empty (older servers send none); args is a JSON object.
func ToolCall(id, name, args string) Line {
	a := api.NewToolCallFunctionArguments()
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		panic(fmt.Sprintf("ollamatest.ToolCall: bad arguments %q: %v", args, err))
	}
	return Chunk(api.ChatResponse{Message: api.Message{Role: "assistant", ToolCalls: []api.ToolCall{{
		ID:       id,
		Function: api.ToolCallFunction{Name: name, Arguments: a},
	}}}})
}

// Done is the final chunk: done_reason reason ("stop", "length", "load"),
// prompt_eval_count prompt and eval_count eval, with durations as a real
// server reports them.
func Done(reason string, prompt, eval int) Line {
	return Chunk(api.ChatResponse{
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: reason,
		Metrics: api.Metrics{
			TotalDuration:      1234567890,
			LoadDuration:       12345678,
			PromptEvalCount:    prompt,
			PromptEvalDuration: 23456789,
			EvalCount:          eval,
			EvalDuration:       345678901,
		},
	})
}

// ErrorLine is an {"error":...} line in the middle of a stream, as Ollama
// writes one when the runner fails after the response has started.
func ErrorLine(msg string) Line {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	return Line{raw: b}
}

// bytes returns the line's bytes for a request for model.
func (l Line) bytes(model string) []byte {
	if l.chunk == nil {
		return l.raw
	}
	c := *l.chunk
	if c.Model == "" {
		c.Model = model
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = created
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("ollamatest: encoding a chunk: %v", err)) // api types always encode
	}
	return b
}

// MarshalJSON writes a raw line as a JSON string and a chunk as its object.
func (l Line) MarshalJSON() ([]byte, error) {
	if l.chunk != nil {
		return json.Marshal(l.chunk)
	}
	if json.Valid(l.raw) && bytes.HasPrefix(bytes.TrimSpace(l.raw), []byte("{")) {
		return l.raw, nil
	}
	return json.Marshal(string(l.raw))
}

// UnmarshalJSON reads a JSON object as a line written compacted, byte for
// byte as given (so a script controls key order and values exactly), and a
// JSON string as a line written verbatim (for lines that are not JSON).
func (l *Line) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = Raw(s)
	case len(b) > 0 && b[0] == '{':
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		*l = Line{raw: buf.Bytes()}
	default:
		return errors.New("a line is a JSON object or a string")
	}
	return nil
}

// Parse reads a script from its JSON form; unknown keys are errors, so a
// misspelt field does not silently script nothing.
func Parse(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("ollamatest: script: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Script{}, errors.New("ollamatest: script: data after the object")
	}
	for i, r := range s.Chat {
		if err := r.check(); err != nil {
			return Script{}, fmt.Errorf("ollamatest: script: chat reply %d: %w", i+1, err)
		}
	}
	return s, nil
}

// Load reads a script file.
func Load(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	s, err := Parse(data)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (r Reply) check() error {
	switch r.End {
	case "", EndCut, EndStall:
	default:
		return fmt.Errorf("end %q is not \"\", %q or %q", r.End, EndCut, EndStall)
	}
	n := 0
	for _, set := range []bool{r.Error != "", r.Body != "", len(r.Lines) > 0} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("a reply has at most one of error, body and lines")
	}
	return nil
}
