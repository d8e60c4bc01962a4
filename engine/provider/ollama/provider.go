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
	s := &streamer{w: engine.NewStreamWriter(fn), nextID: countToolCalls(req.Messages)}
	client := api.NewClient(base, p.http)
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
		return classify(err, base.String(), req.Model.ID)
	}
	// The body ended (the client does not report a read error, so a cut
	// connection looks the same) without the done line.
	return &engine.ProviderError{Kind: engine.ErrorTransport, Message: "ollama: stream ended before the response was done", Err: ErrIncomplete}
}
