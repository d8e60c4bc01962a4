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
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) accepted", bad)
		}
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("LoadScript of a missing file succeeded")
	}
}
