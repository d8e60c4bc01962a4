package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// retryablePattern is the transport pattern of agent-core.md §7.1. The
// original decides retries from the message text alone; a message of a
// retryable kind is made to match it, so both readings agree.
var retryablePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|timed? out|timeout|terminated|retry delay|stream stall|usage.?limit|usage_limit_reached|usage_not_included|limit_reached|quota.?exceeded|resource.?exhausted`)
})

// overflowPattern recognises a request that does not fit the context window
// across OpenAI-compatible servers' wordings.
var overflowPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)context_length_exceeded|maximum context length|context length|context window|prompt is too long|too many tokens|reduce the length`)
})

// maxBodyInMessage bounds a non-JSON error body quoted in a message.
const maxBodyInMessage = 500

// redactor removes secrets (the key, header values) from text that reaches
// the host. Provider error messages may echo a key ("Incorrect API key
// provided: sk-...").
type redactor []string

func (r redactor) clean(s string) string { return provider.Redact(s, r) }

// statusError converts a failed HTTP exchange. apiErr is nil when the SDK
// could not parse the body as an API error (a proxy's HTML page, an empty
// body); res then carries the status and the body.
func statusError(err error, apiErr *sdk.Error, res *http.Response, body string, red redactor) *engine.ProviderError {
	status := res.StatusCode
	var msg, code string
	if apiErr != nil {
		msg, code = apiErr.Message, apiErr.Code
	}
	if msg == "" {
		msg = bodyMessage(body)
	}
	if msg == "" {
		msg = strings.TrimSpace(body)
		if len(msg) > maxBodyInMessage {
			msg = msg[:maxBodyInMessage] + "..."
		}
	}
	if msg == "" {
		msg = "status code (no body)"
	}
	pe := &engine.ProviderError{
		Kind:    kindOf(status, code, msg),
		Status:  status,
		Message: red.clean(strconv.Itoa(status) + " " + msg),
		Err:     err,
	}
	pe.RetryAfter, pe.RetryAt = retryAfter(res.Header, status == http.StatusTooManyRequests)
	pe.Message = matchRetryable(pe.Kind, pe.Message)
	return pe
}

func kindOf(status int, code, msg string) engine.ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return engine.ErrorAuth
	case status == http.StatusTooManyRequests:
		return engine.ErrorRateLimit
	case code == "context_length_exceeded" || overflowPattern().MatchString(msg):
		return engine.ErrorContextOverflow
	case status >= 500:
		return engine.ErrorOverloaded
	}
	return engine.ErrorOther
}

// streamError converts an error event inside a 200 stream
// ({"error":{...}}), which has no status: its kind comes from its code,
// type and wording.
func streamError(ev ssestream.Event, red redactor) *engine.ProviderError {
	var e sdk.Error
	var msg, code, typ string
	if inner := errorObject(ev.Data); inner != nil && e.UnmarshalJSON(inner) == nil {
		msg, code, typ = e.Message, e.Code, e.Type
	}
	if msg == "" {
		msg = bodyMessage(string(ev.Data))
	}
	if msg == "" {
		msg = "error event: " + strings.TrimSpace(string(ev.Data))
	}
	kind := eventKind(code, typ, msg)
	msg = matchRetryable(kind, red.clean(msg))
	// Err is the SDK's type for an error event, as its own stream reports
	// it, with the cleaned text (Event keeps the raw data).
	return &engine.ProviderError{Kind: kind, Message: msg, Err: &ssestream.StreamError{Message: msg, Event: ev}}
}

// eventKind classifies an error that came without a status (an error
// event inside a 200 stream, a failed response) by its code, type and
// wording.
func eventKind(code, typ, msg string) engine.ErrorKind {
	switch {
	case code == "context_length_exceeded" || overflowPattern().MatchString(msg):
		return engine.ErrorContextOverflow
	case strings.Contains(code, "rate_limit") || strings.Contains(typ, "rate_limit") || code == "insufficient_quota":
		return engine.ErrorRateLimit
	case typ == "server_error" || code == "server_error" || strings.Contains(strings.ToLower(msg), "overloaded"):
		return engine.ErrorOverloaded
	}
	return engine.ErrorOther
}

// errorObject returns the raw "error" member of an error event, or nil.
func errorObject(data []byte) []byte {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &env) != nil || len(env.Error) == 0 || env.Error[0] != '{' {
		return nil
	}
	return env.Error
}

