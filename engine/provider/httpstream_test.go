package provider

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func response(ctype, body string) *http.Response {
	h := http.Header{}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

func TestNotAStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ctype, body string
		msg               string // "" for a stream
	}{
		{"event stream", "text/event-stream", "<not looked at>", ""},
		{"ndjson", "application/x-ndjson", "<not looked at>", ""},
		{"json", "application/json; charset=utf-8", "<not looked at>", ""},
		{"html page", "text/html; charset=utf-8", "<html><head>\n<title>\n  502  Bad\nGateway </title></head></html>",
			`the server answered 200 with text/html instead of an event stream: "<title> 502 Bad Gateway </title>"`},
		{"page without a title", "text/html", "<html><body>" + strings.Repeat("word ", 40) + "</body></html>",
			`the server answered 200 with text/html instead of an event stream: "<html><body>` + strings.Repeat("word ", 21) + `wor…"`},
		{"page as text/plain", "text/plain", "\r\n  <!doctype html><p>hi</p>",
			`the server answered 200 with text/plain instead of an event stream: "<!doctype html><p>hi</p>"`},
		{"page without a type", "", "<html>x</html>",
			`the server answered 200 with no content type instead of an event stream: "<html>x</html>"`},
		{"xml", "application/xml", "<error>denied</error>",
			`the server answered 200 with application/xml instead of an event stream: "<error>denied</error>"`},
		{"empty page", "text/html", "", `the server answered 200 with text/html instead of an event stream: an empty body`},
		{"stream without a type", "", "data: {}\n\n", ""},
		{"secret redacted", "text/html", "<title>key sk-secret-1</title>", `the server answered 200 with text/html instead of an event stream: "<title>key [redacted]</title>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := response(tt.ctype, tt.body)
			err := NotAStream(res, "an event stream", []string{"sk-secret-1"})
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				// Nothing is lost to the peek.
				if b, _ := io.ReadAll(res.Body); string(b) != tt.body {
					t.Errorf("body read after the check = %q, want %q", b, tt.body)
				}
				return
			}
			var pe *engine.ProviderError
			if !errors.As(err, &pe) || pe.Kind != engine.ErrorProtocol || pe.Status != 200 || !errors.Is(err, ErrNotAStream) {
				t.Fatalf("err = %#v, want an engine.ErrorProtocol engine.ProviderError", err)
			}
			if pe.Message != tt.msg {
				t.Errorf("message\n %s\nwant\n %s", pe.Message, tt.msg)
			}
		})
	}
}

func TestLineWatch(t *testing.T) {
	t.Parallel()
	long := "data: " + strings.Repeat("é", 400)
	res := response("text/event-stream", "data: one\n\n"+long)
	w := WatchLines(res)
	sc := bufio.NewScanner(iotest{res.Body, 7}) // small reads: lines span them
	sc.Buffer(nil, 300)
	for sc.Scan() {
	}
	if got, body := string(w.Head()), "data: one\n\n"+long; got != body[:200] {
		t.Errorf("head = %q", got)
	}
	err := w.LineTooLong(sc.Err(), 0, "300 B", "event stream", nil)
	want := `the server sent a line over 300 B in its event stream, starting "data: ` + strings.Repeat("é", 74) + `…"`
	if err == nil || err.Error() != want {
		t.Errorf("LineTooLong = %v\nwant %s", err, want)
	}
	if err := w.LineTooLong(io.ErrUnexpectedEOF, 0, "300 B", "event stream", nil); err != nil {
		t.Errorf("another error is not a long line: %v", err)
	}
	// A decoder that drops its scanner's error: the line's length tells.
	if err := w.LineTooLong(nil, 300, "300 B", "event stream", nil); err == nil {
		t.Error("a current line over capBytes is a long line")
	}
	if err := w.LineTooLong(nil, 1<<20, "1 MiB", "event stream", nil); err != nil {
		t.Errorf("a short line is not: %v", err)
	}
}

// iotest reads at most n bytes at a time.
type iotest struct {
	r io.Reader
	n int
}

func (r iotest) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), r.n)]) }
