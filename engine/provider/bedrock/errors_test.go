package bedrock

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/bedrock/bedrocktest"
)

func TestFailures(t *testing.T) {
	t.Parallel()
	textThen := func(events ...bedrocktest.Event) bedrocktest.Response {
		return bedrocktest.Response{Events: append([]bedrocktest.Event{bedrocktest.MessageStart(), bedrocktest.TextDelta(0, "Hel")}, events...)}
	}
	withHeader := func(r bedrocktest.Response, k, v string) bedrocktest.Response {
		r.Headers = map[string]string{k: v}
		return r
	}
	tests := []struct {
		name      string
		resp      bedrocktest.Response
		kind      engine.ErrorKind
		status    int
		message   string // the whole message
		retryable bool
		after     time.Duration
	}{
		{"throttled", withHeader(bedrocktest.ErrorResponse(429, "ThrottlingException", "Too many requests, please wait before trying again."), "Retry-After", "3"),
			engine.ErrorRateLimit, 429, "Throttling error: Too many requests, please wait before trying again.", true, 3 * time.Second},
		{"throttled by tokens", bedrocktest.ErrorResponse(429, "ThrottlingException", "Too many tokens, please wait before trying again."),
			engine.ErrorRateLimit, 429, "Throttling error: Too many tokens, please wait before trying again. (rate limit)", true, 0},
		{"quota", bedrocktest.ErrorResponse(400, "ServiceQuotaExceededException", "You have exceeded your daily token quota"),
			engine.ErrorRateLimit, 400, "ServiceQuotaExceededException: You have exceeded your daily token quota", true, 0},
		{"unavailable", bedrocktest.ErrorResponse(503, "ServiceUnavailableException", "Bedrock is unable to process your request."),
			engine.ErrorOverloaded, 503, "Service unavailable: Bedrock is unable to process your request.", true, 0},
		{"internal", bedrocktest.ErrorResponse(500, "InternalServerException", "The system encountered an unexpected error"),
			engine.ErrorOverloaded, 500, "Internal server error: The system encountered an unexpected error", true, 0},
		{"model timeout", bedrocktest.ErrorResponse(408, "ModelTimeoutException", "Model has timed out in processing the request."),
			engine.ErrorOverloaded, 408, "ModelTimeoutException: Model has timed out in processing the request.", true, 0},
		{"validation", bedrocktest.ErrorResponse(400, "ValidationException", "The model returned the following errors: messages.1: tool_use ids must be unique"),
			engine.ErrorOther, 400, "Validation error: The model returned the following errors: messages.1: tool_use ids must be unique", false, 0},
		{"too long", bedrocktest.ErrorResponse(400, "ValidationException", "Input is too long for requested model."),
			engine.ErrorContextOverflow, 400, "Validation error: Input is too long for requested model.", false, 0},
		{"prompt too long", bedrocktest.ErrorResponse(400, "ValidationException", "The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum"),
			engine.ErrorContextOverflow, 400, "Validation error: The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum", false, 0},
		{"access denied", bedrocktest.ErrorResponse(403, "AccessDeniedException", "You don't have access to the model with the specified model ID."),
			engine.ErrorAuth, 403, "AccessDeniedException: You don't have access to the model with the specified model ID.", false, 0},
		{"not found", bedrocktest.ErrorResponse(404, "ResourceNotFoundException", "Model not found"),
			engine.ErrorOther, 404, "ResourceNotFoundException: Model not found", false, 0},
		{"throttled mid-stream", textThen(bedrocktest.Exception("throttlingException", "Too many requests, please wait before trying again.")),
			engine.ErrorRateLimit, 0, "Throttling error: Too many requests, please wait before trying again.", true, 0},
		{"unavailable mid-stream", textThen(bedrocktest.Exception("serviceUnavailableException", "Service is unavailable")),
			engine.ErrorOverloaded, 0, "Service unavailable: Service is unavailable", true, 0},
		{"model stream error", textThen(bedrocktest.Exception("modelStreamErrorException", "The model stream failed")),
			engine.ErrorOverloaded, 0, "Model stream error: The model stream failed (overloaded)", true, 0},
		{"validation mid-stream", textThen(bedrocktest.Exception("validationException", "bad tool input")),
			engine.ErrorOther, 0, "Validation error: bad tool input", false, 0},
		{"guardrail", textThen(bedrocktest.BlockStop(0), bedrocktest.MessageStop("guardrail_intervened")),
			engine.ErrorOther, 0, "Bedrock stream ended with stopReason: guardrail_intervened", false, 0},
		{"no messageStop", textThen(bedrocktest.BlockStop(0)),
			engine.ErrorTransport, 0, "Connection error: the stream ended before messageStop", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{tc.resp}})
			defer srv.Close()
			_, err := collect(t, newTestProvider(nil), &engine.Request{Model: testModel(srv.URL)})
			var pe *engine.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a ProviderError", err, err)
			}
			if pe.Kind != tc.kind || pe.Status != tc.status || pe.Message != tc.message || pe.Kind.Retryable() != tc.retryable || pe.RetryAfter != tc.after {
				t.Errorf("got kind %s status %d retry-after %v message %q\nwant kind %s status %d retry-after %v message %q",
					pe.Kind, pe.Status, pe.RetryAfter, pe.Message, tc.kind, tc.status, tc.after, tc.message)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests: the SDK retried on its own", len(srv.Requests()))
			}
		})
	}
}

