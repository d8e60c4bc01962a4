// Package geminitest is a scripted stand-in for the Gemini API
// (generativelanguage.googleapis.com): an httptest server on 127.0.0.1
// that answers each POST (models/{model}:streamGenerateContent?alt=sse, or
// any other path: the path is recorded) with the next response of a
// Script, in the API's own wire format, and records every request, so a
// test can check the body the adapter sent.
//
// # The wire format it reproduces
//
//   - A stream: status 200, content type text/event-stream, and each chunk
//     (a GenerateContentResponse) as one "data: <JSON>\r\n\r\n" event,
//     the JSON on one line in Google's style: a space after each colon,
//     none after commas ({"candidates": [{"content": {"parts": [...],"role":
//     "model"},"index": 0}],"usageMetadata": {...},"responseId": "..."}).
//     There is no closing event: the stream ends with its last chunk, the
//     one that carries a finishReason.
//   - An HTTP error: the status and Google's error body, indented by two
//     spaces ({"error": {"code": 429, "message": "...", "status":
//     "RESOURCE_EXHAUSTED", "details": [...]}}), as application/json, with
//     any headers the script gives (retry-after).
//   - A broken stream: after its chunks the connection is cut ("end":
//     "cut") or held open until the client goes away ("end": "stall").
//
// A request past the end of the script gets a 500 INTERNAL error that says
// so, which fails the test that made it.
//
// # The Script format
//
//	{"responses": [
//	  {"chunks": [
//	    {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}, "index": 0}], "responseId": "r1"},
//	    {"candidates": [{"content": {"parts": [{"text": "!"}], "role": "model"}, "finishReason": "STOP", "index": 0}],
//	     "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}, "responseId": "r1"}
//	  ]},
//	  {"status": 429, "headers": {"retry-after": "3"},
//	   "error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}},
//	  {"status": 502, "rawBody": "<html><title>502 Bad Gateway</title></html>", "headers": {"content-type": "text/html"}}
//	]}
//
// A response has "status" (200 by default; 400 when only "error" is set),
// "headers", "chunks" (JSON objects, their key order kept), "error" (the
// object inside {"error": ...}), "rawBody" (bytes sent verbatim) and "end"
// ("", "cut" or "stall"). Unknown keys are errors. The builders (Chunk,
// TextPart, ThoughtPart, CallPart) write chunks shaped like the API's.
package geminitest

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
	Chunks  []json.RawMessage `json:"chunks,omitempty"`
	Error   json.RawMessage   `json:"error,omitempty"`
	RawBody string            `json:"rawBody,omitempty"`
	End     string            `json:"end,omitempty"`
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
		return Script{}, fmt.Errorf("geminitest: %w", err)
	}
	if dec.More() {
		return Script{}, errors.New("geminitest: data after the script object")
	}
	for i, r := range s.Responses {
		if err := r.check(); err != nil {
			return Script{}, fmt.Errorf("geminitest: response %d: %w", i+1, err)
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
	n := 0
	for _, set := range []bool{len(r.Chunks) > 0 || r.End != EndNormal, len(r.Error) > 0, r.RawBody != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("chunks (or end), error and rawBody exclude each other")
	}
	for j, c := range r.Chunks {
		var obj map[string]json.RawMessage
		if json.Unmarshal(c, &obj) != nil {
			return fmt.Errorf("chunk %d is not a JSON object", j+1)
		}
	}
	return nil
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Query  string // the raw query, without '?'
	Header http.Header
	Body   []byte
}

// Server serves a Script. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give the adapter (http://127.0.0.1:port); the
	// adapter adds the API version, as it does to Google's.
	URL string

	srv    *httptest.Server
	closed chan struct{} // closed by Close, so stalled handlers let go
	once   sync.Once

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
	s.once.Do(func() { close(s.closed) })
	s.srv.CloseClientConnections()
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
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	n := s.next
	s.next++
	var resp Response
	ok := n < len(s.script.Responses)
	if ok {
		resp = s.script.Responses[n]
	}
	s.mu.Unlock()

	h := w.Header()
	h.Set("Vary", "Origin, X-Origin, Referer")
	h.Set("Server", "scaffolding on HTTPServer2")
	if !ok {
		writeError(w, http.StatusInternalServerError, []byte(fmt.Sprintf(`{"code":500,"message":%q,"status":"INTERNAL"}`,
			fmt.Sprintf("geminitest: no response left for request %d", n+1))))
		return
	}
	status := resp.Status
	switch {
	case resp.RawBody != "":
		for k, v := range resp.Headers {
			h.Set(k, v)
		}
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		io.WriteString(w, resp.RawBody)
		return
	case len(resp.Error) > 0:
		for k, v := range resp.Headers {
			h.Set(k, v)
		}
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeError(w, status, resp.Error)
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Content-Disposition", "attachment")
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	for _, c := range resp.Chunks {
		if _, err := w.Write(Event(c)); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	switch resp.End {
	case EndCut:
		// Aborting the handler drops the connection without the chunked
		// body's terminator: the client reads an unexpected EOF, as when
		// a proxy or the network cuts the stream.
		panic(http.ErrAbortHandler)
	case EndStall:
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
	}
}

// writeError sends Google's error body for the error object e.
func writeError(w http.ResponseWriter, status int, e []byte) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(ErrorBody(e))
}

// ErrorBody is Google's error body around the error object e: indented by
// two spaces, as the API sends it.
func ErrorBody(e []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"error":`)
	b.Write(e)
	b.WriteString("}")
	var out bytes.Buffer
	if json.Indent(&out, b.Bytes(), "", "  ") != nil {
		return b.Bytes()
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// Event is chunk c framed as the API frames it: "data: <JSON>\r\n\r\n",
// the JSON in Google's style (GoogleJSON).
func Event(c []byte) []byte {
	b := append([]byte("data: "), GoogleJSON(c)...)
	return append(b, "\r\n\r\n"...)
}

// GoogleJSON writes a JSON value on one line as Google's servers do: a
// space after each colon, none after commas, the key order kept.
func GoogleJSON(raw []byte) []byte {
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return raw
	}
	src := c.Bytes()
	out := make([]byte, 0, len(src)+len(src)/8)
	inStr, esc := false, false
	for _, ch := range src {
		out = append(out, ch)
		switch {
		case esc:
			esc = false
		case inStr && ch == '\\':
			esc = true
		case ch == '"':
			inStr = !inStr
		case !inStr && ch == ':':
			out = append(out, ' ')
		}
	}
	return out
}
