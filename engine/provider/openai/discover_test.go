package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
)

func discoverServer(t *testing.T, get map[string]string) *openaitest.Server {
	t.Helper()
	s := &openaitest.Script{Get: map[string]json.RawMessage{}}
	for path, body := range get {
		s.Get[path] = json.RawMessage(body)
	}
	srv := openaitest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

type modelRow struct {
	ID      string
	Window  int
	Max     int
	Input   string
	BaseURL string
}

func rows(ms []engine.Model) []modelRow {
	out := []modelRow{}
	for _, m := range ms {
		out = append(out, modelRow{m.ID, m.ContextWindow, m.MaxTokens, strings.Join(m.Input, ","), m.BaseURL})
	}
	return out
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	const llamaModels = `{"object":"list","data":[{"id":"qwen2.5-7b-instruct-q4_k_m.gguf","object":"model","owned_by":"llamacpp","meta":{"n_ctx_train":32768,"n_vocab":152064}}]}`
	const lmsModels = `{"object":"list","data":[{"id":"qwen/qwen3-4b","object":"model"},{"id":"google/gemma-3-4b","object":"model"},{"id":"text-embedding-nomic-embed-text-v1.5","object":"model"},{"id":"cold-model","object":"model"}]}`
	tests := []struct {
		name string
		kind string
		get  map[string]string
		want []modelRow
	}{
		{"llama.cpp with props", openai.KindLlamaCpp, map[string]string{
			"/v1/models": llamaModels,
			"/props":     `{"default_generation_settings":{"n_ctx":8192},"total_slots":1,"modalities":{"vision":true}}`,
		}, []modelRow{{"qwen2.5-7b-instruct-q4_k_m.gguf", 8192, 8192, "text,image", ""}}},
		{"llama.cpp without props", openai.KindLlamaCpp, map[string]string{"/v1/models": llamaModels},
			[]modelRow{{"qwen2.5-7b-instruct-q4_k_m.gguf", 32768, 8192, "text", ""}}},
		{"LM Studio with its REST API", openai.KindLMStudio, map[string]string{
			"/v1/models": lmsModels,
			"/api/v0/models": `{"object":"list","data":[
				{"id":"qwen/qwen3-4b","type":"llm","state":"loaded","max_context_length":32768,"loaded_context_length":4096},
				{"id":"google/gemma-3-4b","type":"vlm","state":"not-loaded","max_context_length":131072},
				{"id":"text-embedding-nomic-embed-text-v1.5","type":"embeddings","max_context_length":2048}]}`,
		}, []modelRow{{"qwen/qwen3-4b", 4096, 4096, "text", ""}, {"google/gemma-3-4b", 131072, 8192, "text,image", ""}, {"cold-model", 128000, 8192, "text", ""}}},
		{"a plain server", "", map[string]string{"/v1/models": lmsModels},
			[]modelRow{{"qwen/qwen3-4b", 128000, 8192, "text", ""}, {"google/gemma-3-4b", 128000, 8192, "text", ""}, {"cold-model", 128000, 8192, "text", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := discoverServer(t, tt.get)
			for i := range tt.want {
				tt.want[i].BaseURL = srv.URL
			}
			got, err := openai.Discovery{BaseURL: srv.URL, Kind: tt.kind, Provider: "p", API: "openai-completions"}.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rows(got), tt.want) {
				t.Errorf("models\n got %+v\nwant %+v", rows(got), tt.want)
			}
			for _, m := range got {
				if m.Provider != "p" || m.API != "openai-completions" || m.Name != m.ID {
					t.Errorf("model %+v: provider, api or name not set", m)
				}
			}
		})
	}
}

// TestDiscoveryBaseWithoutV1: llama.cpp's original base URL has no /v1
// (it serves /models and /props at its root).
func TestDiscoveryBaseWithoutV1(t *testing.T) {
	t.Parallel()
	srv := discoverServer(t, map[string]string{"/models": `{"data":[{"id":"m","meta":{"n_ctx_train":4096}}]}`, "/props": `{"default_generation_settings":{"n_ctx":2048}}`})
	root := strings.TrimSuffix(srv.URL, "/v1")
	got, err := openai.Discovery{BaseURL: root, Kind: openai.KindLlamaCpp}.Run(t.Context())
	if err != nil || len(got) != 1 || got[0].ContextWindow != 2048 || got[0].BaseURL != root {
		t.Errorf("Run = %+v, %v", got, err)
	}
	// The key goes as a bearer token.
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("%s sent Authorization without a key", r.Path)
		}
	}
	if _, err := (openai.Discovery{BaseURL: root, Kind: openai.KindLlamaCpp, Key: "sk-local"}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Header.Get("Authorization"); got != "Bearer sk-local" {
		t.Errorf("Authorization %q", got)
	}
}

func TestDiscoveryFailures(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/v1"
	l.Close()
	stall := openaitest.NewServer(&openaitest.Script{})
	t.Cleanup(stall.Close)
	notJSON := discoverServer(t, map[string]string{"/v1/models": `"just a string"`})
	for _, tc := range []struct {
		name string
		d    openai.Discovery
		kind engine.ErrorKind
		msg  string
	}{
		{"nothing listens", openai.Discovery{BaseURL: dead}, engine.ErrorNoServer, "no answer from " + dead + "/models: connection refused, nothing listens there"},
		{"no /models", openai.Discovery{BaseURL: stall.URL}, engine.ErrorOther, stall.URL + "/models answered 404"},
		{"not a list", openai.Discovery{BaseURL: notJSON.URL}, engine.ErrorProtocol, notJSON.URL + "/models is not a model list: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // a hang guard
			defer cancel()
			models, err := tc.d.Run(ctx)
			var pe *engine.ProviderError
			if models != nil || !errors.As(err, &pe) || pe.Kind != tc.kind || !strings.HasPrefix(pe.Message, tc.msg) {
				t.Errorf("Run = %v, %v; want %v %q", models, err, tc.kind, tc.msg)
			}
		})
	}
}
