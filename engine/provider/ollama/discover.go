package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/xcsh-go/xcsh/engine"
)

// Discovery defaults. The lead runs discovery in the background at
// start-up, and an Ollama that is down or wedged must not hold anything
// up: /api/tags answers in milliseconds on a live server.
const (
	DefaultDiscoverTimeout = time.Second            // the whole discovery, when ctx has no deadline
	DefaultShowTimeout     = 500 * time.Millisecond // each /api/show
	defaultContextWindow   = 128000                 // when /api/show does not say
	maxOutputTokens        = 8192                   // MaxTokens = min(context window, this)
	showConcurrency        = 4                      // /api/show calls in flight at once
)

// Discovery lists the models of one Ollama server. The zero value asks
// Host() with http.DefaultClient and the default timeouts.
type Discovery struct {
	Client      *http.Client  // nil: http.DefaultClient
	Host        string        // "": Host()
	Timeout     time.Duration // bound on the whole discovery when ctx has no deadline; 0: DefaultDiscoverTimeout
	ShowTimeout time.Duration // bound on each /api/show; 0: DefaultShowTimeout
	// Window is the window a model starts with when its Modelfile sets no
	// num_ctx (window.go); 0: StartWindow().
	Window int
}

// Discover lists the chat models of the Ollama server at host ("" for
// Host()) with the default timeouts: see Discovery.Run.
func Discover(ctx context.Context, client *http.Client, host string) ([]engine.Model, error) {
	return Discovery{Client: client, Host: host}.Run(ctx)
}

// Run asks /api/tags for the installed models, then /api/show for each
// (concurrently, a few at a time) for its capabilities and context length.
// Each model starts with a window that fits the machine (window.go:
// ContextWindow) and may grow to its trained context (MaxContextWindow).
// It fails only when the list itself cannot be had (a *engine.ProviderError,
// transport kind when the server is not there); a model whose details
// cannot be had in time is listed with the defaults (no reasoning, text
// input, a trained context of 128000 tokens). Models that cannot chat
// (embedding models) are left out. The models come in /api/tags order.
//
// The whole run is bounded by ctx's deadline when it has one, else by
// d.Timeout; a server that does not answer /api/tags in time is a
// transport failure like one that is not there.
func (d Discovery) Run(ctx context.Context) ([]engine.Model, error) {
	host := d.Host
	if host == "" {
		host = Host()
	}
	base, err := baseURL(engine.Model{BaseURL: host})
	if err != nil {
		return nil, &engine.ProviderError{Kind: engine.ErrorOther, Message: fmt.Sprintf("ollama: bad host %q: %v", host, err), Err: err}
	}
	if _, ok := ctx.Deadline(); !ok {
		timeout := d.Timeout
		if timeout <= 0 {
			timeout = DefaultDiscoverTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	hc := d.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	client := api.NewClient(base, hc)
	list, err := client.List(ctx)
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		// A server that accepts the connection and says nothing (wedged, or
		// not Ollama) is as unavailable as one that is not there.
		return nil, &engine.ProviderError{Kind: engine.ErrorTransport, Message: fmt.Sprintf("ollama: no answer from %s in time", base), Err: err}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		return nil, classify(err, base.String(), "")
	}

	// Newest first, as the server lists them; models changed in the same
	// instant (created together) by name, so the order never depends on
	// the server's map iteration.
	if slices.ContainsFunc(list.Models, func(m api.ListModelResponse) bool { return !m.ModifiedAt.IsZero() }) {
		slices.SortStableFunc(list.Models, func(a, b api.ListModelResponse) int {
			if c := b.ModifiedAt.Compare(a.ModifiedAt); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
	}
	showTimeout := d.ShowTimeout
	if showTimeout <= 0 {
		showTimeout = DefaultShowTimeout
	}
	shows := make([]*api.ShowResponse, len(list.Models))
	sem := make(chan struct{}, showConcurrency)
	var wg sync.WaitGroup
	for i, lm := range list.Models {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			sctx, cancel := context.WithTimeout(ctx, showTimeout)
			defer cancel()
			// A failed show leaves shows[i] nil: the model keeps the defaults.
			shows[i], _ = client.Show(sctx, &api.ShowRequest{Model: lm.Name})
		})
	}
	wg.Wait()

	window := d.Window
	if window <= 0 {
		window = StartWindow()
	}
	models := make([]engine.Model, 0, len(list.Models))
	for i, lm := range list.Models {
		if m, ok := describe(lm, shows[i], base.String(), window); ok {
			models = append(models, m)
		}
	}
	return models, nil
}

// describe builds the registry entry of one model, starting with window
// unless its Modelfile sets num_ctx; ok is false for a model that cannot
// chat.
func describe(lm api.ListModelResponse, show *api.ShowResponse, host string, window int) (engine.Model, bool) {
	m := engine.Model{
		ID:            lm.Name,
		Name:          lm.Name,
		API:           "ollama",
		Provider:      "ollama",
		BaseURL:       host,
		Input:         []string{"text"},
		ContextWindow: defaultContextWindow,
	}
	if show != nil {
		caps := make([]string, len(show.Capabilities))
		for i, c := range show.Capabilities {
			caps[i] = string(c)
		}
		if len(caps) > 0 && !slices.Contains(caps, "completion") {
			return m, false
		}
		if slices.Contains(caps, "vision") || slices.Contains(caps, "image") {
			m.Input = []string{"text", "image"}
		}
		if slices.Contains(caps, "thinking") {
			m.Reasoning = true
		}
		if len(caps) > 0 && !slices.Contains(caps, "tools") {
			// The server refuses a whole request that offers tools to
			// this model (400 "... does not support tools"): Stream
			// leaves them out.
			m.Compat = json.RawMessage(`{"tools":false}`)
		}
		if n := contextLength(show.ModelInfo); n > 0 {
			m.ContextWindow = n
		}
		if n := modelfileNumCtx(show.Parameters); n > 0 {
			window = n
		}
	}
	// m.ContextWindow is the trained context here: the largest window.
	m.MaxTokens = min(m.ContextWindow, maxOutputTokens)
	if w := startWindow(window, m.ContextWindow); w < m.ContextWindow {
		m.ContextWindow, m.MaxContextWindow = w, m.ContextWindow
	}
	if m.Reasoning {
		m.Thinking = &engine.ModelThinking{MinLevel: engine.ThinkingHigh, MaxLevel: engine.ThinkingHigh, Mode: "effort"}
		family := ""
		if show != nil {
			family = show.Details.Family
		}
		gptoss := family == "gptoss" || family == "gpt-oss"
		if gptoss || takesLevels(m) {
			m.Thinking.MinLevel = engine.ThinkingLow
		}
		if gptoss && !takesLevels(m) {
			// A gpt-oss model under another name: tell Stream it takes
			// levels, since the name rule will not.
			m.Compat = setCompat(m.Compat, "thinkLevels", true)
		}
	}
	return m, true
}

// contextLength reads "<architecture>.context_length" from /api/show's
// model_info (JSON numbers decode as float64).
func contextLength(info map[string]any) int {
	key := ".context_length"
	if arch, ok := info["general.architecture"].(string); ok {
		key = arch + key
		if v, ok := info[key].(float64); ok {
			return int(v)
		}
		return 0
	}
	for k, v := range info {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, key) {
			return int(f)
		}
	}
	return 0
}

// setCompat returns compat with key set to v.
func setCompat(compat json.RawMessage, key string, v any) json.RawMessage {
	c := map[string]any{}
	_ = json.Unmarshal(compat, &c)
	c[key] = v
	b, _ := json.Marshal(c)
	return b
}