func TestCutStreamIsTransport(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{{Events: []bedrocktest.Event{
		bedrocktest.MessageStart(), bedrocktest.TextDelta(0, "Hel"),
	}, End: bedrocktest.EndCut}}})
	defer srv.Close()
	_, err := collect(t, newTestProvider(nil), &engine.Request{Model: testModel(srv.URL)})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorTransport || !strings.HasPrefix(pe.Message, "Connection error: ") {
		t.Fatalf("error %v, want a transport failure", err)
	}
}

func TestPageIsNotAStream(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{{RawBody: "<html><head><title>Sign in to the proxy</title></head></html>"}}})
	defer srv.Close()
	_, err := collect(t, newTestProvider(nil), &engine.Request{Model: testModel(srv.URL)})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorProtocol || !strings.Contains(pe.Message, "Sign in to the proxy") {
		t.Fatalf("error %v, want a protocol failure quoting the page", err)
	}
}

func TestRefusedConnectionIsTransport(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{})
	url := srv.URL
	srv.Close()
	_, err := collect(t, newTestProvider(nil), &engine.Request{Model: testModel(url)})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorTransport || !engine.LocalRefused(err) {
		t.Fatalf("error %v, want a transport failure that is a refused local connection", err)
	}
}

func TestBearerKeyRedacted(t *testing.T) {
	t.Parallel()
	const key = "bedrock-api-key-secret-987"
	srv := bedrocktest.NewTLS(bedrocktest.Script{Responses: []bedrocktest.Response{
		bedrocktest.ErrorResponse(403, "AccessDeniedException", "Bearer token "+key+" is not valid"),
	}})
	defer srv.Close()
	p := New(Options{HTTPClient: srv.Client(), Getenv: env(map[string]string{"AWS_BEARER_TOKEN_BEDROCK": key}), LoadConfig: staticConfig})
	_, err := collect(t, p, &engine.Request{Model: testModel(srv.URL)})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorAuth {
		t.Fatalf("error %v, want an auth failure", err)
	}
	if strings.Contains(pe.Message, key) || !strings.Contains(pe.Message, "[redacted]") {
		t.Errorf("message %q shows the key", pe.Message)
	}
}

// doFunc is an HTTP client of one function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// closedAfterClose is a request body that fails reads once closed, as the
// body net/http is still reading when the SDK closes its own.
type closedAfterClose struct {
	r      *strings.Reader
	closed bool
}

func (c *closedAfterClose) Read(p []byte) (int, error) {
	if c.closed {
		return 0, errors.New("read after close")
	}
	return c.r.Read(p)
}

func (c *closedAfterClose) Close() error { c.closed = true; return nil }

// The SDK closes a request's body when Do returns, at the stream's
// headers, while net/http may still read it for its end; a failed read
// made the transport close the connection under the stream (1 call in
// several hundred on loopback). The transport gets a body of its own.
func TestRequestBodyOutlivesTheSDKsClose(t *testing.T) {
	t.Parallel()
	orig := &closedAfterClose{r: strings.NewReader(`{"messages":[]}`)}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/model/m/converse-stream", orig)
	if err != nil {
		t.Fatal(err)
	}
	var sent io.Reader
	inner := doFunc(func(r *http.Request) (*http.Response, error) {
		sent = r.Body
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}}, Body: io.NopCloser(strings.NewReader(""))}, nil
	})
	res, err := streamCheck{inner: inner}.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	orig.Close() // what the SDK does when Do returns
	b, err := io.ReadAll(sent)
	if err != nil || string(b) != `{"messages":[]}` {
		t.Errorf("the transport's body read %q, %v after the SDK closed its own", b, err)
	}
}
