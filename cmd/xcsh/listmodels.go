package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/models"
	"github.com/xcsh-go/xcsh/engine/provider/ollama"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// listModels prints the models the user can select (a provider with a key
// or none needed), as the family's --list-models does, with the thinking
// level a session would start with on each; the arguments filter the list.
// Local servers are asked for their models first (bounded). Without a
// filter, the providers that could be enabled follow, each with how.
func listModels(o *options, args []string, stdout, stderr io.Writer) error {
	env := os.Getenv
	agentDir := sessionfile.AgentDir(env)
	reg, err := loadRegistry(agentDir, env)
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	reg.SetKeyless("fake")
	reg.Add(fakeprovider.Demo().Model())
	if o.apiKey != "" && o.provider != "" {
		reg.SetKeyOverride(o.provider, o.apiKey)
	}
	ms := &modelSetup{reg: reg}
	ms.startDiscovery(reg, env, truthy(env("XCSH_DETERMINISTIC")))
	ms.discovery.Wait()

	level := engine.ThinkingXHigh
	if l, err := thinkingFlag(o.thinking); err != nil {
		return err
	} else if l != "" {
		level = l
	}
	search := strings.TrimSpace(strings.Join(args, " "))
	var rows [][6]string
	grows := false // a row's window can grow
	for _, m := range reg.Available() {
		if o.provider != "" && m.Provider != o.provider {
			continue
		}
		if !matchesSearch(m, search) {
			continue
		}
		thinking := string(models.ClampThinking(m, level))
		if thinking == "" {
			thinking = "-"
		}
		images := "no"
		for _, in := range m.Input {
			if in == "image" {
				images = "yes"
			}
		}
		context := tokenCount(m.ContextWindow)
		if m.MaxContextWindow > m.ContextWindow {
			// A local server's model: the window in force, then how far
			// the session may grow it.
			context += "-" + tokenCount(m.MaxContextWindow)
			grows = true
		}
		rows = append(rows, [6]string{m.Provider, m.ID, context, tokenCount(m.MaxTokens), thinking, images})
	}
	if len(rows) == 0 {
		if search != "" {
			fmt.Fprintf(stdout, "No models matching %q.\n", search)
			return nil
		}
		fmt.Fprintln(stdout, "No models available.")
		writeHints(stdout, enableHints(reg, agentDir, o.provider))
		return nil
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i][0] != rows[j][0] {
			return rows[i][0] < rows[j][0]
		}
		return rows[i][1] < rows[j][1]
	})
	header := [6]string{"provider", "model", "context", "max-out", "thinking", "images"}
	var widths [6]int
	for _, r := range append([][6]string{header}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range append([][6]string{header}, rows...) {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == len(r)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s", widths[i], c)
			}
		}
		fmt.Fprintln(stdout, b.String())
	}
	fmt.Fprintln(stdout, "\nthinking: the level a session starts with (xhigh, or --thinking, clamped to the model; - for none). Select one with --model provider/model[:level].")
	if grows {
		fmt.Fprintf(stdout, "context A-B: an Ollama model starts with window A (its Modelfile's num_ctx, else OLLAMA_CONTEXT_LENGTH, else %d) and doubles it up to its trained context B when the conversation needs more (docs/providers.md).\n", ollama.DefaultWindow)
	}
	if search == "" {
		writeHints(stdout, enableHints(reg, agentDir, o.provider))
	}
	return nil
}

// matchesSearch reports whether every word of search is in the model's
// provider/id or name, or (fuzzily) its letters in order.
func matchesSearch(m engine.Model, search string) bool {
	hay := strings.ToLower(m.Provider + "/" + m.ID + " " + m.Name)
	for _, w := range strings.Fields(strings.ToLower(search)) {
		if !strings.Contains(hay, w) && !subsequence(hay, w) {
			return false
		}
	}
	return true
}

func subsequence(hay, w string) bool {
	i := 0
	for j := 0; j < len(hay) && i < len(w); j++ {
		if hay[j] == w[i] {
			i++
		}
	}
	return i == len(w)
}

// tokenCount writes a token count as people read it: 200K, 1M, 1.5M.
func tokenCount(n int) string {
	switch {
	case n >= 1_000_000:
		if n%1_000_000 == 0 {
			return fmt.Sprintf("%dM", n/1_000_000)
		}
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	case n >= 1_000:
		if n%1_000 == 0 {
			return fmt.Sprintf("%dK", n/1_000)
		}
		return fmt.Sprintf("%.1fK", float64(n)/1_000)
	}
	return fmt.Sprint(n)
}
