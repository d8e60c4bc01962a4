// Package anthropic is the engine.Provider of the anthropic-messages API,
// Claude's Messages API, through the official Go SDK.
//
// One Stream call is one POST /v1/messages with stream:true. The engine's
// request is converted at this boundary (docs/providers.md, "Writing an
// adapter: the contract"): the system prompt becomes system, user and
// developer messages become user turns (text and base64 images), assistant
// messages are replayed with their thinking signatures, redacted thinking
// and tool_use blocks, and consecutive tool results are merged into one
// user turn of tool_result blocks. Assistant turns that ended in an error
// or were aborted are left out with their tool results, since their blocks
// may be partial. The SSE events come back as engine
// stream events in the order they arrive, through an provider.StreamWriter:
// blocks never interleave on this API, so nothing is buffered.
//
// # Request choices
//
//   - max_tokens is min(model.MaxTokens, 32000), or 32000 when MaxTokens is
//     unknown (0), as the original sends.
//   - Thinking (agent-core.md §9.4): no parameter for an empty or "off"
//     level or a model without reasoning. A model whose thinking mode is
//     "anthropic-adaptive" (Claude ≥ 4.6) gets thinking {type: adaptive} and
//     output_config.effort (minimal and low → low, medium, high, xhigh →
//     max). Any other reasoning model gets thinking {type: enabled} with the
//     thinkingBudgets settings' defaults (minimal 1024, low 2048, medium
//     8192, high 16384, xhigh 32768), max_tokens raised by the budget up to
//     model.MaxTokens, the budget lowered to leave 1024 answer tokens when
//     both do not fit (no thinking when under the API's minimum of 1024),
//     and the interleaved-thinking beta header. The original makes this
//     max_tokens adjustment only with interleaved thinking off; making it
//     always keeps budget_tokens < max_tokens valid even where the beta
//     header is not honoured.
//   - The system prompt and the last block of the last user turn carry
//     cache_control ephemeral, so a conversation reads its prefix from the
//     prompt cache.
//
// # Credentials and headers
//
// The key comes from Options.APIKey per call and is sent as x-api-key; an
// OAuth token (sk-ant-oat...) goes as Authorization: Bearer with the oauth
// beta instead. Model.Headers are added last, so a configured provider can
// override any of them. The SDK's environment defaults (ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL, profiles) are never read, and its retries are off:
// retry belongs to the engine.
//
// # Failures
//
// Every backend failure is an *engine.ProviderError whose Err is the SDK's
// error (or ErrNoAPIKey, ErrStreamEnded). Message keeps the API's wording
// as the original shows it: the status and the API's error body
// (`429 {"type":"error","error":{...}}`) for an HTTP error, the error
// event's body for an error inside the stream, "Connection error: ..." for
// network failures and a stream that ends before message_stop, "Malformed
// stream event: ..." for an event that is not JSON, "Provider
// stop_reason: <reason>" for a refusal or a stop reason the wire has no
// name for, and provider.NotAStream's and LineWatch's texts (never retried)
// for a 200 that is a page or holds a line over the decoder's cap. The key and credential headers are scrubbed from
// every message.
//
// The anthropictest package is a scriptable test server for this API.
package anthropic

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// DefaultBaseURL is used when Model.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com"

// betaOAuth is required by the API for requests authenticated with an
// OAuth access token instead of an API key.
const betaOAuth = "oauth-2025-04-20"

// oauthPrefix starts the access tokens of Claude subscriptions.
const oauthPrefix = "sk-ant-oat"

// Options configures a Provider.
type Options struct {
	// HTTPClient carries every request; nil means http.DefaultClient.
	HTTPClient *http.Client
	// APIKey returns the key for a model's provider; nil or "" means no
	// key, which fails the call unless Model.Headers authenticate it.
	APIKey func(m engine.Model) string
}

// Provider streams anthropic-messages calls. It holds no per-call state, so
// one Provider serves concurrent calls.
type Provider struct {
	client sdk.Client
	apiKey func(engine.Model) string
}

// New returns a Provider.
func New(o Options) *Provider {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &Provider{client: sdk.NewClient(opts...), apiKey: o.APIKey}
}

var _ engine.Provider = (*Provider)(nil)

