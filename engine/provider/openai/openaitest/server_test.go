package openaitest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func post(t *testing.T, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	return http.DefaultClient.Do(req)
}

func TestWireFormat(t *testing.T) {
	t.Parallel()
	srv := NewServer(&Script{Responses: []Response{
		{Chunks: []json.RawMessage{ContentChunk("c1", "hi"), FinishChunk("c1", "stop")}, Headers: map[string]string{"x-request-id": "req_1"}},
		{Status: 429, Headers: map[string]string{"retry-after": "3"}, Error: &APIError{Message: "Rate limit reached", Type: "requests", Code: "rate_limit_exceeded"}},
		{Status: 502, Body: "<html>bad gateway</html>"},
	}})
	defer srv.Close()

	res, err := post(t, context.Background(), srv.URL, `{"model":"m"}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := "data: " + string(ContentChunk("c1", "hi")) + "\n\ndata: " + string(FinishChunk("c1", "stop")) + "\n\ndata: [DONE]\n\n"
	if string(b) != want {
		t.Errorf("stream body:\n%q\nwant:\n%q", b, want)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" || res.Header.Get("x-request-id") != "req_1" {
		t.Errorf("headers: %v", res.Header)
	}
	for _, c := range []json.RawMessage{ContentChunk("c", `a"\`), ReasoningChunk("c", "reasoning", "r"), ToolCallChunk("c", 1, "call", "read", `{"a":1}`), ToolCallChunk("c", 1, "", "", "x"), RoleChunk("c"), UsageChunk("c", Usage{PromptTokens: 1})} {
		if !json.Valid(c) {
			t.Errorf("invalid chunk %s", c)
		}
	}

	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	wantErr := "{\n    \"error\": {\n        \"message\": \"Rate limit reached\",\n        \"type\": \"requests\",\n        \"param\": null,\n        \"code\": \"rate_limit_exceeded\"\n    }\n}\n"
	if res.StatusCode != 429 || res.Header.Get("retry-after") != "3" || string(b) != wantErr {
		t.Errorf("error response %d %v:\n%s", res.StatusCode, res.Header, b)
	}

	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 502 || string(b) != "<html>bad gateway</html>" {
		t.Errorf("raw body response %d %q", res.StatusCode, b)
	}

	// Past the end of the script: a 500 that names the cause.
	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 || !strings.Contains(string(b), "script exhausted") {
		t.Errorf("exhausted: %d %s", res.StatusCode, b)
	}

	reqs := srv.Requests()
	if len(reqs) != 4 || string(reqs[0].Body) != `{"model":"m"}` || reqs[0].Path != "/v1/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer k" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestEnds(t *testing.T) {
	t.Parallel()
	srv := NewServer(&Script{Repeat: true, Responses: []Response{
		{Chunks: []json.RawMessage{ContentChunk("c", "a")}, End: EndCut},
		{Chunks: []json.RawMessage{ContentChunk("c", "a")}, End: EndEOF},
		{Malformed: `{"id":`},
		{Chunks: []json.RawMessage{ContentChunk("c", "a")}, End: EndStall},
	}})
	defer srv.Close()

	res, err := post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut: read error %v, want unexpected EOF", err)
	}

	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || strings.Contains(string(b), "[DONE]") {
		t.Errorf("eof: %v %q", err, b)
	}

	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "data: {\"id\":\n\ndata: [DONE]\n\n" {
		t.Errorf("malformed: %q", b)
	}

	// A stalled stream sends its chunks, then nothing until the client
	// goes away.
	ctx, cancel := context.WithCancel(context.Background())
	res, err = post(t, ctx, srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("stall: first line %q %v", line, err)
	}
	cancel()
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err == nil {
		t.Errorf("stall: body ended without error after cancel")
	}
}

// TestCloseReleasesStall checks that Close returns while a handler stalls.
func TestCloseReleasesStall(t *testing.T) {
	t.Parallel()
	srv := NewServer(&Script{Responses: []Response{{End: EndStall}}})
	res, err := post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	io.ReadAll(res.Body)
	res.Body.Close()
}

