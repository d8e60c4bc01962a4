// Package gemini is the adapter of Google's Gemini API (the
// "google-generative-ai" API of pi's models.json), through Google's
// official Go SDK, google.golang.org/genai: the SDK builds the request
// (streamGenerateContent with alt=sse), sends it, frames the event stream
// and reports HTTP failures as genai.APIError; this package converts the
// engine's request to the SDK's types (request.go), the chunks to engine
// events (stream.go) and failures to *engine.ProviderError (errors.go).
//
// It keeps the adapter contract of docs/providers.md: no retries of its
// own (the SDK's are off unless asked for, and never are), typed failures
// whose Retry-After (or Google's RetryInfo) the engine honours, blocks that
// never interleave (a provider.StreamWriter emits the events), and abort by
// the context.
//
// Thinking arrives as parts marked thought: true; a part may carry a
// thought signature (opaque bytes, base64 on the wire), which the next
// request must send back on the same part: a thinking or text block keeps
// its signature as thinkingSignature or textSignature, a function call as
// the tool call's thoughtSignature, as pi stores them.
//
// The SDK's client is built per call from explicit settings only (the
// key, the backend, the base URL and API version), so the environment
// variables it reads by default (GOOGLE_API_KEY, GOOGLE_GEMINI_BASE_URL,
// GOOGLE_GENAI_USE_VERTEXAI, ...) never override the registry.
//
// Start-up: nothing of the SDK is constructed before a call, but linking
// it links its dependencies (cloud.google.com/go/auth, s2a-go, gRPC,
// protobuf, go-cmp), whose package initialisers run at every start of the
// binary, used or not: about 3 ms, measured with GODEBUG=inittrace=1 in
// December 2026. Go cannot defer a package's init; only leaving the SDK
// out of the binary (a build tag, as the Temporal SDK is) would.
package gemini

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// DefaultBaseURL is used when a model has no BaseURL: Google's endpoint
// with the version pi's models.json gives it.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// defaultVersion is the API version of a base URL that names none (a test
// server, a proxy at its root): v1beta, where thinking, JSON-schema
// parameters and responseJsonSchema live.
const defaultVersion = "v1beta"

// Options configure a Provider.
type Options struct {
	// HTTPClient makes the requests; http.DefaultClient's transport when
	// nil.
	HTTPClient *http.Client
	// APIKey returns the key for a model's provider.
	APIKey func(m engine.Model) string
}

// Provider streams Gemini's generateContent. It is safe for concurrent
// use: a call shares nothing with another.
type Provider struct {
	opts Options
}

// New returns a Provider.
func New(o Options) *Provider { return &Provider{opts: o} }

var _ engine.Provider = (*Provider)(nil)

// Stream implements engine.Provider.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	var key string
	if p.opts.APIKey != nil {
		key = p.opts.APIKey(req.Model)
	}
	if key == "" {
		// The SDK would look in GOOGLE_API_KEY and GEMINI_API_KEY behind
		// the registry's back; the registry has already looked.
		return &engine.ProviderError{Kind: engine.ErrorAuth, Err: ErrNoKey,
			Message: "No API key for provider " + req.Model.Provider + ": set GEMINI_API_KEY (or GOOGLE_API_KEY), or the provider's apiKey in models.json"}
	}
	red := provider.Secrets(req.Model, key)
	base, version := endpoint(req.Model.BaseURL)
	rec := &recorder{red: red}
	rec.next = http.DefaultTransport
	if p.opts.HTTPClient != nil && p.opts.HTTPClient.Transport != nil {
		rec.next = p.opts.HTTPClient.Transport
	}
	httpClient := &http.Client{Transport: rec}
	if p.opts.HTTPClient != nil {
		httpClient.Timeout = p.opts.HTTPClient.Timeout
	}
	headers := http.Header{}
	for k, v := range req.Model.Headers {
		headers.Set(k, v)
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  httpClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: version, Headers: headers},
	})
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: provider.Redact(err.Error(), red), Err: err}
	}
	contents, config := buildRequest(req)
	s := streamState{w: provider.NewStreamWriter(fn)}
	for chunk, err := range client.Models.GenerateContentStream(ctx, req.Model.ID, contents, config) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if s.w.Err() != nil {
				return s.w.Err()
			}
			return failure(err, rec, red)
		}
		if err := s.chunk(chunk); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if rec.body != nil && rec.body.err != nil {
		return transportError(rec.body.err, red)
	}
	return s.finish(red)
}

// endpoint splits a model's baseUrl into the base the SDK appends
// "<version>/models/..." to and that version: a path ending in a version
// segment (pi's ".../v1beta") gives it, else defaultVersion.
func endpoint(raw string) (base, version string) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw, defaultVersion
	}
	path := strings.TrimRight(u.Path, "/")
	i := strings.LastIndexByte(path, '/')
	last := path[i+1:]
	if !isVersion(last) {
		return raw, defaultVersion
	}
	u.Path = path[:i+1]
	return u.String(), last
}

// isVersion reports whether a path segment is an API version: v1, v1beta,
// v1alpha, v2beta3...
func isVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' || s[1] < '0' || s[1] > '9' {
		return false
	}
	for _, c := range s[1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// recorder is the transport of one call: it keeps the response's status
// and headers, which the SDK's APIError does not carry (Retry-After),
// refuses a successful response that is not a stream (a proxy's page),
// and keeps what broke a stream's body (bodyWatch).
type recorder struct {
	next   http.RoundTripper
	red    []string
	header http.Header
	status int
	body   *bodyWatch
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.header, r.status = res.Header, res.StatusCode
	if err := provider.NotAStream(res, "an event stream", r.red); err != nil {
		res.Body.Close()
		return nil, err
	}
	if res.StatusCode >= 200 && res.StatusCode <= 299 {
		r.body = &bodyWatch{rc: res.Body}
		res.Body = r.body
	}
	return res, nil
}

// bodyWatch ends a stream's body cleanly where reading it failed (a cut
// connection, an abort) and keeps the failure for the adapter to report:
// the SDK's stream reader writes such a failure to the standard logger
// (stderr) before returning it, which an abort must not do.
type bodyWatch struct {
	rc  io.ReadCloser
	err error
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
		return n, io.EOF
	}
	return n, err
}

func (b *bodyWatch) Close() error { return b.rc.Close() }
