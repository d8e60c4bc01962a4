package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

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

// Provider streams model calls to Ollama's /api/chat. It is safe for
// concurrent use. The one thing it keeps between calls is which models
// refused tools (a 400 "... does not support tools" for a model discovery
// did not describe): later calls ask them without tools at once.
type Provider struct {
	http *http.Client
	// noTools holds "<host> <model>" for each model that refused tools.
	noTools sync.Map
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

// Stream implements engine.Provider: one POST /api/chat, streamed. A model
// that cannot take tools is asked without them, with a notice first: one
// whose capabilities say so (discovery's "tools": false), and one the
// server refused them for (400 "... does not support tools": discovery did
// not describe it, over a slow link or for a model pulled since), which is
// asked again at once without them, the only time this adapter sends a
// request twice.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	base, err := baseURL(req.Model)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: "ollama: bad base URL " + strconv.Quote(req.Model.BaseURL) + ": " + err.Error(), Err: err}
	}
	refusedKey := base.String() + " " + req.Model.ID
	_, refused := p.noTools.Load(refusedKey)
	withoutTools := len(req.Tools) > 0 && (!offersTools(req.Model) || refused)
	if withoutTools {
		r := *req
		r.Tools = nil
		req = &r
	}
	chatReq, err := buildRequest(req)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: "ollama: " + err.Error(), Err: err}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	notice := func() error {
		msg := fmt.Sprintf("%s/%s cannot call tools (its template has none): it is asked without them, so it can only answer in text", req.Model.Provider, req.Model.ID)
		return fn(engine.StreamEvent{Kind: engine.StreamNotice, Delta: msg})
	}
	if withoutTools {
		if err := notice(); err != nil {
			return err
		}
	}
	err = p.chat(ctx, base, req, chatReq, fn)
	if len(chatReq.Tools) > 0 && refusesTools(err) {
		// Refused before any line was streamed: nothing to take back.
		p.noTools.Store(refusedKey, true)
		chatReq.Tools = nil
		if err := notice(); err != nil {
			return err
		}
		err = p.chat(ctx, base, req, chatReq, fn)
	}
	return err
}

// refusesTools matches the server's refusal of tools for a model whose
// template has none: 400 "registry.ollama.ai/library/tiny:latest does not
// support tools".
var refusesToolsText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)does not support tools`) })

func refusesTools(err error) bool {
	var pe *engine.ProviderError
	return errors.As(err, &pe) && pe.Status == http.StatusBadRequest && refusesToolsText().MatchString(pe.Message)
}

// chat sends one chat request and streams its answer to fn.
func (p *Provider) chat(ctx context.Context, base *url.URL, req *engine.Request, chatReq *api.ChatRequest, fn func(engine.StreamEvent) error) error {
	s := &streamer{w: provider.NewStreamWriter(fn), nextID: countToolCalls(req.Messages)}
	rt := &callTransport{next: p.http.Transport}
	hc := *p.http
	hc.Transport = rt
	client := api.NewClient(base, &hc)
	err := client.Chat(ctx, chatReq, s.chunk)
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
