package openaitest

import (
	"encoding/json"
	"strconv"
)

// Events builds the events of one Responses stream, shaped like the real
// API's (key order, sequence numbers, the items a response.completed
// repeats in its output), for a script in the Responses format. Each item
// method adds a whole output item: its added event, its parts and deltas,
// and its done events, at the next output index.
type Events struct {
	id     string
	seq    int
	index  int
	list   []json.RawMessage
	output []json.RawMessage // the done items, for response.completed
}

// ResponseUsage is the token accounting of a response.completed.
type ResponseUsage struct {
	Input     int64 // input_tokens, cached ones included
	Cached    int64 // input_tokens_details.cached_tokens
	Output    int64 // output_tokens, reasoning ones included
	Reasoning int64 // output_tokens_details.reasoning_tokens
}

// NewEvents starts a stream of response id: response.created and
// response.in_progress.
func NewEvents(id string) *Events {
	e := &Events{id: id}
	e.add("response.created", `"response":`+e.response("in_progress", "null", "null", nil))
	e.add("response.in_progress", `"response":`+e.response("in_progress", "null", "null", nil))
	return e
}

// add appends an event of type typ with the members of rest after its
// sequence number.
func (e *Events) add(typ, rest string) {
	b := make([]byte, 0, 64+len(rest))
	b = append(b, `{"type":`...)
	b = strconv.AppendQuote(b, typ)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.seq), 10)
	if rest != "" {
		b = append(append(b, ','), rest...)
	}
	e.list = append(e.list, append(b, '}'))
	e.seq++
}

// response is a response object with status, error, incomplete_details
// and usage (raw JSON) and the output so far when output is set.
func (e *Events) response(status, errJSON, incomplete string, usage *ResponseUsage) string {
	b := []byte(`{"id":` + quote(e.id) + `,"object":"response","created_at":1760000000,"status":` + quote(status) +
		`,"background":false,"error":` + errJSON + `,"incomplete_details":` + incomplete +
		`,"instructions":null,"max_output_tokens":null,"model":"` + Model + `","output":[`)
	if status != "in_progress" {
		for i, o := range e.output {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, o...)
		}
	}
	b = append(b, `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":`...)
	if usage == nil {
		b = append(b, "null"...)
	} else {
		total := usage.Input + usage.Output
		b = append(b, `{"input_tokens":`...)
		b = strconv.AppendInt(b, usage.Input, 10)
		b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, usage.Cached, 10)
		b = append(b, `},"output_tokens":`...)
		b = strconv.AppendInt(b, usage.Output, 10)
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, usage.Reasoning, 10)
		b = append(b, `},"total_tokens":`...)
		b = strconv.AppendInt(b, total, 10)
		b = append(b, '}')
	}
	return string(append(b, `,"user":null,"metadata":{}}`...))
}

func (e *Events) where(item string) string {
	return `"item_id":` + quote(item) + `,"output_index":` + strconv.Itoa(e.index)
}

// Reasoning adds a reasoning item with encrypted content (none when "")
// and a summary of the given parts, each streamed as one delta.
func (e *Events) Reasoning(item, encrypted string, summary ...string) *Events {
	at := `"output_index":` + strconv.Itoa(e.index)
	e.add("response.output_item.added", at+`,"item":{"id":`+quote(item)+`,"type":"reasoning","summary":[]}`)
	var parts []byte
	for i, s := range summary {
		si := `,"summary_index":` + strconv.Itoa(i)
		e.add("response.reasoning_summary_part.added", e.where(item)+si+`,"part":{"type":"summary_text","text":""}`)
		e.add("response.reasoning_summary_text.delta", e.where(item)+si+`,"delta":`+quote(s)+`,"obfuscation":"x0"`)
		e.add("response.reasoning_summary_text.done", e.where(item)+si+`,"text":`+quote(s))
		e.add("response.reasoning_summary_part.done", e.where(item)+si+`,"part":{"type":"summary_text","text":`+quote(s)+`}`)
		if i > 0 {
			parts = append(parts, ',')
		}
		parts = append(parts, `{"type":"summary_text","text":`+quote(s)+`}`...)
	}
	done := `{"id":` + quote(item) + `,"type":"reasoning"`
	if encrypted != "" {
		done += `,"encrypted_content":` + quote(encrypted)
	}
	done += `,"summary":[` + string(parts) + `]}`
	e.itemDone(done)
	return e
}

