// Package childenv builds the environment of every process the agent
// starts: the commands of the bash tool and of the RPC bash command (and
// of an extension's exec), the supervisor that runs them, extensions and
// MCP servers. It is the one place that keeps the agent's secrets out of
// its children: a model that runs `env` must not find them (issue 15,
// S10; issue 26).
//
// The secrets are variables, dropped by name: cmd/xcsh calls Drop at
// start-up with the names of the variables the model registry reads keys
// from (models.Registry.KeyEnvNames), and engine/mcp with the variables an
// MCP configuration names for its servers (an MCP server gets its own
// back as an explicit extra). --keep-key-env turns the rule off (Keep).
// Every launcher builds its child's environment with Environ instead of
// os.Environ:
//
//	cmd.Env = childenv.Environ("EXTRA=1")
//
// The list is process-wide, as the environment itself is.
package childenv

import (
	"os"
	"slices"
	"strings"
	"sync"
)

var (
	mu sync.RWMutex
	// dropped holds the variable names removed from every child's
	// environment; guarded by mu.
	dropped = map[string]bool{}
	// kept turns the filter off (--keep-key-env); guarded by mu.
	kept bool
)

// Keep makes Environ and Filter keep every variable, whatever Drop was or
// will be told (--keep-key-env: the user's commands need the keys).
func Keep() {
	mu.Lock()
	defer mu.Unlock()
	kept = true
}

// Drop adds names to the variables removed from every child's environment.
// Empty names are ignored.
func Drop(names ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, n := range names {
		if n != "" {
			dropped[n] = true
		}
	}
}

// Dropped lists the names Environ removes, sorted.
func Dropped() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(dropped))
	for n := range dropped {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Reset forgets every dropped name and Keep (tests).
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	clear(dropped)
	kept = false
}

// Environ returns the agent's environment without the dropped variables,
// followed by extra ("KEY=VALUE" entries, which win over the inherited
// ones as exec.Cmd's last-duplicate rule says). The extras are the
// caller's own choice and are never filtered.
func Environ(extra ...string) []string {
	return Filter(os.Environ(), extra...)
}

// Filter is Environ over a given base environment.
func Filter(base []string, extra ...string) []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if kept || !dropped[name] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}
