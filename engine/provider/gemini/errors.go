package gemini

import (
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// ErrNoKey is the cause of a call made without an API key.
var ErrNoKey = errors.New("no API key")

// errNoFinish is the cause of a stream that ended before a chunk with a
// finishReason.
var errNoFinish = errors.New("stream ended before finishReason")

// overflowPattern recognises a request that does not fit the model's
// context ("The input token count (1200000) exceeds the maximum number of
// tokens allowed (1048576).").
var overflowPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)input token count.*exceeds|exceeds the maximum number of tokens|context.?length|context.?window|too many tokens|prompt is too long`)
})

// maxBodyInMessage bounds a non-JSON error body quoted in a message.
const maxBodyInMessage = 500

// failure converts what stopped a call: a ProviderError the transport
// made (a page instead of a stream), Google's error (an HTTP failure, or
// an error inside the stream), else a network failure.
func failure(err error, rec *recorder, red []string) error {
	var pe *engine.ProviderError
	if errors.As(err, &pe) {
		return pe
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		return apiError(ae, rec, red)
	}
	return transportError(err, red)
}

// apiError converts Google's error ({"error": {"code", "message",
// "status", "details"}}) with the response's status and headers: its kind
// from the status code, the status name and the details; its wait from
// Retry-After, else from the RetryInfo detail Google sends with a 429.
func apiError(ae genai.APIError, rec *recorder, red []string) *engine.ProviderError {
	code := ae.Code
	if code == 0 && rec != nil {
		code = rec.status
	}
	msg := strings.TrimSpace(ae.Message)
	if len(msg) > maxBodyInMessage {
		msg = msg[:maxBodyInMessage] + "..."
	}
	status := ae.Status
	var text string
	switch {
	case status == "":
		text = strconv.Itoa(code)
	case strings.HasPrefix(status, strconv.Itoa(code)):
		// A body that was not Google's error: the SDK gives the HTTP
		// status line ("502 Bad Gateway") as its status.
		text = status
	default:
		text = strconv.Itoa(code) + " " + status
	}
	if msg != "" {
		text += ": " + msg
	}
	pe := &engine.ProviderError{Kind: kindOf(code, status, msg, ae.Details), Status: code, Message: provider.Redact(text, red), Err: ae}
	if rec != nil && rec.header != nil && code >= 400 {
		pe.RetryAfter, pe.RetryAt = provider.ParseRetryAfter(rec.header)
	}
	if pe.RetryAfter == 0 && pe.RetryAt.IsZero() {
		pe.RetryAfter = retryDelay(ae.Details)
	}
	return pe
}

func kindOf(code int, status, msg string, details []map[string]any) engine.ErrorKind {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden || status == "UNAUTHENTICATED" || status == "PERMISSION_DENIED":
		return engine.ErrorAuth
	case detailReason(details) == "API_KEY_INVALID" || strings.Contains(msg, "API key not valid"):
		// Google answers a bad key with 400 INVALID_ARGUMENT.
		return engine.ErrorAuth
	case code == http.StatusTooManyRequests || status == "RESOURCE_EXHAUSTED":
		return engine.ErrorRateLimit
	case overflowPattern().MatchString(msg):
		return engine.ErrorContextOverflow
	case code >= 500 || status == "UNAVAILABLE" || status == "INTERNAL" || status == "DEADLINE_EXCEEDED":
		return engine.ErrorOverloaded
	}
	return engine.ErrorOther
}

// detailReason is the reason of an error's ErrorInfo detail.
func detailReason(details []map[string]any) string {
	for _, d := range details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			r, _ := d["reason"].(string)
			return r
		}
	}
	return ""
}

// retryDelay is the wait of an error's RetryInfo detail ("27s",
// "27.381s"), 0 when it has none.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.RetryInfo") {
			s, _ := d["retryDelay"].(string)
			if v, err := time.ParseDuration(s); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

// transportError is a network failure or a stream cut short.
func transportError(err error, red []string) *engine.ProviderError {
	return &engine.ProviderError{Kind: engine.ErrorTransport, Message: provider.Redact("Connection error: "+err.Error(), red), Err: err}
}

// finishError is a response that ended for another reason than its end or
// its length: SAFETY, RECITATION, MALFORMED_FUNCTION_CALL...
func finishError(reason genai.FinishReason, message string, red []string) *engine.ProviderError {
	text := "Provider finish_reason: " + string(reason)
	if message != "" {
		text += ": " + message
	}
	return &engine.ProviderError{Kind: engine.ErrorOther, Message: provider.Redact(text, red)}
}

// blockedError is a prompt the API refused to answer (promptFeedback).
func blockedError(f *genai.GenerateContentResponsePromptFeedback) *engine.ProviderError {
	text := "Prompt blocked: " + string(f.BlockReason)
	if f.BlockReasonMessage != "" {
		text += ": " + f.BlockReasonMessage
	}
	return &engine.ProviderError{Kind: engine.ErrorOther, Message: text}
}
