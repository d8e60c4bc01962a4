package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
	"github.com/xcsh-go/xcsh/engine/provider/ollama/ollamatest"
)

func TestDiscover(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{Models: []ollamatest.Model{
		{Name: "qwen3:8b", Capabilities: []string{"completion", "tools", "thinking"}, Architecture: "qwen3", ContextLength: 40960},
		{Name: "llava:7b", Capabilities: []string{"completion", "vision"}, ContextLength: 4096},
		{Name: "gpt-oss:20b", Capabilities: []string{"completion", "tools", "thinking"}, Architecture: "gptoss", ContextLength: 131072},
		{Name: "mybot:latest", Capabilities: []string{"completion", "thinking"}, Architecture: "gptoss", ContextLength: 131072},
		{Name: "nomic-embed-text:latest", Capabilities: []string{"embedding"}, Architecture: "nomic-bert", ContextLength: 2048},
		{Name: "nolen:latest", Capabilities: []string{"completion"}},
		{Name: "broken:latest", Show: &ollamatest.Reply{Status: 500, Error: "boom"}},
		{Name: "slow:latest", Capabilities: []string{"completion", "thinking"}, Show: &ollamatest.Reply{End: ollamatest.EndStall}},
	}})
	t.Cleanup(srv.Close)
	// slow's /api/show never answers: it times out. The bound is long
	// enough that a loaded machine answers the others within it (100 ms
	// did not under -race in a full run).
	models, err := ollama.Discovery{Host: srv.URL, ShowTimeout: time.Second, Window: ollama.DefaultWindow}.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	base := func(m engine.Model) engine.Model {
		m.API, m.Provider, m.BaseURL = "ollama", "ollama", srv.URL
		m.Name = m.ID
		if m.Input == nil {
			m.Input = []string{"text"}
		}
		return m
	}
	bool1 := &engine.ModelThinking{MinLevel: "high", MaxLevel: "high", Mode: "effort"}
	levels := &engine.ModelThinking{MinLevel: "low", MaxLevel: "high", Mode: "effort"}
	// The test server lists every model as changed in the same instant: then
	// they come by name (the real server orders by modification time).
	// Each starts with the 8,192-token window and may grow to its trained
	// context (128,000 when /api/show did not say); llava's is smaller.
	want := []engine.Model{
		base(engine.Model{ID: "broken:latest", ContextWindow: 8192, MaxContextWindow: 128000, MaxTokens: 8192}),
		base(engine.Model{ID: "gpt-oss:20b", Reasoning: true, Thinking: levels, ContextWindow: 8192, MaxContextWindow: 131072, MaxTokens: 8192}),
		base(engine.Model{ID: "llava:7b", Input: []string{"text", "image"}, ContextWindow: 4096, MaxTokens: 4096, Compat: json.RawMessage(`{"tools":false}`)}),
		base(engine.Model{ID: "mybot:latest", Reasoning: true, Thinking: levels, ContextWindow: 8192, MaxContextWindow: 131072, MaxTokens: 8192, Compat: json.RawMessage(`{"thinkLevels":true,"tools":false}`)}),
		base(engine.Model{ID: "nolen:latest", ContextWindow: 8192, MaxContextWindow: 128000, MaxTokens: 8192, Compat: json.RawMessage(`{"tools":false}`)}),
		base(engine.Model{ID: "qwen3:8b", Reasoning: true, Thinking: bool1, ContextWindow: 8192, MaxContextWindow: 40960, MaxTokens: 8192}),
		base(engine.Model{ID: "slow:latest", ContextWindow: 8192, MaxContextWindow: 128000, MaxTokens: 8192}),
	}
	got, _ := json.Marshal(models)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("models:\n%s\nwant:\n%s", got, exp)
	}
}

