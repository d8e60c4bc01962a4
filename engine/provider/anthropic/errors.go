package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// Sentinel errors, the Err of the ProviderErrors that have no SDK error
// behind them.
var (
	// ErrNoAPIKey: Options.APIKey gave no key and no model header
	// authenticates the request; nothing was sent.
	ErrNoAPIKey = errors.New("anthropic: no API key")
	// ErrStreamEnded: the response stream ended cleanly but before
	// message_stop, so the answer may be incomplete.
	ErrStreamEnded = errors.New("anthropic: stream ended before message_stop")
)

// overflowText matches the API's wording for a request that does not fit
// the model's context ("prompt is too long: 210000 tokens > 200000
// maximum", "input length and max_tokens exceed context limit").
var overflowText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)prompt is too long|exceeds? (the )?context|context (window|limit|length)|too many (input )?tokens`)
})

// providerError converts what the SDK returned into the engine's typed
// failure. The secrets (the key, credential headers) are scrubbed from the
// message in case a gateway echoes them in its error body.
func providerError(err error, secrets []string) error {
	if own := (*engine.ProviderError)(nil); errors.As(err, &own) {
		// Made here (provider.NotAStream in the body check), passed through
		// the SDK as is.
		return own
	}
	pe := &engine.ProviderError{Err: err}
	var apiErr *sdk.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &apiErr):
		classifyAPIError(pe, apiErr)
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		// The connection was fine but an event was not JSON: a broken
		// gateway or API, which trying again does not fix.
		pe.Kind = engine.ErrorOther
		pe.Message = fmt.Sprintf("Malformed stream event: %v", err)
	default:
		// Everything else the SDK passes through is the HTTP client's:
		// refused or reset connections, a body cut mid-stream.
		pe.Kind = engine.ErrorTransport
		pe.Message = fmt.Sprintf("Connection error: %v", err)
	}
	pe.Message = provider.Redact(pe.Message, secrets)
	return pe
}

// classifyAPIError fills pe from an API error: an HTTP error status, or an
// error event inside a 200 stream (the SDK reports both as *sdk.Error, the
// latter with the stream's status 200).
func classifyAPIError(pe *engine.ProviderError, e *sdk.Error) {
	body := strings.TrimSpace(e.RawJSON())
	typ := string(e.Type())
	inStream := e.StatusCode < 400
	if inStream {
		// No status of its own: the body is the whole story, and it names
		// the error type (overloaded_error, ...) that §7.1 matches on.
		pe.Message = body
		if pe.Message == "" {
			pe.Message = e.Message
		}
	} else {
		pe.Status = e.StatusCode
		if body == "" {
			body = http.StatusText(e.StatusCode)
		}
		pe.Message = strings.TrimSpace(fmt.Sprintf("%d %s", e.StatusCode, body))
	}
	switch {
	case pe.Status == 401 || pe.Status == 403 || typ == "authentication_error" || typ == "permission_error":
		pe.Kind = engine.ErrorAuth
	case pe.Status == 429 || typ == "rate_limit_error":
		pe.Kind = engine.ErrorRateLimit
	case pe.Status == 413 || typ == "request_too_large" || overflowText().MatchString(e.Message):
		pe.Kind = engine.ErrorContextOverflow
	case pe.Status >= 500 || typ == "overloaded_error" || typ == "api_error":
		pe.Kind = engine.ErrorOverloaded
	default:
		pe.Kind = engine.ErrorOther
	}
	if e.Response != nil {
		// The anthropic-ratelimit-*-reset timestamps are not read: the API
		// sends retry-after with every 429.
		pe.RetryAfter, pe.RetryAt = provider.ParseRetryAfter(e.Response.Header)
	}
}
