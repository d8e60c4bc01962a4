// Package anthropictest is a scripted stand-in for the Anthropic Messages
// API: an httptest server on 127.0.0.1 that answers each POST /v1/messages
// with the next response of a Script, byte for byte in the API's own
// formats, and records every request it received.
//
// # What a response can be
//
//   - A stream: status 200 (the default), content-type text/event-stream,
//     and its events written as the API writes them, one
//     "event: <name>\ndata: <compact JSON>\n\n" each, flushed one by one.
//   - An HTTP error: a status and the API's error body
//     ({"type":"error","error":{"type":"rate_limit_error","message":"..."}},
//     see ErrorBody) with content-type application/json, and any headers
//     (retry-after, anthropic-ratelimit-*).
//   - A broken stream: after its events the connection is cut without the
//     end of the chunked body ("end": "cut"), or held open until the client
//     goes away ("end": "stall"); an event can be raw bytes, to send a
//     malformed one.
//
// A request past the end of the script gets a 500 api_error that says so.
//
// # The Script format
//
// A Script is loadable from JSON (Load, Parse), so a testscript command can
// start a server from a file:
//
//	{"responses": [
//	  {"events": [
//	    {"event": "message_start", "data": {"type": "message_start", "message": {...}}},
//	    {"data": {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}},
//	    {"raw": "event: content_block_delta\ndata: {not json\n\n"}
//	  ], "end": "cut"},
//	  {"status": 429, "headers": {"retry-after": "7"},
//	   "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}}
//	]}
//
// A response has "status" (default 200), "headers" (added to the defaults:
// request-id, and the content type of the body or stream), "body" (any JSON
// value, sent compact as the whole body; with it, "events" must be empty),
// "rawBody" (bytes sent verbatim as the whole body, without a content type
// of its own: a proxy's HTML page; it excludes body, events and end), "events"
// and "end" ("" ends the stream normally, "cut" or "stall"). An event has
// "data" (a JSON object, sent compact on one data line, as the API sends
// it) and "event" (the SSE event name, by default data's "type"), or "raw"
// (bytes sent verbatim, framing included: for malformed events, or exact
// spacing). Unknown keys are errors.
//
// The helpers (MessageStart, TextStart, ToolUseStart, MessageDelta, ...)
// build the events of the real API for Go tests.
package anthropictest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
)

// The ends of a stream.
const (
	EndNormal = ""      // the handler returns: the stream ends cleanly
	EndCut    = "cut"   // the connection is dropped mid-body
	EndStall  = "stall" // nothing more is sent until the client goes away
)

// Script is the list of responses a Server gives, one per request, in order.
type Script struct {
	Responses []Response `json:"responses"`
}

// Response is one scripted answer.
type Response struct {
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
	RawBody string            `json:"rawBody,omitempty"`
	Events  []Event           `json:"events,omitempty"`
	End     string            `json:"end,omitempty"`
}

// Event is one server-sent event.
type Event struct {
	Event string          `json:"event,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Raw   string          `json:"raw,omitempty"`
}

// Load reads a Script from a JSON file.
func Load(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	s, err := Parse(b)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes and checks a Script.
func Parse(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("anthropictest: %w", err)
	}
	if dec.More() {
		return Script{}, errors.New("anthropictest: data after the script object")
	}
	for i, r := range s.Responses {
		if err := r.check(); err != nil {
			return Script{}, fmt.Errorf("anthropictest: response %d: %w", i+1, err)
		}
	}
	return s, nil
}

func (r *Response) check() error {
	switch r.End {
	case EndNormal, EndCut, EndStall:
	default:
		return fmt.Errorf("end %q is not one of \"\", %q, %q", r.End, EndCut, EndStall)
	}
	if len(r.Body) > 0 && (len(r.Events) > 0 || r.End != EndNormal) {
		return errors.New("body and events (or end) exclude each other")
	}
	if r.RawBody != "" && (len(r.Body) > 0 || len(r.Events) > 0 || r.End != EndNormal) {
		return errors.New("rawBody excludes body, events and end")
	}
	for j, e := range r.Events {
		if (e.Raw == "") == (len(e.Data) == 0) {
			return fmt.Errorf("event %d: exactly one of data and raw", j+1)
		}
		if len(e.Data) > 0 && e.Event == "" {
			var t struct{ Type string }
			if json.Unmarshal(e.Data, &t) != nil || t.Type == "" {
				return fmt.Errorf("event %d: no event name and no data.type", j+1)
			}
		}
	}
	return nil
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server serves a Script. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give the client (http://127.0.0.1:port).
	URL string

	srv    *httptest.Server
	closed chan struct{} // closed by Close, so stalled handlers let go

	mu       sync.Mutex // guards next and requests
	script   Script
	next     int
	requests []Request
}

// New starts a server for s on 127.0.0.1. Close it when done.
func New(s Script) *Server {
	srv := &Server{script: s, closed: make(chan struct{})}
	srv.srv = httptest.NewServer(http.HandlerFunc(srv.serve))
	srv.URL = srv.srv.URL
	return srv
}

// Close stops the server, ending stalled streams first.
func (s *Server) Close() {
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.srv.Close()
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	n := s.next
	s.next++
	var resp Response
	ok := n < len(s.script.Responses)
	if ok {
		resp = s.script.Responses[n]
	}
	s.mu.Unlock()

	h := w.Header()
	h.Set("Request-Id", fmt.Sprintf("req_test_%d", n+1))
	if !ok {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, ErrorBody("api_error", fmt.Sprintf("anthropictest: no response left for request %d", n+1)))
		return
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case resp.RawBody != "":
		// No content type of its own: the headers give one, or net/http
		// sniffs it (text/html for a page), as a proxy's server would.
	case len(resp.Body) > 0:
		h.Set("Content-Type", "application/json")
	default:
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
	}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	w.WriteHeader(status)
	if resp.RawBody != "" {
		io.WriteString(w, resp.RawBody)
		return
	}
	if len(resp.Body) > 0 {
		w.Write(compact(resp.Body))
		return
	}
	flusher, _ := w.(http.Flusher)
	for _, e := range resp.Events {
		if _, err := w.Write(e.bytes()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	switch resp.End {
	case EndCut:
		// Aborting the handler makes the server drop the connection
		// without the chunked body's terminator: the client reads an
		// unexpected EOF, as when a proxy or the network cuts the stream.
		panic(http.ErrAbortHandler)
	case EndStall:
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
	}
}

func (e *Event) bytes() []byte {
	if e.Raw != "" {
		return []byte(e.Raw)
	}
	name := e.Event
	if name == "" {
		var t struct{ Type string }
		json.Unmarshal(e.Data, &t)
		name = t.Type
	}
	var b bytes.Buffer
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(compact(e.Data))
	b.WriteString("\n\n")
	return b.Bytes()
}

// compact puts a value on one line without spaces, as the API writes its
// JSON (an SSE data line must be one line anyway).
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
