package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// Responses streams OpenAI's Responses API: the "openai-responses",
// "azure-openai-responses" and "openai-codex-responses" APIs, which share
// one wire and differ in where the request goes and how it is
// authenticated (flavor). It keeps the adapter contract the chat adapter
// keeps (no retries of its own, typed failures, blocks that never
// interleave). It is safe for concurrent use: a call shares nothing with
// another.
//
// Reasoning arrives as reasoning items: their summary streams as thinking,
// and the whole item (with its encrypted content) becomes the thinking
// block's signature, which the next request sends back verbatim, as the
// original does. A message item's id is its text block's signature and a
// function call's item id rides in its tool call id ("<call_id>|<item
// id>"), both for the same reason.
type Responses struct {
	opts Options
}

// NewResponses returns a Responses provider. Options.APIKey gives an API
// key (an Azure key, or a ChatGPT access token for Codex).
func NewResponses(o Options) *Responses { return &Responses{opts: o} }

var _ engine.Provider = (*Responses)(nil)

// DefaultCodexBaseURL is ChatGPT's backend, where Codex models are served
// when a model has no BaseURL.
const DefaultCodexBaseURL = "https://chatgpt.com/backend-api"

// azureAPIVersion is the api-version sent to Azure unless the baseUrl's
// query names one: "v1" is the version of Azure's /openai/v1 endpoints.
const azureAPIVersion = "v1"

// Stream implements engine.Provider.
func (p *Responses) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	fl := flavorOf(req.Model.API)
	var key string
	if p.opts.APIKey != nil {
		key = p.opts.APIKey(req.Model)
	}
	red := redactor(provider.Secrets(req.Model, key))
	client := p.opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	opts := make([]option.RequestOption, 0, 8+len(req.Model.Headers))
	opts = append(opts, option.WithHTTPClient(client), option.WithMaxRetries(0))
	// Configured headers first: those the flavor needs win, as in the
	// original.
	for k, v := range req.Model.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	flavorOpts, err := fl.options(req.Model.BaseURL, key)
	if err != nil {
		return err
	}
	opts = append(opts, flavorOpts...)

	// The service is built per call from explicit options only: the SDK's
	// NewClient would read OPENAI_* variables behind the registry's back.
	svc := responses.NewResponseService(opts...)
	params := buildResponsesParams(req, fl)
	body, err := send(ctx, red, func(into ...option.RequestOption) error {
		return svc.NewStreaming(ctx, params, into...).Err()
	})
	if err != nil {
		return err
	}
	s := respState{w: provider.NewStreamWriter(fn)}
	var ev respEvent // one value for all events: it escapes to the heap
	err = readEvents(ctx, body, red, func(e ssestream.Event) (bool, error) {
		if string(e.Data) == "[DONE]" {
			return true, nil
		}
		// Zeroed per event: decoding into a used value would keep fields
		// the new event omits.
		ev = respEvent{}
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			return true, malformed(err, red)
		}
		return s.event(&ev, e.Data, red)
	})
	if err != nil {
		return err
	}
	return s.finish(red)
}

// options are the flavor's URL and credentials.
func (fl flavor) options(baseURL, key string) ([]option.RequestOption, error) {
	switch fl {
	case flavorAzure:
		if baseURL == "" {
			return nil, &engine.ProviderError{Kind: engine.ErrorOther, Message: "azure-openai-responses needs the model's baseUrl (https://<resource>.openai.azure.com/openai/v1)"}
		}
		base, version := azureEndpoint(baseURL)
		// Azure takes the key in api-key, never as a bearer token.
		opts := []option.RequestOption{option.WithBaseURL(base), option.WithQueryAdd("api-version", version)}
		if key != "" {
			opts = append(opts, option.WithHeader("api-key", key))
		}
		return opts, nil
	case flavorCodex:
		account, err := codexAccount(key)
		if err != nil {
			return nil, &engine.ProviderError{Kind: engine.ErrorAuth, Message: err.Error(), Err: err}
		}
		if baseURL == "" {
			baseURL = DefaultCodexBaseURL
		}
		return []option.RequestOption{
			option.WithBaseURL(codexBase(baseURL)),
			option.WithAPIKey(key),
			option.WithHeader("chatgpt-account-id", account),
			option.WithHeader("OpenAI-Beta", "responses=experimental"),
			option.WithHeader("originator", "pi"),
			option.WithHeader("Accept", "text/event-stream"),
		}, nil
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	opts := []option.RequestOption{option.WithBaseURL(baseURL)}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return opts, nil
}

// azureEndpoint splits a configured Azure baseUrl into the base the SDK
// appends "responses" to and the api-version: the one its query names,
// else azureAPIVersion.
func azureEndpoint(raw string) (string, string) {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw, azureAPIVersion
	}
	version := u.Query().Get("api-version")
	if version == "" {
		version = azureAPIVersion
	}
	u.RawQuery = ""
	return u.String(), version
}

// codexBase is the base the SDK appends "responses" to, so that the request
// goes to <baseUrl>/codex/responses, as the original resolves it.
func codexBase(raw string) string {
	b := strings.TrimRight(raw, "/")
	switch {
	case strings.HasSuffix(b, "/codex/responses"):
		return strings.TrimSuffix(b, "/responses")
	case strings.HasSuffix(b, "/codex"):
		return b
	}
	return b + "/codex"
}

// errCodexToken is what a Codex model says about a key that is not a
// ChatGPT access token.
var errCodexToken = errors.New("openai-codex-responses needs a ChatGPT access token (the JWT a ChatGPT login gives, with a chatgpt_account_id claim) as its key; an OpenAI API key does not work with ChatGPT's backend")

// codexAccount reads the ChatGPT account id from an access token's claims,
// which ChatGPT's backend wants as a header beside the token. The token is
// not verified: the backend does that.
func codexAccount(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errCodexToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", errCodexToken
	}
	var claims struct {
		Auth struct {
			Account string `json:"chatgpt_account_id"`
		} `json:"https://api.openai.com/auth"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Auth.Account == "" {
		return "", errCodexToken
	}
	return claims.Auth.Account, nil
}