// Message adds an assistant message item whose text streams as deltas.
func (e *Events) Message(item string, deltas ...string) *Events {
	at := `"output_index":` + strconv.Itoa(e.index)
	e.add("response.output_item.added", at+`,"item":{"id":`+quote(item)+`,"type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	ci := `,"content_index":0`
	e.add("response.content_part.added", e.where(item)+ci+`,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	var text string
	for _, d := range deltas {
		text += d
		e.add("response.output_text.delta", e.where(item)+ci+`,"delta":`+quote(d)+`,"logprobs":[],"obfuscation":"x0"`)
	}
	e.add("response.output_text.done", e.where(item)+ci+`,"text":`+quote(text)+`,"logprobs":[]`)
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + quote(text) + `}`
	e.add("response.content_part.done", e.where(item)+ci+`,"part":`+part)
	e.itemDone(`{"id":` + quote(item) + `,"type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`)
	return e
}

// Call adds a function call item whose arguments stream as the given
// fragments.
func (e *Events) Call(item, callID, name string, fragments ...string) *Events {
	at := `"output_index":` + strconv.Itoa(e.index)
	e.add("response.output_item.added", at+`,"item":{"id":`+quote(item)+`,"type":"function_call","status":"in_progress","arguments":"","call_id":`+quote(callID)+`,"name":`+quote(name)+`}`)
	var args string
	for _, f := range fragments {
		args += f
		e.add("response.function_call_arguments.delta", e.where(item)+`,"delta":`+quote(f)+`,"obfuscation":"x0"`)
	}
	e.add("response.function_call_arguments.done", e.where(item)+`,"arguments":`+quote(args))
	e.itemDone(`{"id":` + quote(item) + `,"type":"function_call","status":"completed","arguments":` + quote(args) + `,"call_id":` + quote(callID) + `,"name":` + quote(name) + `}`)
	return e
}

func (e *Events) itemDone(item string) {
	e.add("response.output_item.done", `"output_index":`+strconv.Itoa(e.index)+`,"item":`+item)
	e.output = append(e.output, json.RawMessage(item))
	e.index++
}

// Raw adds an event as given (its sequence number included, or not).
func (e *Events) Raw(ev string) *Events {
	e.list = append(e.list, json.RawMessage(ev))
	e.seq++
	return e
}

// List returns the events so far: a stream without its terminal event.
func (e *Events) List() []json.RawMessage { return append([]json.RawMessage(nil), e.list...) }

// Completed ends the stream with response.completed and returns its
// events.
func (e *Events) Completed(u ResponseUsage) []json.RawMessage {
	e.add("response.completed", `"response":`+e.response("completed", "null", "null", &u))
	return e.List()
}

// Incomplete ends the stream with response.incomplete for reason
// (max_output_tokens, content_filter).
func (e *Events) Incomplete(reason string, u ResponseUsage) []json.RawMessage {
	e.add("response.incomplete", `"response":`+e.response("incomplete", "null", `{"reason":`+quote(reason)+`}`, &u))
	return e.List()
}

// Failed ends the stream with response.failed carrying the error code and
// message.
func (e *Events) Failed(code, message string) []json.RawMessage {
	e.add("response.failed", `"response":`+e.response("failed", `{"code":`+quote(code)+`,"message":`+quote(message)+`}`, "null", nil))
	return e.List()
}

// Error ends the stream with an error event.
func (e *Events) Error(code, message string) []json.RawMessage {
	e.add("error", `"code":`+quote(code)+`,"message":`+quote(message)+`,"param":null`)
	return e.List()
}