// Stream implements engine.Provider.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	var key string
	if p.apiKey != nil {
		key = p.apiKey(req.Model)
	}
	if key == "" && !hasAuthHeader(req.Model.Headers) {
		return &engine.ProviderError{
			Kind:    engine.ErrorAuth,
			Message: fmt.Sprintf("No API key for provider: %s", req.Model.Provider),
			Err:     ErrNoAPIKey,
		}
	}
	params, plan := buildParams(req)
	secrets := provider.Secrets(req.Model, key)
	var body bodyCheck
	opts := append(requestOptions(req.Model, key, plan), option.WithMiddleware(body.middleware(secrets)))
	stream := p.client.Messages.NewStreaming(ctx, params, opts...)
	defer stream.Close()

	s := streamer{w: provider.NewStreamWriter(fn)}
	events := 0
	for stream.Next() {
		events++
		// Events already buffered keep decoding after a cancel; the
		// engine has given up on this call, so they are not delivered.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("anthropic: %w", err)
		}
		done, err := s.handle(stream.Current())
		if err != nil {
			return err
		}
		if done {
			return s.finish()
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	if err := stream.Err(); err != nil {
		if body.watch != nil {
			if pe := body.watch.LineTooLong(err, 0, sseLineCap, "event stream", secrets); pe != nil {
				return pe
			}
		}
		return providerError(err, secrets)
	}
	if events == 0 && body.watch != nil && !body.watch.Empty() && !isEventStream(body.header) {
		// Not one event, and not an event stream: a server or proxy that
		// answered with something else; it will not change.
		return provider.NotAStreamBody(http.StatusOK, body.header.Get("Content-Type"), body.watch.Head(), "an event stream", secrets)
	}
	return &engine.ProviderError{
		Kind:    engine.ErrorTransport,
		Message: "Connection error: the stream ended before message_stop",
		Err:     ErrStreamEnded,
	}
}

// requestOptions sets what varies per model: the base URL, the credential
// and the headers. The beta header is one comma-separated value, so the
// adapter's betas and any configured ones are joined rather than one
// replacing the other.
func requestOptions(m engine.Model, key string, plan thinkingPlan) []option.RequestOption {
	base := m.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	opts := []option.RequestOption{option.WithBaseURL(base)}
	var betas []string
	switch {
	case key == "":
	case strings.HasPrefix(key, oauthPrefix):
		opts = append(opts, option.WithHeader("Authorization", "Bearer "+key))
		betas = append(betas, betaOAuth)
	default:
		opts = append(opts, option.WithHeader("X-Api-Key", key))
	}
	if plan.interleaved {
		betas = append(betas, betaInterleavedThinking)
	}
	names := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		names = append(names, k)
	}
	sort.Strings(names) // a stable header order for a given model
	for _, k := range names {
		if strings.EqualFold(k, "anthropic-beta") {
			betas = append(betas, m.Headers[k])
			continue
		}
		opts = append(opts, option.WithHeader(k, m.Headers[k]))
	}
	if len(betas) > 0 {
		opts = append(opts, option.WithHeader("Anthropic-Beta", strings.Join(betas, ",")))
	}
	return opts
}

func hasAuthHeader(h map[string]string) bool {
	for k, v := range h {
		if v != "" && (strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "authorization")) {
			return true
		}
	}
	return false
}

// sseLineCap is the longest line the SDK's event-stream decoder takes
// (bufio.MaxScanTokenSize << 9), as a message names it.
const sseLineCap = "32 MiB"

// bodyCheck looks at the response of one streaming call before the SDK
// decodes it (a middleware, on the calling goroutine): a proxy's page with
// status 200 fails the call at once (provider.NotAStream), and a stream's
// body is watched so that a line over the decoder's cap can be named.
type bodyCheck struct {
	watch  *provider.LineWatch
	header http.Header
}

func (b *bodyCheck) middleware(secrets []string) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err != nil || res.StatusCode < 200 || res.StatusCode > 299 {
			return res, err
		}
		if err := provider.NotAStream(res, "an event stream", secrets); err != nil {
			res.Body.Close()
			return nil, err
		}
		b.header = res.Header
		b.watch = provider.WatchLines(res)
		return res, nil
	}
}

// isEventStream reports whether a response says it is an event stream.
func isEventStream(h http.Header) bool {
	media, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return media == "text/event-stream"
}
