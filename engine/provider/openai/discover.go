package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// Discovery defaults, as Ollama's: a local server answers its model list
// in milliseconds, and one that is down must not hold the start up.
const (
	DefaultDiscoverTimeout = time.Second // the whole discovery, when ctx has no deadline
	discoverContextWindow  = 128000      // when the server does not say
	discoverMaxOutput      = 8192        // MaxTokens = min(context window, this)
	maxListBytes           = 8 << 20     // a model list is a few KB
)

// The kinds of server a Discovery knows beyond GET /models.
const (
	KindLlamaCpp = "llama.cpp" // also GET /props: the context the server runs with, vision
	KindLMStudio = "lm-studio" // also GET /api/v0/models: type, context lengths
)

// Discovery lists the models of an OpenAI-compatible server (llama.cpp's
// llama-server, LM Studio, vLLM, ...): GET <BaseURL>/models, and for the
// kinds that say more, the endpoint that gives each model's context
// window. The models get Provider, API and BaseURL as given.
type Discovery struct {
	Client   *http.Client // nil: http.DefaultClient
	BaseURL  string       // the API's base ("http://127.0.0.1:1234/v1"); /models is appended
	Kind     string       // KindLlamaCpp, KindLMStudio, or "" for a plain server
	Provider string
	API      string
	Key      string        // sent as a bearer token when not ""
	Timeout  time.Duration // bound on the whole discovery when ctx has no deadline; 0: DefaultDiscoverTimeout
}

// Run asks the server for its models. It fails only when the list cannot
// be had (an *engine.ProviderError; engine.LocalRefused tells a server
// that is not running); the extra endpoint failing leaves the models with
// what the list says. Embedding models are left out (LM Studio says which
// they are; otherwise an id containing "embed"). The models come in the
// server's order. The context window is, first found: the context the
// server runs with (llama.cpp's /props default_generation_settings.n_ctx,
// LM Studio's loaded_context_length), the model's own (LM Studio's
// max_context_length, llama.cpp's meta.n_ctx_train), else 128000.
func (d Discovery) Run(ctx context.Context) ([]engine.Model, error) {
	if _, ok := ctx.Deadline(); !ok {
		timeout := d.Timeout
		if timeout <= 0 {
			timeout = DefaultDiscoverTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	base := strings.TrimRight(d.BaseURL, "/")
	var list struct {
		Data []struct {
			ID   string `json:"id"`
			Meta struct {
				NCtx      int `json:"n_ctx"`
				NCtxTrain int `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	if err := d.get(ctx, base+"/models", &list); err != nil {
		return nil, err
	}
	// The root of the server, for the endpoints outside the /v1 API.
	root := strings.TrimSuffix(base, "/v1")
	var serverCtx int
	var vision bool
	lms := map[string]lmsModel{}
	switch d.Kind {
	case KindLlamaCpp:
		var props struct {
			Settings struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
			Modalities struct {
				Vision bool `json:"vision"`
			} `json:"modalities"`
		}
		if d.get(ctx, root+"/props", &props) == nil {
			serverCtx, vision = props.Settings.NCtx, props.Modalities.Vision
		}
	case KindLMStudio:
		var v0 struct {
			Data []lmsModel `json:"data"`
		}
		if d.get(ctx, root+"/api/v0/models", &v0) == nil {
			for _, m := range v0.Data {
				lms[m.ID] = m
			}
		}
	}
	models := make([]engine.Model, 0, len(list.Data))
	for _, lm := range list.Data {
		if lm.ID == "" {
			continue
		}
		m := engine.Model{ID: lm.ID, Name: lm.ID, API: d.API, Provider: d.Provider, BaseURL: d.BaseURL,
			Input: []string{"text"}}
		info, described := lms[lm.ID]
		switch {
		case described && info.Type == "embeddings":
			continue
		case !described && strings.Contains(strings.ToLower(lm.ID), "embed"):
			continue
		}
		if vision || info.Type == "vlm" {
			m.Input = []string{"text", "image"}
		}
		m.ContextWindow = firstPositive(serverCtx, info.LoadedContextLength, lm.Meta.NCtx, info.MaxContextLength, lm.Meta.NCtxTrain, discoverContextWindow)
		m.MaxTokens = min(m.ContextWindow, discoverMaxOutput)
		models = append(models, m)
	}
	return models, nil
}

// lmsModel is one model of LM Studio's /api/v0/models.
type lmsModel struct {
	ID                  string `json:"id"`
	Type                string `json:"type"` // llm, vlm or embeddings
	MaxContextLength    int    `json:"max_context_length"`
	LoadedContextLength int    `json:"loaded_context_length"` // only while it is loaded
}

func firstPositive(ns ...int) int {
	for _, n := range ns {
		if n > 0 {
			return n
		}
	}
	return 0
}

// get decodes the JSON answer of GET url into v.
func (d Discovery) get(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: fmt.Sprintf("%s: bad base URL %q: %v", d.Provider, d.BaseURL, err), Err: err}
	}
	if d.Key != "" {
		req.Header.Set("Authorization", "Bearer "+d.Key)
	}
	client := d.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		kind := engine.ErrorTransport
		if engine.LocalRefused(err) {
			kind = engine.ErrorNoServer
		}
		msg := fmt.Sprintf("no answer from %s", url)
		if errors.Is(err, context.DeadlineExceeded) {
			msg += " in time"
		} else if kind == engine.ErrorNoServer {
			msg += ": connection refused, nothing listens there"
		}
		return &engine.ProviderError{Kind: kind, Message: msg, Err: err}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxListBytes))
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorTransport, Message: fmt.Sprintf("reading %s: %v", url, err), Err: err}
	}
	if res.StatusCode != http.StatusOK {
		return &engine.ProviderError{Kind: engine.ErrorOther, Status: res.StatusCode,
			Message: fmt.Sprintf("%s answered %d", url, res.StatusCode)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &engine.ProviderError{Kind: engine.ErrorProtocol, Status: res.StatusCode,
			Message: fmt.Sprintf("%s is not a model list: %v", url, err), Err: err}
	}
	return nil
}
