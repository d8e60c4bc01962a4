package models

import (
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestNearestAndKeyVars(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	r, err := Load(t.TempDir(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	r.Add(engine.Model{ID: "qwen3:8b", Provider: "ollama", API: "ollama"},
		engine.Model{ID: "qwen3:32b", Provider: "ollama", API: "ollama"},
		engine.Model{ID: "llama3.1:8b", Provider: "ollama", API: "ollama"})
	if got := strings.Join(r.Nearest("ollama", "qwen3:4b", 2), ","); got != "qwen3:8b,qwen3:32b" {
		t.Errorf("nearest %s", got)
	}
	if got := strings.Join(r.Nearest("ollama", "qwen", 1), ","); got != "qwen3:8b" {
		t.Errorf("containing %s", got)
	}
	if got := strings.Join(r.KeyEnvVars("anthropic"), ","); got != "ANTHROPIC_OAUTH_TOKEN,ANTHROPIC_API_KEY" {
		t.Errorf("anthropic vars %s", got)
	}
	if got := strings.Join(NearestNames("VLLM", []string{"fake", "anthropic", "openai", "ollama", "llama.cpp", "lm-studio"}, 3), ","); got != "ollama,fake,openai" {
		t.Errorf("nearest names %s", got)
	}
	if got := strings.Join(NearestNames("lama", []string{"fake", "ollama", "llama.cpp"}, 2), ","); got != "ollama,llama.cpp" {
		t.Errorf("containing names %s", got)
	}
	if distance("kitten", "sitting") != 3 || distance("", "abc") != 3 {
		t.Error("distance")
	}
}
