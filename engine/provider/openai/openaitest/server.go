package openaitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Query  string // the raw query, without '?'
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into v.
func (r Request) JSON(v any) error { return json.Unmarshal(r.Body, v) }

// Server is a running scripted server. Its handler serves POST
// <URL>/chat/completions, or <URL>/responses for a script in the Responses
// format (any path, in fact: the path is recorded).
type Server struct {
	// URL is the base URL to give an adapter, e.g. "http://127.0.0.1:1234/v1".
	URL string

	srv    *httptest.Server
	script Script
	// framed holds, per response of a Responses script, each event's
	// "event: <type>\ndata: " prefix (computed once: benchmarks replay
	// thousands of events a request).
	framed [][]string
	quit   chan struct{} // closed by Close, releases stalled handlers

	mu       sync.Mutex // guards next and requests
	next     int
	requests []Request
}

// NewServer starts a server on 127.0.0.1 replaying script.
func NewServer(script *Script) *Server {
	s := &Server{script: *script, quit: make(chan struct{})}
	if script.Format == FormatResponses {
		s.framed = make([][]string, len(script.Responses))
		for i, r := range script.Responses {
			for _, c := range r.Chunks {
				s.framed[i] = append(s.framed[i], "event: "+eventType(c)+"\ndata: ")
			}
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server, first releasing any handler stalled on purpose
// (httptest's Close waits for active requests).
func (s *Server) Close() {
	close(s.quit)
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// take records r and returns the response to replay (nil when exhausted)
// and its index in the script.
func (s *Server) take(r Request) (*Response, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	n := len(s.script.Responses)
	i := s.next
	s.next++
	if s.script.Repeat {
		i %= n
	} else if i >= n {
		return nil, 0
	}
	return &s.script.Responses[i], i
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.get(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	resp, at := s.take(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if resp == nil {
		writeError(w, http.StatusInternalServerError, nil, &APIError{Message: "openaitest: script exhausted", Type: "server_error"})
		return
	}
	status := resp.Status
	if resp.Error != nil || resp.Body != "" {
		if status == 0 {
			status = http.StatusBadRequest
		}
		if resp.Error != nil {
			writeError(w, status, resp.Headers, resp.Error)
			return
		}
		setHeaders(w, resp.Headers)
		w.WriteHeader(status)
		io.WriteString(w, resp.Body)
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	setHeaders(w, resp.Headers)
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	// One buffer for all events: the benchmark streams thousands of them.
	var buf []byte
	for i, c := range resp.Chunks {
		if s.framed != nil {
			buf = append(buf[:0], s.framed[at][i]...)
		} else {
			buf = append(buf[:0], "data: "...)
		}
		buf = append(append(buf, c...), "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
	if resp.Malformed != "" {
		io.WriteString(w, "data: "+resp.Malformed+"\n\n")
	}
	end := resp.End
	if end == "" && s.script.Format == FormatResponses {
		end = EndEOF
	}
	switch end {
	case EndEOF:
	case EndCut:
		flush()
		// Hijacking and closing leaves the chunked body unterminated, which is
		// what a dropped connection looks like to the client.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, rw, err := hj.Hijack(); err == nil {
				rw.Flush()
				conn.Close()
			}
		}
	case EndStall:
		flush()
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	default:
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// get answers a GET from the script's Get map (model discovery), recorded
// like any request.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()})
	s.mu.Unlock()
	body, ok := s.script.Get[r.URL.Path]
	if !ok {
		writeError(w, http.StatusNotFound, nil, &APIError{Message: "openaitest: no GET " + r.URL.Path + " in the script", Type: "not_found_error"})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(body)
}

func setHeaders(w http.ResponseWriter, headers map[string]string) {
	for k, v := range headers {
		w.Header().Set(k, v)
	}
}

// writeError sends the API's error body: pretty-printed with four spaces and
// a trailing newline, param and code null when unset.
func writeError(w http.ResponseWriter, status int, headers map[string]string, e *APIError) {
	type wireError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	we := wireError{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		we.Param = &e.Param
	}
	if e.Code != "" {
		we.Code = &e.Code
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	enc.Encode(struct {
		Error wireError `json:"error"`
	}{we})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	setHeaders(w, headers)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