// transportError is a network failure or a stream cut short.
func transportError(err error, red redactor) *engine.ProviderError {
	return &engine.ProviderError{
		Kind:    engine.ErrorTransport,
		Message: matchRetryable(engine.ErrorTransport, red.clean("Connection error: "+err.Error())),
		Err:     err,
	}
}

// errNoFinish is the cause of a stream that ended without a finish_reason.
var errNoFinish = errors.New("stream ended before finish_reason")

// errNoResponse is the cause of a request the SDK reported neither as
// failed nor with a response.
var errNoResponse = errors.New("no response")

// matchRetryable appends the kind's name to a retryable message that the
// §7.1 pattern would not recognise (e.g. "529 busy"), so that the original's
// text-based classification and this kind agree.
func matchRetryable(kind engine.ErrorKind, msg string) string {
	if !kind.Retryable() || retryablePattern().MatchString(msg) {
		return msg
	}
	switch kind {
	case engine.ErrorRateLimit:
		return msg + " (rate limit)"
	case engine.ErrorOverloaded:
		return msg + " (overloaded)"
	}
	return msg + " (network error)"
}

// retryAfter reads the wait a server asks for: provider.ParseRetryAfter's
// (retry-after-ms, OpenAI's precise one, else retry-after in seconds or as
// an HTTP date), else, for a rate limit, the later of OpenAI's
// x-ratelimit-reset-requests and -tokens (Go-style durations such as
// "6m0s"): which limit was hit is not said, and waiting too little only
// earns another 429.
func retryAfter(h http.Header, rateLimited bool) (time.Duration, time.Time) {
	if d, at := provider.ParseRetryAfter(h); d > 0 || !at.IsZero() || !rateLimited {
		return d, at
	}
	var d time.Duration
	for _, k := range [...]string{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens"} {
		if r, err := time.ParseDuration(h.Get(k)); err == nil && r > d {
			d = r
		}
	}
	return d, time.Time{}
}

func finishError(reason string) *engine.ProviderError {
	return &engine.ProviderError{Kind: engine.ErrorOther, Message: fmt.Sprintf("Provider finish_reason: %s", reason)}
}

// malformed is a chunk that is not valid JSON: a server or proxy fault,
// not known to be transient.
func malformed(err error, red redactor) *engine.ProviderError {
	return &engine.ProviderError{Kind: engine.ErrorOther, Message: red.clean("Malformed chunk in the provider's stream: " + err.Error()), Err: err}
}

// bodyMessage reads the message of an error body that is not OpenAI's
// shape: {"error":"..."} (Ollama, many proxies), {"message":"..."} or
// {"detail":"..."} (FastAPI servers such as vLLM).
func bodyMessage(body string) string {
	var b struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	if json.Unmarshal([]byte(body), &b) != nil {
		return ""
	}
	if e, ok := b.Error.(string); ok && e != "" {
		return e
	}
	if b.Message != "" {
		return b.Message
	}
	if d, ok := b.Detail.(string); ok {
		return d
	}
	return ""
}

// responseEventError converts a Responses "error" event
// ({"type":"error","code":...,"message":...}), or one that nests its error
// object as chat completions does.
func responseEventError(ev *respEvent, data []byte, red redactor) *engine.ProviderError {
	msg, code, typ := ev.Message, string(ev.Code), ""
	if msg == "" {
		var e sdk.Error
		if inner := errorObject(data); inner != nil && e.UnmarshalJSON(inner) == nil {
			msg, code, typ = e.Message, e.Code, e.Type
		}
	}
	if msg == "" {
		msg = "error event: " + strings.TrimSpace(string(data))
	}
	kind := eventKind(code, typ, msg)
	msg = matchRetryable(kind, red.clean(msg))
	return &engine.ProviderError{Kind: kind, Message: msg, Err: &ssestream.StreamError{Message: msg, Event: ssestream.Event{Type: "error", Data: data}}}
}

// responseFailed converts a response that ended failed or cancelled, in
// the original's words: "<code>: <message>".
func responseFailed(r *respResponse, red redactor) *engine.ProviderError {
	var msg, code string
	switch {
	case r.Error != nil:
		code = string(r.Error.Code)
		c, m := code, r.Error.Message
		if c == "" {
			c = "unknown"
		}
		if m == "" {
			m = "no message"
		}
		msg = c + ": " + m
	case r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "":
		msg = "incomplete: " + r.IncompleteDetails.Reason
	default:
		msg = "Unknown error (no error details in response; status " + strconv.Quote(r.Status) + ")"
	}
	kind := eventKind(code, "", msg)
	return &engine.ProviderError{Kind: kind, Message: matchRetryable(kind, red.clean(msg))}
}
