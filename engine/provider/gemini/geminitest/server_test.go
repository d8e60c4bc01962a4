package geminitest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url+"/v1beta/models/m:streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{"contents":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// TestWireFormat: chunks go out as Google frames them, errors as Google's
// indented body, and a request past the script is a 500 that says so.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(`{"responses":[
	 {"chunks":[{"candidates":[{"content":{"parts":[{"text":"a: \"b\", c"}],"role":"model"},"index":0}],"responseId":"r1"}]},
	 {"status":429,"headers":{"Retry-After":"3"},"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(s)
	defer srv.Close()

	res, body := post(t, srv.URL)
	want := "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"a: \\\"b\\\", c\"}],\"role\": \"model\"},\"index\": 0}],\"responseId\": \"r1\"}\r\n\r\n"
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || body != want {
		t.Errorf("stream %d %q:\n%q\nwant\n%q", res.StatusCode, res.Header.Get("Content-Type"), body, want)
	}
	res, body = post(t, srv.URL)
	want = "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"slow down\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n"
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" || body != want {
		t.Errorf("error %d %v:\n%q", res.StatusCode, res.Header, body)
	}
	res, body = post(t, srv.URL)
	if res.StatusCode != 500 || !strings.Contains(body, "no response left for request 3") {
		t.Errorf("exhausted %d %s", res.StatusCode, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Path != "/v1beta/models/m:streamGenerateContent" || reqs[0].Query != "alt=sse" || string(reqs[0].Body) != `{"contents":[]}` {
		t.Errorf("requests %+v", reqs)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{"responses":[{"chunks":[{}],"error":{"code":1}}]}`,
		`{"responses":[{"end":"later"}]}`,
		`{"responses":[{"chunks":[1]}]}`,
		`{"responses":[],"extra":1}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
