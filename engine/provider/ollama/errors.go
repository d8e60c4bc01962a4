package ollama

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
)

// ErrIncomplete is the cause (reachable with errors.Is through the
// ProviderError) of a stream that ended without Ollama's done line: the
// connection was cut, or the server closed it early. The api client does
// not report the read error itself, so this is all that is known.
var ErrIncomplete = errors.New("ollama: stream ended before done")

// overflow matches Ollama's and its runners' wording for a prompt that
// does not fit ("the input length exceeds the context length", "input
// exceeds maximum context length and cannot be truncated further").
var overflow = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)exceeds (the |maximum )?context length`) })

// classify turns an error of the api client into an *engine.ProviderError.
// host names the server in transport messages; model names the model in
// the not-found message ("" for requests about no model, where a 404 means
// the host is not an Ollama).
func classify(err error, host, model string) *engine.ProviderError {
	if own := (*engine.ProviderError)(nil); errors.As(err, &own) {
		// Made by the call's transport (provider.NotAStream), passed
		// through the client inside a url.Error.
		return own
	}
	pe := &engine.ProviderError{Kind: engine.ErrorOther, Err: err}
	var se api.StatusError
	var ae api.AuthorizationError
	var nerr net.Error
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.As(err, &typ):
		// A JSON line whose fields do not have Ollama's types: the stream is
		// corrupt (a proxy, a truncated write), not the model's fault.
		pe.Kind = engine.ErrorTransport
		pe.Message = "ollama: malformed stream line"
		if typ != nil {
			// json's own text names the api's internal types; say which field.
			pe.Message += fmt.Sprintf(": %q is a JSON %s", typ.Field, typ.Value)
		} else {
			pe.Message += ": " + syn.Error()
		}
	case errors.As(err, &ae):
		// Only a server that requires signing (ollama.com, or OLLAMA_AUTH)
		// answers 401.
		pe.Kind, pe.Status = engine.ErrorAuth, ae.StatusCode
		pe.Message = fmt.Sprintf("ollama: %s (sign in with: ollama signin)", ae.Error())
	case errors.As(err, &se):
		pe.Status = se.StatusCode
		pe.Message = statusMessage(se)
		switch {
		case se.StatusCode == http.StatusNotFound && model != "":
			pe.Message = fmt.Sprintf("model %q not found; run: ollama pull %s", model, model)
		case se.StatusCode == http.StatusTooManyRequests:
			pe.Kind = engine.ErrorRateLimit
		case se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden:
			pe.Kind = engine.ErrorAuth
		case overflow().MatchString(se.ErrorMessage):
			pe.Kind = engine.ErrorContextOverflow
		case se.StatusCode >= 500:
			pe.Kind = engine.ErrorOverloaded
		}
	case engine.LocalRefused(err):
		// Ollama on this machine is not running: said at once, not
		// retried (engine.ErrorNoServer).
		pe.Kind = engine.ErrorNoServer
		pe.Message = fmt.Sprintf("could not reach Ollama at %s: connection refused, nothing listens there. Start Ollama (\"ollama serve\", or the Ollama app), or set OLLAMA_HOST to the address it listens on", host)
	case isDial(err):
		pe.Kind = engine.ErrorTransport
		pe.Message = fmt.Sprintf("could not reach Ollama at %s: is \"ollama serve\" running?", host)
	case errors.As(err, &nerr), errors.Is(err, net.ErrClosed):
		pe.Kind = engine.ErrorTransport
		pe.Message = fmt.Sprintf("ollama: network error talking to %s: %v", host, err)
	default:
		// An {"error":"..."} line after the stream started with status 200
		// (the runner failed mid-answer). The api client returns it as a
		// plain error holding Ollama's message; it returns a line that is
		// not JSON at all the same way (holding the line), so the two cannot
		// be told apart here and both keep the text as is.
		pe.Message = "ollama: " + err.Error()
		if overflow().MatchString(pe.Message) {
			pe.Kind = engine.ErrorContextOverflow
		}
	}
	return pe
}

// statusMessage keeps Ollama's own wording ("server busy, please try
// again.  maximum pending requests exceeded", or a proxy's whole body)
// after the status code, which a host's retry rules also recognise.
func statusMessage(se api.StatusError) string {
	msg := strings.TrimSpace(se.ErrorMessage)
	if msg == "" {
		return se.Error()
	}
	return fmt.Sprintf("%d %s", se.StatusCode, msg)
}

// isDial reports whether err is a failure to open the connection
// (refused, no route, unknown host): the server is not there at all.
func isDial(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}
