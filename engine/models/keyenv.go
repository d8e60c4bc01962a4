package models

import (
	"slices"
	"strings"
)

// KeyEnvNames lists the environment variables the registry may read a
// secret from, sorted: every provider's usual key variables (whether or
// not they are set) and the variables named by a configured apiKey or
// header value of models.json or models.yml. The CLI removes them from the
// environment of the processes the agent starts (engine/childenv), so a
// command the model runs cannot print them.
func (r *Registry) KeyEnvNames() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	seen := map[string]bool{}
	for _, names := range envKeys {
		for _, n := range names {
			seen[n] = true
		}
	}
	ref := func(v string, literal bool) {
		if !literal && !strings.HasPrefix(v, "!") && envNameRE().MatchString(v) {
			seen[v] = true
		}
	}
	for _, pc := range r.providers {
		ref(pc.apiKey, false)
		for _, h := range pc.headers {
			ref(h.value, h.literal)
		}
	}
	for _, hs := range r.modelHeaders {
		for _, h := range hs {
			ref(h.value, h.literal)
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
