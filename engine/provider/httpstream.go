package provider

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// The adapters' checks on a streamed HTTP body (docs/providers.md "Not a
// stream"). A proxy in front of a provider may answer 200 with its own
// HTML page (a login or error page), and a broken server may send a line
// longer than a stream decoder takes; both used to look like a cut
// connection ("stream ended before …", "bufio.Scanner: token too long")
// and were retried, getting the same answer each time. Here they are
// engine.ErrorProtocol failures that say what came back.

// ErrNotAStream is the cause (engine.ProviderError.Err) of a successful
// response whose body is not the stream asked for.
var ErrNotAStream = errors.New("the response is not a stream")

// pageMax bounds what is read of a page to quote it.
const pageMax = 64 << 10

// NotAStream returns the failure of a successful response to a streaming
// request whose body is a page (HTML or XML) instead of the stream asked
// for (want: "an event stream", "an NDJSON stream"), or nil. A response
// whose content type is a stream's or JSON is not looked at; any other
// (none, text/plain) is peeked at with one read, and res.Body replaced by
// a reader that gives those bytes back first, so a stream loses nothing.
// The message quotes the page's title, or its start. secrets are redacted
// from it.
func NotAStream(res *http.Response, want string, secrets []string) error {
	if res == nil || res.Body == nil || res.StatusCode < 200 || res.StatusCode > 299 {
		return nil
	}
	ctype := res.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ctype)
	switch media {
	case "text/event-stream", "application/x-ndjson", "application/json":
		return nil
	case "text/html", "application/xhtml+xml", "text/xml", "application/xml":
		page, _ := io.ReadAll(io.LimitReader(res.Body, pageMax))
		return notStreamError(res.StatusCode, ctype, page, want, secrets)
	}
	head := make([]byte, 512)
	n, err := res.Body.Read(head)
	head = head[:n]
	res.Body = &replayBody{head: head, err: err, rc: res.Body}
	if !looksLikeMarkup(head) {
		return nil
	}
	page, _ := io.ReadAll(io.LimitReader(res.Body, pageMax))
	return notStreamError(res.StatusCode, ctype, page, want, secrets)
}

// NotAStreamBody is the failure of a successful response whose body held
// no event at all and was not of the stream's type (a server that ignored
// "stream": true and sent one JSON object, say): body is its start.
func NotAStreamBody(status int, ctype string, body []byte, want string, secrets []string) error {
	return notStreamError(status, ctype, body, want, secrets)
}

func notStreamError(status int, ctype string, body []byte, want string, secrets []string) *engine.ProviderError {
	if media, _, err := mime.ParseMediaType(ctype); err == nil {
		ctype = media
	}
	if ctype == "" {
		ctype = "no content type"
	}
	what := "an empty body"
	if len(bytes.TrimSpace(body)) > 0 {
		what = strconv.Quote(quoteStart(body))
	}
	return &engine.ProviderError{Kind: engine.ErrorProtocol, Status: status, Err: ErrNotAStream,
		Message: Redact(fmt.Sprintf("the server answered %d with %s instead of %s: %s", status, ctype, want, what), secrets)}
}

// looksLikeMarkup reports whether a body starts like an HTML or XML page.
func looksLikeMarkup(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '<'
}

var titleRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>.*?</title>`) })

// quoteStart is what a message quotes of a body: its <title> element when
// it has one, else its first 120 characters, white space collapsed.
func quoteStart(body []byte) string {
	s := string(body)
	if t := titleRe().FindString(s); t != "" {
		s = t
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:120]) + "…"
	}
	return s
}

// replayBody gives back the bytes NotAStream peeked at, then the rest.
type replayBody struct {
	head []byte
	err  error // the peek's error, returned once head is given back
	rc   io.ReadCloser
}

func (r *replayBody) Read(p []byte) (int, error) {
	if len(r.head) > 0 {
		n := copy(p, r.head)
		r.head = r.head[n:]
		return n, nil
	}
	if r.err != nil {
		err := r.err
		r.err = nil
		return 0, err
	}
	return r.rc.Read(p)
}

func (r *replayBody) Close() error { return r.rc.Close() }

// LineWatch wraps a streamed body and remembers how it began and how its
// current line begins, so that a decoder's failure can say what came
// back. It costs one scan for a newline per read.
type LineWatch struct {
	rc      io.ReadCloser
	head    []byte // the body's first bytes (at most watchMax)
	line    []byte // the current line's first bytes (at most watchMax)
	lineLen int64  // the current line's length so far
	total   int64
}

const watchMax = 200

// WatchLines replaces res.Body with a LineWatch over it.
func WatchLines(res *http.Response) *LineWatch {
	w := &LineWatch{rc: res.Body}
	res.Body = w
	return w
}

// Read implements io.Reader.
func (w *LineWatch) Read(p []byte) (int, error) {
	n, err := w.rc.Read(p)
	b := p[:n]
	w.total += int64(n)
	if len(w.head) < watchMax {
		w.head = append(w.head, b[:min(len(b), watchMax-len(w.head))]...)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		w.line, w.lineLen, b = w.line[:0], 0, b[i+1:]
	}
	w.lineLen += int64(len(b))
	if len(w.line) < watchMax {
		w.line = append(w.line, b[:min(len(b), watchMax-len(w.line))]...)
	}
	return n, err
}

// Close implements io.Closer.
func (w *LineWatch) Close() error { return w.rc.Close() }

// Head returns the first bytes of the body (up to 200).
func (w *LineWatch) Head() []byte { return w.head }

// Empty reports whether the body had no bytes at all so far.
func (w *LineWatch) Empty() bool { return w.total == 0 }

// LineTooLong returns the failure of a decoder that stopped on a line over
// its cap (limit, as a person reads it: "32 MiB"), or nil when that is not
// what happened: err is bufio.ErrTooLong (the SDKs' decoders), or, for a
// decoder that drops its scanner's error (Ollama's), err is nil and the
// current line has reached capBytes (0: not checked). what names the
// stream ("event stream", "NDJSON stream").
func (w *LineWatch) LineTooLong(err error, capBytes int64, limit, what string, secrets []string) error {
	if !errors.Is(err, bufio.ErrTooLong) && (err != nil || capBytes <= 0 || w.lineLen < capBytes) {
		return nil
	}
	return &engine.ProviderError{Kind: engine.ErrorProtocol, Status: http.StatusOK, Err: err,
		Message: Redact(fmt.Sprintf("the server sent a line over %s in its %s, starting %s", limit, what, strconv.Quote(quoteLine(w.line))), secrets)}
}

// quoteLine is the start of an over-long line for a message.
func quoteLine(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80])
	}
	return s + "…"
}
