// Package bedrock is the engine.Provider of the bedrock-converse-stream
// API, Amazon Bedrock's ConverseStream, through the official AWS SDK for Go
// v2 (service/bedrockruntime).
//
// One Stream call is one POST /model/{modelId}/converse-stream. The
// engine's request is converted at this boundary (docs/providers.md,
// "Writing an adapter: the contract"): the system prompt becomes system
// blocks, user and developer messages become user turns (text and image
// blocks), assistant messages are replayed with their reasoning (text and
// signature, or redacted content) and toolUse blocks, and consecutive
// tool results are merged into one user turn of toolResult blocks, which
// Bedrock requires. Assistant turns that ended in an error or were
// aborted are left out with their tool results. The binary event stream
// comes back as engine stream events through a provider.StreamWriter, in
// the order it arrives: Bedrock sends one content block after another, so
// nothing is buffered.
//
// # Request choices
//
//   - inferenceConfig.maxTokens is min(model.MaxTokens, 32000), or 32000
//     when it is unknown, as the original sends; thinking raises it by the
//     budget (below).
//   - Thinking, for Claude on Bedrock only (a model id that holds
//     "anthropic.claude"; other models take no reasoning parameter here,
//     as in the original): a model whose thinking mode is
//     "anthropic-adaptive" (Claude ≥ 4.6) gets
//     additionalModelRequestFields {thinking: {type: adaptive}, output_config:
//     {effort}}; any other reasoning Claude gets {thinking: {type: enabled,
//     budget_tokens}} with the original's Bedrock budgets (minimal 1024,
//     low 2048, medium 8192, high and xhigh 16384), max_tokens raised by
//     the budget up to the model's limit, and the interleaved-thinking
//     beta in anthropic_beta.
//   - Prompt caching, for the Claude models Bedrock caches (4.x, 3.7
//     Sonnet, 3.5 Haiku): a cachePoint after the system prompt and at the
//     end of the last user turn.
//   - Tools go in toolConfig.tools as toolSpec with their JSON schema.
//
// # Credentials, region and endpoint
//
// AWS's configuration is loaded on the first call of a Bedrock model, not
// when the agent starts (config.LoadDefaultConfig reads files and the
// environment): the standard chain (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, AWS_PROFILE and the shared
// files, web identity, container and instance roles) signs every request
// with SigV4. A Bedrock API key in AWS_BEARER_TOKEN_BEDROCK (or the
// provider's apiKey in models.json) is sent as Authorization: Bearer
// instead, as the original does. The region is AWS_REGION (or
// AWS_DEFAULT_REGION), else the region of a standard
// bedrock-runtime.<region>.amazonaws.com baseUrl, else the profile's, else
// us-east-1. Any other baseUrl is the endpoint the requests go to (a VPC
// endpoint, a proxy, a test server); a standard one is used as is when it
// is in the chosen region.
//
// # Failures
//
// Every backend failure is an *engine.ProviderError whose Err is the SDK's
// error. Message keeps the original's wording, a prefix by exception and
// the service's message ("Throttling error: Too many requests, please
// wait before trying again."). Throttling and quota errors are rate
// limits, service unavailable, internal server, model stream, timeout and
// not-ready errors are overloads (all retried by the engine), access
// denied and credential failures are auth errors, and a validation error
// is a context overflow when it says the input is too long, else not
// retried. The SDK's own retries are off: retry belongs to the engine.
//
// xcsh runs this adapter in its helper process, cmd/xcsh-bedrock, through
// engine/provider/subproc (StreamKey takes the key the agent sends with
// each call), so that the SDK's package inits are not paid at every start
// of xcsh.
//
// The bedrocktest package is a scripted test server in the service's own
// wire format (the event stream's binary framing).
package bedrock

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// Options configures a Provider.
type Options struct {
	// HTTPClient carries every request; nil means the SDK's default
	// client.
	HTTPClient *http.Client
	// APIKey returns the key configured for a model's provider (its
	// models.json apiKey); a non-empty key is a Bedrock API key, sent as a
	// bearer token. nil or "" means AWS_BEARER_TOKEN_BEDROCK, else SigV4.
	APIKey func(m engine.Model) string
	// Getenv reads the environment (AWS_REGION, AWS_PROFILE,
	// AWS_BEARER_TOKEN_BEDROCK); nil means os.Getenv.
	Getenv func(string) string
	// LoadConfig loads AWS's configuration (credentials, the profile's
	// region) the first time a Bedrock model is called; nil means the
	// SDK's config.LoadDefaultConfig. Tests give static credentials.
	LoadConfig func(ctx context.Context) (aws.Config, error)
}

// Provider streams bedrock-converse-stream calls. It is safe for
// concurrent use: a call shares nothing with another but the AWS
// configuration, loaded once.
type Provider struct {
	opts Options

	mu   sync.Mutex          // guards cfg and http
	cfg  *aws.Config         // loaded on the first call that needs it; nil until then
	http smithyhttp.ClientDo // the default HTTP client, made on first use
}

// New returns a Provider. It loads nothing: AWS's configuration is read
// when a Bedrock model is first called, so the agent's start does not pay
// for it.
func New(o Options) *Provider {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.LoadConfig == nil {
		o.LoadConfig = loadDefaultConfig
	}
	return &Provider{opts: o}
}

var _ engine.Provider = (*Provider)(nil)

// Stream implements engine.Provider.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	var key string
	if p.opts.APIKey != nil {
		key = p.opts.APIKey(req.Model)
	}
	return p.StreamKey(ctx, req, key, fn)
}

// StreamKey is Stream with the model's configured key given (the helper
// process gets it with each call from the agent's registry); "" means
// AWS_BEARER_TOKEN_BEDROCK, else SigV4.
func (p *Provider) StreamKey(ctx context.Context, req *engine.Request, key string, fn func(engine.StreamEvent) error) error {
	if key == "" {
		key = p.opts.Getenv("AWS_BEARER_TOKEN_BEDROCK")
	}
	secrets := provider.Secrets(req.Model, key)
	client, region, err := p.client(ctx, req.Model, key, secrets)
	if err != nil {
		return err
	}
	out, err := client.ConverseStream(ctx, buildInput(req, region))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("bedrock: %w", ctx.Err())
		}
		return providerError(err, secrets)
	}
	es := out.GetStream()
	defer es.Close()

	s := streamer{w: provider.NewStreamWriter(fn)}
	events := es.Events()
	for {
		var ev types.ConverseStreamOutput
		var ok bool
		select {
		case <-ctx.Done():
			return fmt.Errorf("bedrock: %w", ctx.Err())
		case ev, ok = <-events:
		}
		if !ok {
			break
		}
		// An event already decoded when the call was cancelled is not
		// delivered: the engine has given up on this call.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bedrock: %w", err)
		}
		if err := s.handle(ev); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bedrock: %w", err)
	}
	if err := es.Err(); err != nil {
		return providerError(err, secrets)
	}
	return s.finish()
}
