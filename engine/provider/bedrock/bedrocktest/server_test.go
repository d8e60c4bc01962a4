package bedrocktest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

const scriptJSON = `{"responses": [
  {"events": [
    {"event": "messageStart", "data": {"role": "assistant"}},
    {"event": "contentBlockDelta", "data": {"contentBlockIndex": 0, "delta": {"text": "Hi <you>"}}},
    {"exception": "throttlingException", "data": {"message": "Too many requests"}}
  ]},
  {"status": 400, "errorType": "ValidationException", "body": {"message": "bad"}}
]}`

func TestLoadAndServeFramedEvents(t *testing.T) {
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

	url := srv.URL + "/model/anthropic.claude-x/converse-stream"
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.amazon.eventstream" {
		t.Errorf("content type %q", ct)
	}
	// Decoded with the SDK's own decoder: the framing (lengths, CRCs) is
	// the service's.
	dec := eventstream.NewDecoder()
	r := bytes.NewReader(body)
	type msg struct{ typ, name, payload string }
	var got []msg
	for r.Len() > 0 {
		m, err := dec.Decode(r, nil)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		name := m.Headers.Get(":event-type")
		if name == nil {
			name = m.Headers.Get(":exception-type")
		}
		if ct := m.Headers.Get(":content-type"); ct == nil || ct.String() != "application/json" {
			t.Errorf("content type header %v", ct)
		}
		got = append(got, msg{m.Headers.Get(":message-type").String(), name.String(), string(m.Payload)})
	}
	want := []msg{
		{"event", "messageStart", `{"role":"assistant"}`},
		{"event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi <you>"}}`},
		{"exception", "throttlingException", `{"message":"Too many requests"}`},
	}
	if len(got) != len(want) {
		t.Fatalf("messages %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	resp, err = http.Post(url, "application/json", strings.NewReader(`{"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("X-Amzn-Errortype"), "ValidationException:") || string(body) != `{"message":"bad"}` {
		t.Errorf("error answer %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// Past the script: a service error that says so.
	resp, err = http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("past the script: status %d", resp.StatusCode)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 || string(reqs[0].Body) != `{"messages":[]}` || reqs[0].Path != "/model/anthropic.claude-x/converse-stream" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestHelpersDecodeAsEvents(t *testing.T) {
	for _, e := range []Event{MessageStart(), TextDelta(0, "a"), ReasoningDelta(0, "b"), SignatureDelta(0, "s"),
		RedactedDelta(0, []byte{1}), ToolUseStart(1, "t", "n"), ToolUseDelta(1, `{}`), BlockStop(1),
		MessageStop("end_turn"), Metadata(Usage{Input: 1, CacheRead: 2}), Exception("validationException", "m")} {
		r := Response{Events: []Event{e}}
		if err := r.check(); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for name, s := range map[string]string{
		"unknown key":     `{"responses":[{"stauts":200}]}`,
		"bad end":         `{"responses":[{"end":"later"}]}`,
		"body and events": `{"responses":[{"body":{},"events":[{"event":"x","data":{}}]}]}`,
		"both names":      `{"responses":[{"events":[{"event":"a","exception":"b","data":{}}]}]}`,
		"no name":         `{"responses":[{"events":[{"data":{}}]}]}`,
		"data not object": `{"responses":[{"events":[{"event":"a","data":[1]}]}]}`,
		"trailing data":   `{"responses":[]} {}`,
	} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
