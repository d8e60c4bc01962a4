package models

import (
	"slices"
	"sort"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// What the CLI tells a user who named a model that is not there, or has
// no key for it: the names that exist, nearest first, and where a key
// comes from.

// KeyEnvVars lists the environment variables a provider's key is read
// from: the variable its configured apiKey names, if any, then its usual
// ones (agent-core §10.2), in the order they are tried.
func (r *Registry) KeyEnvVars(provider string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	if pc := r.providers[provider]; pc != nil && envNameRE().MatchString(pc.apiKey) {
		out = append(out, pc.apiKey)
	}
	for _, v := range envKeys[provider] {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Nearest returns up to n model ids of provider ("" for every provider,
// then written provider/id) ordered by how close they are to want: ids
// that contain it or are contained in it first, then by edit distance.
func (r *Registry) Nearest(provider, want string, n int) []string {
	var names, ids []string
	for _, m := range r.All() {
		if provider != "" && m.Provider != provider {
			continue
		}
		name := m.ID
		if provider == "" {
			name = m.Provider + "/" + m.ID
		}
		names, ids = append(names, name), append(ids, m.ID)
	}
	return nearest(want, names, ids, n)
}

// NearestNames returns up to n of names ordered by how close they are to
// want (case aside): names that contain it or are contained in it first,
// then by edit distance; ties keep the order given. The CLI names the
// nearest providers of an unknown one with it.
func NearestNames(want string, names []string, n int) []string {
	return nearest(want, names, names, n)
}

// nearest ranks names[i] by keys[i] against want and returns the first n
// names, each once.
func nearest(want string, names, keys []string, n int) []string {
	type cand struct {
		name string
		rank int
	}
	want = strings.ToLower(want)
	cands := make([]cand, 0, len(names))
	for i, name := range names {
		key := strings.ToLower(keys[i])
		rank := distance(want, key)
		if want != "" && (strings.Contains(key, want) || strings.Contains(want, key)) {
			rank = -1000 + rank
		}
		cands = append(cands, cand{name, rank})
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].rank < cands[j].rank })
	out := make([]string, 0, min(n, len(cands)))
	for _, c := range cands {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// distance is the Levenshtein distance of a and b, by bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DefaultThinking is the level a session starts with on m when nothing
// asks for another: the original's default (xhigh) clamped to what m
// supports ("" for a model without reasoning).
func DefaultThinking(m engine.Model) engine.ThinkingLevel {
	return ClampThinking(m, engine.ThinkingXHigh)
}

// Configured reports whether the user's models.json or models.yml
// configures provider (a provider named like a built-in one then replaces
// it).
func (r *Registry) Configured(provider string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.providers[provider] != nil
}
