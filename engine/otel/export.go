package otel

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporter sends spans to an OTLP/HTTP collector as protobuf (wire.go),
// configured as the specification's OTEL_EXPORTER_OTLP_* variables say:
// the endpoint (TRACES_ENDPOINT as is, else ENDPOINT + /v1/traces, else
// http://localhost:4318/v1/traces), HEADERS, TIMEOUT, COMPRESSION (gzip),
// CERTIFICATE and CLIENT_CERTIFICATE/CLIENT_KEY, each with its TRACES_
// variant winning. A collector that answers 429 or 502-504, or cannot be
// reached, is tried again (3 tries, backoff, Retry-After honoured) within
// the export's deadline.
type exporter struct {
	url     string
	headers map[string]string
	gzip    bool
	timeout time.Duration
	client  *http.Client

	mu      sync.Mutex
	stopped bool
}

// DefaultEndpoint is where spans go when no variable names a collector.
const DefaultEndpoint = "http://localhost:4318/v1/traces"

// newExporter reads the configuration with getenv.
func newExporter(getenv func(string) string) (*exporter, error) {
	get := func(name string) string {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return v
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	e := &exporter{url: DefaultEndpoint, timeout: 10 * time.Second, headers: map[string]string{}}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		e.url = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		e.url = strings.TrimSuffix(v, "/") + "/v1/traces"
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the OTLP endpoint %q is not an http:// or https:// URL", e.url)
	}
	for _, kv := range strings.Split(get("HEADERS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		k, _ = url.PathUnescape(strings.TrimSpace(k))
		v, _ = url.PathUnescape(strings.TrimSpace(v))
		if k != "" {
			e.headers[k] = v
		}
	}
	if v := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q is not a positive number of milliseconds", v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch c := get("COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION %q %w (gzip or none)", c, ErrUnsupported)
	}
	tlsCfg, err := tlsConfig(get("CERTIFICATE"), get("CLIENT_CERTIFICATE"), get("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	// Its own transport: not http.DefaultTransport, which tracing wraps.
	e.client = &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true,
		MaxIdleConns: 2, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
	}}
	return e, nil
}

// tlsConfig is the exporter's TLS setup: a CA file to trust, a client
// certificate; nil when neither is given (the system's roots).
func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE %s holds no PEM certificate", ca)
		}
	}
	if cert != "" || key != "" {
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}

// errStopped is an export after Shutdown.
var errStopped = errors.New("the exporter is shut down")

// ExportSpans implements sdktrace.SpanExporter.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return errStopped
	}
	if len(spans) == 0 {
		return nil
	}
	body := encodeRequest(spans)
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var err error
	for try, wait := 1, 500*time.Millisecond; ; try, wait = try+1, wait*2 {
		var again time.Duration
		again, err = e.post(ctx, body)
		if err == nil || again < 0 || try == 3 {
			break
		}
		if again > 0 {
			wait = again
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (then %w)", err, ctx.Err())
		case <-t.C:
		}
	}
	return err
}

// post sends one request. again is how long to wait before trying again
// (0: the backoff's), or negative when trying again cannot help.
func (e *exporter) post(ctx context.Context, body []byte) (again time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "xcsh OTLP exporter")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("exporting spans to %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		again = 0
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			again = time.Duration(s) * time.Second
		}
	default:
		again = -1
	}
	return again, fmt.Errorf("exporting spans to %s: %s: %s", e.url, resp.Status, strings.TrimSpace(string(msg)))
}

// Shutdown implements sdktrace.SpanExporter.
func (e *exporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.client.CloseIdleConnections()
	return nil
}