// TestDiscoverWindow: the window a model starts with is its Modelfile's
// num_ctx, else OLLAMA_CONTEXT_LENGTH, else DefaultWindow, at most its
// trained context; the trained context is how far it may grow. (Not
// parallel: it sets the environment.)
func TestDiscoverWindow(t *testing.T) {
	srv := ollamatest.NewServer(ollamatest.Script{Models: []ollamatest.Model{
		{Name: "llama3.1:8b", Capabilities: []string{"completion", "tools"}, ContextLength: 131072},
		{Name: "sized:latest", Capabilities: []string{"completion", "tools"}, ContextLength: 131072, NumCtx: 32768},
		{Name: "small:latest", Capabilities: []string{"completion", "tools"}, ContextLength: 2048},
	}})
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		env  string
		want map[string][2]int // id: window, largest
	}{
		{"", map[string][2]int{"llama3.1:8b": {8192, 131072}, "sized:latest": {32768, 131072}, "small:latest": {2048, 0}}},
		{"4096", map[string][2]int{"llama3.1:8b": {4096, 131072}, "sized:latest": {32768, 131072}, "small:latest": {2048, 0}}},
		{` "65536" `, map[string][2]int{"llama3.1:8b": {65536, 131072}, "sized:latest": {32768, 131072}, "small:latest": {2048, 0}}},
		{"lots", map[string][2]int{"llama3.1:8b": {8192, 131072}, "sized:latest": {32768, 131072}, "small:latest": {2048, 0}}},
	} {
		t.Setenv("OLLAMA_CONTEXT_LENGTH", tc.env)
		models, err := ollama.Discover(t.Context(), nil, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if len(models) != len(tc.want) {
			t.Fatalf("OLLAMA_CONTEXT_LENGTH=%q: %d models", tc.env, len(models))
		}
		for _, m := range models {
			if w := tc.want[m.ID]; m.ContextWindow != w[0] || m.MaxContextWindow != w[1] {
				t.Errorf("OLLAMA_CONTEXT_LENGTH=%q: %s window %d up to %d, want %d up to %d", tc.env, m.ID, m.ContextWindow, m.MaxContextWindow, w[0], w[1])
			}
		}
	}
}

func TestDiscoverEmpty(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewServer(ollamatest.Script{})
	t.Cleanup(srv.Close)
	models, err := ollama.Discover(t.Context(), nil, srv.URL)
	if err != nil || len(models) != 0 {
		t.Errorf("Discover = %v, %v; want no models and no error", models, err)
	}
}

func TestDiscoverFailures(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	stalled := ollamatest.NewServer(ollamatest.Script{Tags: &ollamatest.Reply{End: ollamatest.EndStall}})
	t.Cleanup(stalled.Close)
	failing := ollamatest.NewServer(ollamatest.Script{Tags: &ollamatest.Reply{Status: 500, Error: "boom"}})
	t.Cleanup(failing.Close)
	notOllama := ollamatest.NewServer(ollamatest.Script{Tags: &ollamatest.Reply{Status: 404, Body: "404 page not found"}})
	t.Cleanup(notOllama.Close)

	tests := []struct {
		name string
		d    ollama.Discovery
		ctx  func() (context.Context, context.CancelFunc)
		kind engine.ErrorKind
		msg  string // "" when not checked
	}{
		{"dead host", ollama.Discovery{Host: deadURL}, nil, engine.ErrorNoServer, `could not reach Ollama at ` + deadURL + `: connection refused, nothing listens there. Start Ollama ("ollama serve", or the Ollama app), or set OLLAMA_HOST to the address it listens on`},
		{"tags stall, own timeout", ollama.Discovery{Host: stalled.URL, Timeout: 100 * time.Millisecond}, nil, engine.ErrorTransport, "ollama: no answer from " + stalled.URL + " in time"},
		{"tags stall, ctx deadline", ollama.Discovery{Host: stalled.URL}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, engine.ErrorTransport, ""},
		{"tags error", ollama.Discovery{Host: failing.URL}, nil, engine.ErrorOverloaded, "500 boom"},
		{"not an Ollama", ollama.Discovery{Host: notOllama.URL}, nil, engine.ErrorOther, "404 404 page not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := t.Context(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			models, err := tt.d.Run(ctx)
			var pe *engine.ProviderError
			if models != nil || !errors.As(err, &pe) {
				t.Fatalf("Run = %v, %v; want a *engine.ProviderError", models, err)
			}
			if pe.Kind != tt.kind || (tt.msg != "" && pe.Message != tt.msg) {
				t.Errorf("kind %v message %q, want %v %q", pe.Kind, pe.Message, tt.kind, tt.msg)
			}
		})
	}
}
