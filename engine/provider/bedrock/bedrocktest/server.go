// Package bedrocktest is a scripted stand-in for Amazon Bedrock's
// ConverseStream: an httptest server on 127.0.0.1 that answers each POST
// /model/{modelId}/converse-stream with the next response of a Script, in
// the service's own wire format, and records every request it received
// (headers included, so a test can see the SigV4 or bearer Authorization).
//
// # What a response can be
//
//   - A stream: status 200, content type application/vnd.amazon.eventstream,
//     and its events written as the service writes them: each one an
//     event-stream message in AWS's binary framing (prelude, headers,
//     payload, CRCs; aws/protocol/eventstream's Encoder) with the headers
//     :event-type, :content-type application/json and :message-type event,
//     and the event's JSON as payload, flushed one by one. An exception
//     inside the stream is a message of type exception with its
//     :exception-type (throttlingException, validationException, ...) and
//     {"message": ...} as payload, as Bedrock sends one after the response
//     has started.
//   - An HTTP error: a status, the x-amzn-ErrorType header naming the
//     exception (ThrottlingException, ValidationException, ...) and a JSON
//     body ({"message": "..."}).
//   - A broken stream: after its events the connection is cut ("end":
//     "cut"), or held open until the client goes away ("end": "stall").
//   - A page: "rawBody" bytes sent verbatim with status 200 and no content
//     type of its own (a proxy's HTML page).
//
// A request past the end of the script gets a 500 InternalServerException
// that says so.
//
// # The Script format
//
//	{"responses": [
//	  {"events": [
//	    {"event": "messageStart", "data": {"role": "assistant"}},
//	    {"event": "contentBlockDelta", "data": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}},
//	    {"event": "contentBlockStop", "data": {"contentBlockIndex": 0}},
//	    {"event": "messageStop", "data": {"stopReason": "end_turn"}},
//	    {"event": "metadata", "data": {"usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12}, "metrics": {"latencyMs": 100}}}
//	  ]},
//	  {"events": [{"exception": "throttlingException", "data": {"message": "Too many requests"}}]},
//	  {"status": 400, "errorType": "ValidationException", "body": {"message": "Input is too long"}}
//	]}
//
// A response has "status" (default 200), "headers" (added to the
// defaults), "errorType" (the x-amzn-ErrorType of an error status),
// "body" (any JSON value, sent compact as the whole body; not with
// events), "rawBody", "events" and "end" ("", "cut" or "stall"). An event
// has "data" (a JSON object, sent compact as the payload) and either
// "event" (its :event-type) or "exception" (its :exception-type). Unknown
// keys are errors.
//
// The helpers (MessageStart, TextDelta, ToolUseStart, MessageStop,
// Metadata, ...) build the events as the service sends them, with the "p"
// padding field Bedrock adds to every event, for Go tests.
package bedrocktest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
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
	Status    int               `json:"status,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	ErrorType string            `json:"errorType,omitempty"`
	Body      json.RawMessage   `json:"body,omitempty"`
	RawBody   string            `json:"rawBody,omitempty"`
	Events    []Event           `json:"events,omitempty"`
	End       string            `json:"end,omitempty"`
}

// Event is one message of the event stream: an event or an exception.
type Event struct {
	Event     string          `json:"event,omitempty"`
	Exception string          `json:"exception,omitempty"`
	Data      json.RawMessage `json:"data"`
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
		return Script{}, fmt.Errorf("bedrocktest: %w", err)
	}
	if dec.More() {
		return Script{}, errors.New("bedrocktest: data after the script object")
	}
	for i, r := range s.Responses {
		if err := r.check(); err != nil {
			return Script{}, fmt.Errorf("bedrocktest: response %d: %w", i+1, err)
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
		if (e.Event == "") == (e.Exception == "") {
			return fmt.Errorf("event %d: exactly one of event and exception", j+1)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(e.Data, &obj) != nil || obj == nil {
			return fmt.Errorf("event %d: data must be a JSON object", j+1)
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
	// URL is the endpoint to give the client (http://127.0.0.1:port).
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

// NewTLS is New over HTTPS (a self-signed certificate on 127.0.0.1), for
// a client that sends a bearer key, which the SDK sends over HTTPS only.
// Client gives an HTTP client that trusts the server.
func NewTLS(s Script) *Server {
	srv := &Server{script: s, closed: make(chan struct{})}
	srv.srv = httptest.NewTLSServer(http.HandlerFunc(srv.serve))
	srv.URL = srv.srv.URL
	return srv
}

// Client returns an HTTP client for the server (one that trusts its
// certificate, for NewTLS).
func (s *Server) Client() *http.Client { return s.srv.Client() }

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
	h.Set("X-Amzn-Requestid", fmt.Sprintf("00000000-0000-0000-0000-%012d", n+1))
	switch {
	case !ok:
		writeError(w, http.StatusInternalServerError, "InternalServerException", fmt.Sprintf("bedrocktest: no response left for request %d", n+1))
		return
	case r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/model/") || !strings.HasSuffix(r.URL.Path, "/converse-stream"):
		writeError(w, http.StatusNotFound, "UnknownOperationException", "bedrocktest: not a ConverseStream request: "+r.Method+" "+r.URL.Path)
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
		h.Set("Content-Type", "application/vnd.amazon.eventstream")
	}
	if resp.ErrorType != "" {
		h.Set("X-Amzn-Errortype", resp.ErrorType+":http://internal.amazon.com/coral/com.amazon.bedrock/")
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
	enc := eventstream.NewEncoder()
	for _, e := range resp.Events {
		if err := enc.Encode(w, e.message()); err != nil {
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
		// unexpected EOF, as when the network cuts the stream.
		panic(http.ErrAbortHandler)
	case EndStall:
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
	}
}

// message is the event-stream message of an event or exception, with the
// headers in the order the service sends them.
func (e *Event) message() eventstream.Message {
	var m eventstream.Message
	if e.Exception != "" {
		m.Headers.Set(":exception-type", eventstream.StringValue(e.Exception))
		m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		m.Headers.Set(":message-type", eventstream.StringValue("exception"))
	} else {
		m.Headers.Set(":event-type", eventstream.StringValue(e.Event))
		m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		m.Headers.Set(":message-type", eventstream.StringValue("event"))
	}
	m.Payload = compact(e.Data)
	return m
}

// writeError answers with a service error: its type in x-amzn-ErrorType
// and {"message": ...} as body.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	w.Write([]byte(ErrorBody(msg)))
}

// compact puts a value on one line without spaces, as the service writes
// its JSON.
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
