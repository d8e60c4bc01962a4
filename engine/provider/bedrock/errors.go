package bedrock

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// ErrStreamEnded is the cause of a stream that closed cleanly before
// messageStop, so the answer may be incomplete.
var ErrStreamEnded = errors.New("bedrock: stream ended before messageStop")

// exceptionPrefixes are the original's words for the service's exceptions
// (a prefix before the service's message), which the original's
// text-based retry rules read ("service unavailable", "server error").
var exceptionPrefixes = map[string]string{
	"InternalServerException":     "Internal server error",
	"ModelStreamErrorException":   "Model stream error",
	"ValidationException":         "Validation error",
	"ThrottlingException":         "Throttling error",
	"ServiceUnavailableException": "Service unavailable",
}

// overflowText matches Bedrock's and its models' wording for a request
// that does not fit the context ("Input is too long for requested model",
// "prompt is too long: 210000 tokens > 200000 maximum", "too many input
// tokens").
var overflowText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)input is too long|prompt is too long|too many (input )?tokens|exceeds? (the )?(model's )?(maximum )?context|context (window|limit|length)`)
})

// retryText is the engine's reading of a failure text (engine/retry.go
// §7.1): a retryable failure whose text it would not recognise gets its
// kind's name appended, so both readings agree.
var retryText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|timed? out|timeout|quota.?exceeded`)
})

// providerError converts what the SDK returned into the engine's typed
// failure. The secrets (a bearer key, credential headers) are scrubbed
// from the message.
func providerError(err error, secrets []string) error {
	if own := (*engine.ProviderError)(nil); errors.As(err, &own) {
		// Made here (provider.NotAStream in the HTTP client), passed
		// through the SDK as is.
		return own
	}
	pe := &engine.ProviderError{Err: err}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		pe.Status = re.HTTPStatusCode()
		if re.Response != nil {
			pe.RetryAfter, pe.RetryAt = provider.ParseRetryAfter(re.Response.Header)
		}
	}
	var api smithy.APIError
	switch {
	case errors.As(err, &api):
		code, msg := api.ErrorCode(), api.ErrorMessage()
		pe.Kind = kindOf(code, pe.Status, msg)
		prefix, ok := exceptionPrefixes[code]
		if !ok {
			prefix = code
		}
		if msg == "" {
			msg = http.StatusText(pe.Status)
		}
		pe.Message = prefix + ": " + msg
	case credentialFailure(err):
		pe.Kind = engine.ErrorAuth
		pe.Message = "No AWS credentials for Amazon Bedrock: " + err.Error() + credentialsHint
	default:
		// The HTTP client's: refused or reset connections, a body cut
		// mid-stream, an event that does not decode.
		pe.Kind = engine.ErrorTransport
		pe.Message = "Connection error: " + err.Error()
	}
	pe.Message = matchRetryable(pe.Kind, provider.Redact(pe.Message, secrets))
	return pe
}

// kindOf classifies a service exception by its code, else its status.
func kindOf(code string, status int, msg string) engine.ErrorKind {
	switch code {
	case "ThrottlingException", "ServiceQuotaExceededException", "TooManyRequestsException":
		return engine.ErrorRateLimit
	case "ServiceUnavailableException", "InternalServerException", "ModelStreamErrorException",
		"ModelTimeoutException", "ModelNotReadyException", "InternalFailure":
		return engine.ErrorOverloaded
	case "AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException",
		"ExpiredTokenException", "MissingAuthenticationTokenException", "IncompleteSignatureException":
		return engine.ErrorAuth
	case "ValidationException":
		if overflowText().MatchString(msg) {
			return engine.ErrorContextOverflow
		}
		return engine.ErrorOther
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return engine.ErrorAuth
	case status == http.StatusTooManyRequests:
		return engine.ErrorRateLimit
	case status >= 500:
		return engine.ErrorOverloaded
	}
	return engine.ErrorOther
}

// credentialsHint says where credentials come from, after a failure to
// find any.
const credentialsHint = ". Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), AWS_PROFILE, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK"

// credentialFailure reports whether the SDK found no credentials to sign
// with (its signer wraps the chain's failure in these words).
func credentialFailure(err error) bool {
	s := err.Error()
	return strings.Contains(s, "failed to retrieve credentials") || strings.Contains(s, "failed to refresh cached credentials")
}

// configError is a failure to load AWS's configuration (a profile that
// does not exist, a malformed config file): nothing was sent, and asking
// again does not help.
func configError(err error, secrets []string) *engine.ProviderError {
	return &engine.ProviderError{
		Kind:    engine.ErrorAuth,
		Message: provider.Redact(fmt.Sprintf("Could not load the AWS configuration for Amazon Bedrock: %v", err), secrets),
		Err:     err,
	}
}

// matchRetryable appends the kind's name to a retryable message the
// original's pattern would not recognise ("Throttling error: Too many
// tokens, please wait"), so its text-based classification and the kind
// agree.
func matchRetryable(kind engine.ErrorKind, msg string) string {
	if !kind.Retryable() || retryText().MatchString(msg) {
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
