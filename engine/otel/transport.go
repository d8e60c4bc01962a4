package otel

import (
	"net/http"

	"github.com/xcsh-go/xcsh/engine"
)

// Transport wraps base so that every request made under a span of the
// engine (a model call: engine.TraceParent of its context) carries the
// span's traceparent header, and the provider's own spans join the run's
// trace. A request that already has one, or runs under no span, goes as
// it is. cmd/xcsh installs it as http.DefaultTransport when tracing is
// on: every adapter's client starts from it (docs/providers.md).
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base}
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if tp := engine.TraceParent(req.Context()); tp != "" && req.Header.Get("traceparent") == "" {
		// A RoundTripper must not change the caller's request.
		req = req.Clone(req.Context())
		req.Header.Set("traceparent", tp)
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach base.
func (t transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