func TestScript(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "script.json")
	data := `{"responses":[
		{"chunks":[{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}]},
		{"status":429,"headers":{"retry-after":"2"},"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}},
		{"chunks":[],"end":"stall"}
	]}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Responses) != 3 || s.Responses[1].Status != 429 || s.Responses[1].Error.Code != "rate_limit_exceeded" || s.Responses[2].End != EndStall {
		t.Errorf("parsed %+v", s)
	}
	if !strings.Contains(string(s.Responses[0].Chunks[0]), `"content":"Hi"`) {
		t.Errorf("chunk %s", s.Responses[0].Chunks[0])
	}
	for _, bad := range []string{
		`{"responses":[{"end":"later"}]}`,
		`{"responses":[{"error":{"message":"x"},"body":"y"}]}`,
		`{"repeat":true}`,
		`{"responses":`,
		`{"format":"grpc","responses":[]}`,
		`{"format":"responses","responses":[{"chunks":[{"delta":"no type"}]}]}`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) accepted", bad)
		}
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("LoadScript of a missing file succeeded")
	}
}

// TestResponsesWireFormat: a script in the Responses format sends each
// event under its type's name and ends without [DONE]; the builders give
// valid events with increasing sequence numbers.
func TestResponsesWireFormat(t *testing.T) {
	t.Parallel()
	evs := NewEvents("resp_1").Reasoning("rs_1", "enc", "a", "b").Message("msg_1", "x", "y").
		Call("fc_1", "call_1", "ls", `{}`).Completed(ResponseUsage{Input: 3, Cached: 1, Output: 2, Reasoning: 1})
	for i, e := range evs {
		var ev struct {
			Type string `json:"type"`
			Seq  int    `json:"sequence_number"`
		}
		if err := json.Unmarshal(e, &ev); err != nil || ev.Type == "" || ev.Seq != i {
			t.Errorf("event %d: %s (%v)", i, e, err)
		}
	}
	last := string(evs[len(evs)-1])
	for _, want := range []string{`"status":"completed"`, `"output":[{"id":"rs_1","type":"reasoning","encrypted_content":"enc","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]},`,
		`"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":1},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":5}`} {
		if !strings.Contains(last, want) {
			t.Errorf("response.completed lacks %s:\n%s", want, last)
		}
	}

	srv := NewServer(&Script{Format: FormatResponses, Responses: []Response{{Chunks: evs[:2]}, {Chunks: evs[:1], End: EndDone}}})
	defer srv.Close()
	res, err := post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := "event: response.created\ndata: " + string(evs[0]) + "\n\nevent: response.in_progress\ndata: " + string(evs[1]) + "\n\n"
	if string(b) != want {
		t.Errorf("body:\n%q\nwant:\n%q", b, want)
	}
	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasSuffix(string(b), "\n\ndata: [DONE]\n\n") {
		t.Errorf("explicit done: %q", b)
	}
}

// TestGet: a GET is answered from the script's Get map (twice alike), a
// path outside it is a 404, and neither uses a scripted response.
func TestGet(t *testing.T) {
	t.Parallel()
	s, err := ParseScript([]byte(`{"get":{"/v1/models":{"object":"list","data":[{"id":"m"}]}},"responses":[{"chunks":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(s)
	t.Cleanup(srv.Close)
	for range 2 {
		res, err := http.Get(srv.URL + "/models")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != `{"object":"list","data":[{"id":"m"}]}` || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET /v1/models: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
	}
	res, err := http.Get(strings.TrimSuffix(srv.URL, "/v1") + "/props")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("GET /props: %d, want 404", res.StatusCode)
	}
	// The one response is still there for the chat request.
	res, err = post(t, context.Background(), srv.URL, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "[DONE]") {
		t.Errorf("chat after GETs: %d %q", res.StatusCode, b)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests recorded, want 4", n)
	}
}
