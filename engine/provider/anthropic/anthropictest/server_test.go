package anthropictest

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const scriptJSON = `{"responses": [
  {"headers": {"x-extra": "1"}, "events": [
    {"data": {"type": "message_start", "message": {"id": "msg_1"}}},
    {"event": "keepalive", "data": {"type": "ping"}},
    {"raw": "event: content_block_delta\ndata: {not json\n\n"}
  ], "end": "cut"},
  {"status": 429, "headers": {"retry-after": "7"},
   "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}}
]}`

func TestLoadAndServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(scriptJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(s)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if readErr == nil {
		t.Errorf("reading a cut stream succeeded")
	}
	want := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n" +
		"event: keepalive\ndata: {\"type\":\"ping\"}\n\n" +
		"event: content_block_delta\ndata: {not json\n\n"
	if string(body) != want {
		t.Errorf("stream bytes:\n%q\nwant:\n%q", body, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" || resp.Header.Get("X-Extra") != "1" {
		t.Errorf("headers %v", resp.Header)
	}

	resp, err = http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || resp.Header.Get("Request-Id") != "req_test_2" {
		t.Errorf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	if want := `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`; string(body) != want {
		t.Errorf("error body %s, want %s", body, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 || string(reqs[0].Body) != `{"a":1}` || string(reqs[1].Body) != `{"b":2}` || reqs[1].Path != "/v1/messages" {
		t.Errorf("recorded requests %+v", reqs)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"unknown key":         `{"responses":[{"stauts":200}]}`,
		"bad end":             `{"responses":[{"end":"later"}]}`,
		"body and events":     `{"responses":[{"body":{},"events":[{"raw":"x"}]}]}`,
		"data and raw":        `{"responses":[{"events":[{"raw":"x","data":{"type":"ping"}}]}]}`,
		"neither":             `{"responses":[{"events":[{"event":"ping"}]}]}`,
		"no event name":       `{"responses":[{"events":[{"data":{"x":1}}]}]}`,
		"trailing data":       `{"responses":[]} {}`,
		"not a script at all": `[1,2]`,
	}
	for name, src := range tests {
		if _, err := Parse([]byte(src)); err == nil {
			t.Errorf("%s: Parse accepted %s", name, src)
		}
	}
}
