package ollamatest_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine/provider/ollama/ollamatest"
)

const script = `{
  "models": [
    {"name": "qwen3:8b", "capabilities": ["completion", "tools", "thinking"],
     "architecture": "qwen3", "contextLength": 40960}
  ],
  "chat": [
    {"lines": [
      {"model": "qwen3:8b", "created_at": "2026-01-02T03:04:05Z",
       "message": {"role": "assistant", "content": "Hi"}, "done": false},
      "not json"
    ]},
    {"status": 404, "error": "model \"x\" not found, try pulling it first"},
    {"lines": [], "end": "cut"}
  ]
}`

func post(t *testing.T, url, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestScriptFromJSON(t *testing.T) {
	t.Parallel()
	s, err := ollamatest.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.NewServer(s)
	t.Cleanup(srv.Close)

	status, ctype, body := post(t, srv.URL+"/api/chat", `{"model":"qwen3:8b","messages":[],"options":{"num_ctx":40960}}`)
	want := `{"model":"qwen3:8b","created_at":"2026-01-02T03:04:05Z","message":{"role":"assistant","content":"Hi"},"done":false}` + "\nnot json\n"
	if status != 200 || ctype != "application/x-ndjson" || body != want {
		t.Errorf("reply 1: %d %s %q\nwant 200 application/x-ndjson %q", status, ctype, body, want)
	}

	status, ctype, body = post(t, srv.URL+"/api/chat", `{"model":"x"}`)
	want = `{"error":"model \"x\" not found, try pulling it first"}`
	if status != 404 || ctype != "application/json; charset=utf-8" || body != want {
		t.Errorf("reply 2: %d %s %q\nwant 404 %q", status, ctype, body, want)
	}

	resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"x"}`))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reply 3 (cut): err = %v, want unexpected EOF", err)
	}

	status, _, body = post(t, srv.URL+"/api/chat", `{"model":"x"}`)
	if status != 500 || !strings.Contains(body, "no scripted chat reply left") {
		t.Errorf("past the script: %d %s", status, body)
	}

	reqs := srv.ChatRequests()
	if len(reqs) != 4 || reqs[0].Options["num_ctx"] != float64(40960) {
		t.Errorf("recorded %d chat requests, first options %v", len(reqs), reqs[0].Options)
	}
}

func TestGoLines(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Chat: []ollamatest.Reply{{Lines: []ollamatest.Line{
		ollamatest.Thinking("hm"),
		ollamatest.ToolCall("", "read", `{"path":"a","limit":2}`),
		ollamatest.Done("stop", 26, 298),
	}}}})
	t.Cleanup(srv.Close)
	_, _, body := post(t, srv.URL+"/api/chat", `{"model":"llama3.2"}`)
	// Key order and encoding as Ollama's server writes them (json.Marshal
	// of api.ChatResponse).
	want := `{"model":"llama3.2","created_at":"2026-01-02T03:04:05Z","message":{"role":"assistant","content":"","thinking":"hm"},"done":false}
{"model":"llama3.2","created_at":"2026-01-02T03:04:05Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"read","arguments":{"path":"a","limit":2}}}]},"done":false}
{"model":"llama3.2","created_at":"2026-01-02T03:04:05Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1234567890,"load_duration":12345678,"prompt_eval_count":26,"prompt_eval_duration":23456789,"eval_count":298,"eval_duration":345678901}
`
	if body != want {
		t.Errorf("body:\n%s\nwant:\n%s", body, want)
	}
}

func TestTagsAndShow(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Models: []ollamatest.Model{
		{Name: "qwen3:8b", Capabilities: []string{"completion", "thinking"}, Architecture: "qwen3", ContextLength: 40960},
	}})
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"name":"qwen3:8b","model":"qwen3:8b"`) {
		t.Errorf("tags: %s", b)
	}
	_, _, body := post(t, srv.URL+"/api/show", `{"model":"qwen3:8b"}`)
	for _, s := range []string{`"model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}`, `"capabilities":["completion","thinking"]`} {
		if !strings.Contains(body, s) {
			t.Errorf("show: %s\nlacks %s", body, s)
		}
	}
	status, _, body := post(t, srv.URL+"/api/show", `{"model":"nope"}`)
	if status != 404 || body != `{"error":"model 'nope' not found"}` {
		t.Errorf("show unknown: %d %s", status, body)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{"chats": []}`,
		`{"chat": [{"end": "later"}]}`,
		`{"chat": [{"error": "x", "lines": ["y"]}]}`,
		`{"chat": [{"lines": [1]}]}`,
		`{"chat": []} {}`,
	} {
		if _, err := ollamatest.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) succeeded", bad)
		}
	}
}
