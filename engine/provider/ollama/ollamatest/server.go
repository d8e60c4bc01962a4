package ollamatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Body   []byte           // as received
	Chat   *api.ChatRequest // Body decoded, for /api/chat
}

// Server is a scripted Ollama on 127.0.0.1.
type Server struct {
	// URL is the server's address (http://127.0.0.1:<port>), for
	// Model.BaseURL or OLLAMA_HOST.
	URL string

	srv    *httptest.Server
	quit   chan struct{} // closed by Close, to release stalled replies
	script Script        // read-only once NewServer returns

	mu       sync.Mutex // guards the fields below
	nextChat int
	requests []Request
}

// NewServer starts a server replaying s. Close it when done.
func NewServer(s Script) *Server {
	srv := &Server{script: s, quit: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", srv.chat)
	mux.HandleFunc("GET /api/tags", srv.tags)
	mux.HandleFunc("POST /api/show", srv.show)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		srv.record(r)
		writeError(w, http.StatusNotFound, "404 page not found")
	})
	srv.srv = httptest.NewServer(mux)
	srv.URL = srv.srv.URL
	return srv
}

// Close releases stalled replies, then shuts the server down and waits for
// its handlers.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the decoded /api/chat requests received so far.
func (s *Server) ChatRequests() []*api.ChatRequest {
	var out []*api.ChatRequest
	for _, r := range s.Requests() {
		if r.Chat != nil {
			out = append(out, r.Chat)
		}
	}
	return out
}

func (s *Server) record(r *http.Request) Request {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	return req
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	req := s.record(r)
	var chat api.ChatRequest
	if err := json.Unmarshal(req.Body, &chat); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	s.requests[len(s.requests)-1].Chat = &chat
	var reply *Reply
	if s.nextChat < len(s.script.Chat) {
		reply = &s.script.Chat[s.nextChat]
		s.nextChat++
	}
	s.mu.Unlock()
	if reply == nil {
		writeError(w, http.StatusInternalServerError, "ollamatest: no scripted chat reply left")
		return
	}
	s.reply(w, r, *reply, chat.Model)
}

func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	s.record(r)
	if s.script.Tags != nil {
		s.reply(w, r, *s.script.Tags, "")
		return
	}
	list := api.ListResponse{Models: []api.ListModelResponse{}}
	for _, m := range s.script.Models {
		list.Models = append(list.Models, api.ListModelResponse{
			Name:       m.Name,
			Model:      m.Name,
			ModifiedAt: created,
			Size:       2019393189,
			Digest:     "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
			Details:    m.details(),
		})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	req := s.record(r)
	var sr api.ShowRequest
	if err := json.Unmarshal(req.Body, &sr); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := sr.Model
	if name == "" {
		name = sr.Name
	}
	for _, m := range s.script.Models {
		if m.Name != name {
			continue
		}
		if m.Show != nil {
			s.reply(w, r, *m.Show, name)
			return
		}
		info := map[string]any{"general.architecture": m.arch()}
		if m.ContextLength > 0 {
			info[m.arch()+".context_length"] = m.ContextLength
		}
		resp := api.ShowResponse{
			Details:    m.details(),
			ModelInfo:  info,
			ModifiedAt: created,
		}
		if m.NumCtx > 0 {
			// As the server writes a Modelfile's parameters: the name
			// padded to 30 columns, then the value.
			resp.Parameters = fmt.Sprintf("%-30s %d", "num_ctx", m.NumCtx)
		}
		for _, c := range m.Capabilities {
			resp.Capabilities = append(resp.Capabilities, model.Capability(c))
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
}

// reply writes a scripted response. modelName completes chat chunks.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, rep Reply, modelName string) {
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	// The reply's own content type is set below unless a header gives one.
	for k, v := range rep.Headers {
		w.Header().Set(k, v)
	}
	switch {
	case rep.Error != "":
		writeError(w, status, rep.Error)
	case rep.Body != "":
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
	default:
		// Ollama's content type for a stream; its chunks go out one write
		// and one flush each.
		setDefault(w.Header(), "Content-Type", "application/x-ndjson")
		w.WriteHeader(status)
		for _, l := range rep.Lines {
			w.Write(append(l.bytes(modelName), '\n'))
			w.(http.Flusher).Flush()
		}
	}
	switch rep.End {
	case EndCut:
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		// Aborting the handler makes net/http drop the connection without
		// the final empty chunk: the client sees an unexpected EOF.
		panic(http.ErrAbortHandler)
	case EndStall:
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	}
}

// writeError writes Ollama's error body as its server (gin's c.JSON) does.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	setDefault(w.Header(), "Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// setDefault sets a header the script's headers did not set.
func setDefault(h http.Header, key, value string) {
	if h.Get(key) == "" {
		h.Set(key, value)
	}
}

func (m Model) arch() string {
	if m.Architecture == "" {
		return "llama"
	}
	return m.Architecture
}

func (m Model) details() api.ModelDetails {
	family := m.Family
	if family == "" {
		family = m.arch()
	}
	return api.ModelDetails{
		Format:            "gguf",
		Family:            family,
		Families:          []string{family},
		ParameterSize:     "3.2B",
		QuantizationLevel: "Q4_K_M",
	}
}
