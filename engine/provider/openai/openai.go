// Package openai holds the adapters of OpenAI's two APIs, through the
// official Go SDK: Provider speaks "openai-completions", OpenAI's chat
// completions and the many servers that speak it (OpenRouter, vLLM,
// llama.cpp, LM Studio, z.ai, Qwen, ...); Responses speaks the Responses
// API ("openai-responses", "azure-openai-responses" and
// "openai-codex-responses", responses.go). They share the SDK set-up, the
// SSE framing and the mapping of failures (errors.go). What follows
// describes the chat adapter; responses.go describes the other.
//
// It keeps the adapter contract of docs/providers.md: no retries of its own
// (the SDK's are off; the engine retries), failures as *engine.ProviderError
// with a kind read from the status and the provider's error, and blocks that
// never interleave (an provider.StreamWriter emits the events): chat
// completions streams tool-call arguments by index, possibly interleaved,
// so every call but the first one streamed is buffered and emitted whole,
// in index order, once the choice finishes.
//
// The SDK builds and sends the request, reports HTTP errors as *openai.Error
// and frames the SSE stream; the chunks decode into this package's small
// wire types rather than the SDK's ChatCompletionChunk, which costs four
// times as much CPU per delta (wire.go).
//
// A model's quirks come from Model.Compat (agent-core.md §10.3): the system
// prompt's role (supportsDeveloperRole), the max-tokens field
// (maxTokensField), how thinking is requested (thinkingFormat,
// reasoningEffortMap, supportsReasoningEffort), where reasoning text streams
// (reasoningContentField, else reasoning_content, reasoning or
// reasoning_text), usage in the stream (supportsUsageInStreaming), store,
// tool-result names, an assistant turn after tool results, thinking
// replayed as text, OpenRouter's provider routing, and extraBody merged
// into the request.
//
// Usage follows agent-core.md §1.2 with one correction: reasoning tokens are
// added to completion_tokens only when the server did not already count
// them there (OpenAI does: total_tokens = prompt_tokens + completion_tokens).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// DefaultBaseURL is used when a model has no BaseURL.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Provider.
type Options struct {
	// HTTPClient makes the requests; http.DefaultClient when nil.
	HTTPClient *http.Client
	// APIKey returns the key for a model's provider; "" (or a nil func)
	// sends no Authorization header, for local servers.
	APIKey func(m engine.Model) string
}

// Provider streams chat completions. It is safe for concurrent use: a call
// shares nothing with another.
type Provider struct {
	opts Options
}

// New returns a Provider.
func New(o Options) *Provider { return &Provider{opts: o} }

var _ engine.Provider = (*Provider)(nil)

// Stream implements engine.Provider.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	c, err := parseCompat(req.Model.Compat)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: err.Error(), Err: err}
	}
	var key string
	if p.opts.APIKey != nil {
		key = p.opts.APIKey(req.Model)
	}
	red := redactor(provider.Secrets(req.Model, key))

	baseURL := req.Model.BaseURL
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	client := p.opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	// The service is built per call from explicit options only: the SDK's
	// NewClient would read OPENAI_* variables behind the registry's back.
	opts := make([]option.RequestOption, 0, 5+len(req.Model.Headers))
	opts = append(opts,
		option.WithBaseURL(baseURL),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
	)
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	for k, v := range req.Model.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	// The SDK sends the request and hands over the response body; its SSE
	// decoder frames the events, which decode into wireChunk (see wire.go
	// for why not the SDK's chunk type).
	svc := sdk.NewChatCompletionService(opts...)
	params := buildParams(req, &c)
	body, err := send(ctx, red, func(into ...option.RequestOption) error {
		return svc.NewStreaming(ctx, params, into...).Err()
	})
	if err != nil {
		return err
	}
	s := streamState{w: provider.NewStreamWriter(fn), c: &c, active: -1}
	var ch wireChunk // one value for all events: it escapes to the heap
	err = readEvents(ctx, body, red, func(ev ssestream.Event) (bool, error) {
		if bytes.HasPrefix(ev.Data, done) {
			return true, nil
		}
		// Zeroed per event: decoding into a used value would keep fields
		// the new chunk omits.
		ch = wireChunk{}
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			return true, malformed(err, red)
		}
		if ch.Error != nil {
			return true, streamError(ev, red)
		}
		return false, s.chunk(&ch, ev.Data)
	})
	if err != nil {
		return err
	}
	return s.end(red)
}

// send makes a streaming request through do (an SDK streaming call given
// the options that hand over the raw response) and returns the successful
// response, checked to be a stream. The raw response lets a failure whose
// body is not an API error (a proxy's page, an empty 429) still report its
// status and headers.
func send(ctx context.Context, red redactor, do func(into ...option.RequestOption) error) (*http.Response, error) {
	var res, body *http.Response
	// WithResponseBodyInto replaces the SDK's decoding target: on success
	// the body is handed over undecoded.
	if err := do(option.WithResponseInto(&res), option.WithResponseBodyInto(&body)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failure(err, res, red)
	}
	if body == nil || body.Body == nil {
		return nil, transportError(errNoResponse, red)
	}
	// A proxy's page with status 200 is not a stream: say so rather than
	// report a stream that ended early (and retry it).
	if err := provider.NotAStream(body, "an event stream", red); err != nil {
		body.Body.Close()
		return nil, err
	}
	return body, nil
}

// readEvents frames body's server-sent events and calls each with every
// one, until each reports the end or fails, or the body ends. It returns
// nil when the stream ended (the caller tells whether it ended complete),
// ctx's error when ctx was cancelled, else what went wrong.
func readEvents(ctx context.Context, body *http.Response, red redactor, each func(ssestream.Event) (bool, error)) error {
	watch := provider.WatchLines(body)
	dec := ssestream.NewDecoder(body)
	defer dec.Close()
	events := 0
	for dec.Next() {
		events++
		end, err := each(dec.Event())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if end {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := dec.Err(); err != nil {
		if pe := watch.LineTooLong(err, 0, sseLineCap, "event stream", red); pe != nil {
			return pe
		}
		return transportError(err, red)
	}
	if events == 0 && !isEventStream(body.Header) && !watch.Empty() {
		// A body without a single event that is not an event stream (a
		// server that ignored "stream": true): it will not change.
		return provider.NotAStreamBody(body.StatusCode, body.Header.Get("Content-Type"), watch.Head(), "an event stream", red)
	}
	return nil
}

// done is the data of the stream's last event.
var done = []byte("[DONE]")

// sseLineCap is the longest line the SDK's event-stream decoder takes
// (bufio.MaxScanTokenSize << 9), as a message names it.
const sseLineCap = "32 MiB"

// isEventStream reports whether a response says it is an event stream.
func isEventStream(h http.Header) bool {
	media, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return media == "text/event-stream"
}

// failure converts what stopped the stream.
func failure(err error, res *http.Response, red redactor) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var body string
		if apiErr.JSON.Message.Raw() == "" && apiErr.Response != nil && apiErr.Response.Body != nil {
			b, _ := io.ReadAll(apiErr.Response.Body)
			body = string(b)
		}
		return statusError(err, apiErr, apiErr.Response, body, red)
	}
	if res != nil && res.StatusCode >= 400 {
		// The SDK could not read the body as an API error; it put the body
		// back on the response before returning.
		var body string
		if res.Body != nil {
			b, _ := io.ReadAll(res.Body)
			body = string(b)
		}
		return statusError(err, nil, res, body, red)
	}
	return transportError(err, red)
}
