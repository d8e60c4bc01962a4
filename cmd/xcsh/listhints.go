package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
)

// enableHint is how a provider none of whose models can be used yet would
// be enabled.
type enableHint struct{ provider, how string }

// enableHints lists, for --list-models, each known provider that has no
// model listed (only, with only set) and how to enable it: the key
// variable to set, the local server to start, or models.json; then one
// line for a server of one's own. A user with no key sees more than the
// demo: what they could have and how.
func enableHints(reg *models.Registry, agentDir, only string) []enableHint {
	listed := map[string]bool{}
	for _, m := range reg.Available() {
		listed[m.Provider] = true
	}
	discovery := map[string]models.Discovery{}
	for _, d := range reg.Discoveries() {
		discovery[d.Provider] = d
	}
	modelsJSON := filepath.Join(agentDir, "models.json")
	var out []enableHint
	for _, p := range reg.Providers() {
		if listed[p] || (only != "" && p != only) {
			continue
		}
		var how string
		d, discoverable := discovery[p]
		vars := reg.KeyEnvVars(p)
		switch {
		case discoverable && d.Type == "ollama":
			host := d.BaseURL
			if d.Implicit {
				host = ollama.Host()
			}
			how = fmt.Sprintf("start Ollama (ollama serve) at %s, or set OLLAMA_HOST to where it runs; its pulled models are listed", strings.TrimSuffix(host, "/v1"))
		case discoverable:
			// Only Ollama's server is asked for its models in this build.
			how = fmt.Sprintf("list its models under %q in %s (its server at %s is not asked for them)", p, modelsJSON, d.BaseURL)
		case len(vars) > 0:
			how = "set " + strings.Join(vars, " or ")
		default:
			how = fmt.Sprintf("give it an \"apiKey\" (or \"auth\": \"none\") in %s", modelsJSON)
		}
		out = append(out, enableHint{p, how})
	}
	if only == "" || !slices.Contains(reg.Providers(), only) {
		out = append(out, enableHint{"your server", fmt.Sprintf("add any OpenAI-compatible server (vLLM, LiteLLM, llama.cpp, LM Studio) to %s (docs/providers.md)", modelsJSON)})
	}
	return out
}

// writeHints prints the hints as an aligned block.
func writeHints(w io.Writer, hints []enableHint) {
	if len(hints) == 0 {
		return
	}
	width := 0
	for _, h := range hints {
		width = max(width, len(h.provider))
	}
	fmt.Fprintln(w, "\nTo enable more:")
	for _, h := range hints {
		fmt.Fprintf(w, "  %-*s  %s\n", width, h.provider, h.how)
	}
}
