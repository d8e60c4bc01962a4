package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// DefaultHost is where Ollama listens unless told otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// Options configures a Provider.
type Options struct {
	// HTTPClient sends the requests; nil means http.DefaultClient. It should
	// have no overall Timeout: a long answer streams for minutes, and the
	// engine bounds a call with its ctx.
	HTTPClient *http.Client
}

// Provider streams model calls to Ollama's /api/chat. It holds no state
// between calls and is safe for concurrent use.
type Provider struct {
	http *http.Client
}

// New returns a Provider.
func New(o Options) *Provider {
	c := o.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	return &Provider{http: c}
}

// Host returns the default Ollama address: $OLLAMA_HOST, read the way the
// ollama command reads it ("host", "host:port", "scheme://host:port"), or
// DefaultHost.
func Host() string {
	return parseHost(os.Getenv("OLLAMA_HOST"))
}

// parseHost completes an OLLAMA_HOST value into a URL as the ollama
// command does: http unless a scheme is given, port 11434 unless a port is
// given (80 or 443 when the scheme is given), 127.0.0.1 when only a port is.
func parseHost(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultHost
	}
	port := "11434"
	scheme, rest, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, rest = "http", s
	case scheme == "https":
		port = "443"
	case scheme == "http":
		port = "80"
	}
	hostport, path, _ := strings.Cut(rest, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
		if host == "" {
			host = "127.0.0.1"
		}
	} else {
		if host == "" {
			host = "127.0.0.1"
		}
		if n, err := strconv.Atoi(p); err == nil && n >= 0 && n <= 65535 {
			port = p
		}
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u.String()
}

// baseURL is the server address for model m: its BaseURL without the /v1
// suffix the OpenAI-compatible endpoint needs, or Host().
func baseURL(m engine.Model) (*url.URL, error) {
	s := strings.TrimRight(m.BaseURL, "/")
	s = strings.TrimSuffix(s, "/v1")
	if s == "" {
		s = Host()
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, errors.New("not an absolute URL")
	}
	return u, nil
}

// Stream implements engine.Provider: one POST /api/chat, streamed.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	base, err := baseURL(req.Model)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: "ollama: bad base URL " + strconv.Quote(req.Model.BaseURL) + ": " + err.Error(), Err: err}
	}
	var notice string
	if len(req.Tools) > 0 && !offersTools(req.Model) {
		// Offering tools to this model fails the whole request: it is
		// asked without them, and the user is told why it cannot act.
		r := *req
		r.Tools = nil
		req = &r
		notice = fmt.Sprintf("ollama/%s cannot call tools (its template has none): it is asked without them, so it can only answer in text", req.Model.ID)
	}
	chatReq, err := buildRequest(req)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: "ollama: " + err.Error(), Err: err}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	if notice != "" {
		if err := fn(engine.StreamEvent{Kind: engine.StreamNotice, Delta: notice}); err != nil {
			return err
		}
	}
	s := &streamer{w: provider.NewStreamWriter(fn), nextID: countToolCalls(req.Messages)}
	rt := &callTransport{next: p.http.Transport}
	hc := *p.http
	hc.Transport = rt
	client := api.NewClient(base, &hc)
	err = client.Chat(ctx, chatReq, s.chunk)
	switch {
	case s.done:
		// StreamDone was delivered; whatever the connection did after the
		// done line does not change the answer.
		return nil
	case s.err() != nil:
		return s.err()
	case ctx.Err() != nil:
		// The client reports a cancelled read as a clean end of stream, or as
		// a url.Error; either way the call was aborted.
		return ctx.Err()
	case err != nil:
		pe := classify(err, base.String(), req.Model.ID)
		var se api.StatusError
		if errors.As(err, &se) && rt.header != nil {
			// The client's StatusError has no headers: the transport kept them.
			pe.RetryAfter, pe.RetryAt = provider.ParseRetryAfter(rt.header)
		}
		return pe
	}
	if rt.watch != nil {
		// The client drops its scanner's error: a line over its cap ends
		// the stream as if the body had ended.
		if err := rt.watch.LineTooLong(nil, maxLine, "8 MB", "NDJSON stream", nil); err != nil {
			return err
		}
	}
	// The body ended (the client does not report a read error, so a cut
	// connection looks the same) without the done line.
	return &engine.ProviderError{Kind: engine.ErrorTransport, Message: "ollama: stream ended before the response was done", Err: ErrIncomplete}
}

// maxLine is the longest line the api client reads (its maxBufferSize,
// 8 * format.MegaByte).
const maxLine = 8_000_000

// callTransport carries the requests of one Stream call. The api client
// returns an HTTP failure as a StatusError without the response's headers,
// so Retry-After would be lost: the transport keeps them. It also fails a
// successful response whose body is a page rather than the NDJSON stream
// (a proxy's), and watches the stream's lines so that one over the
// client's cap can be named. One call, one goroutine: no lock.
type callTransport struct {
	next   http.RoundTripper   // nil: http.DefaultTransport
	header http.Header         // the last response's
	watch  *provider.LineWatch // the last successful response's body
}

func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	res, err := next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	t.header = res.Header
	if err := provider.NotAStream(res, "an NDJSON stream", nil); err != nil {
		res.Body.Close()
		return nil, err
	}
	if res.StatusCode >= 200 && res.StatusCode <= 299 {
		t.watch = provider.WatchLines(res)
	}
	return res, nil
}
