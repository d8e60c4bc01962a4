package mcp

import (
	"sort"
	"strings"

	"github.com/xcsh-go/xcsh/engine/childenv"
)

// childEnv is the one function that builds the environment of an MCP
// server's process: ours without the provider keys (engine/childenv),
// then the entry's env (which wins, and may name a key on purpose).
func childEnv(extra map[string]string) []string {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kv := make([]string, 0, len(keys))
	for _, k := range keys {
		kv = append(kv, k+"="+extra[k])
	}
	return childenv.Environ(kv...)
}

// redactor replaces secrets with *** in every text this package reports.
type redactor struct{ r *strings.Replacer }

// minSecret is the shortest value treated as a secret: shorter ones
// ("1", "on") would mangle ordinary text and hide nothing.
const minSecret = 4

// newRedactor redacts each value, and each word of a value ("Bearer
// <token>" hides the token wherever it appears alone), longest first.
func newRedactor(values []string) redactor {
	set := map[string]bool{}
	for _, v := range values {
		if len(v) >= minSecret {
			set[v] = true
		}
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 {
				set[w] = true
			}
		}
	}
	list := make([]string, 0, len(set))
	for v := range set {
		list = append(list, v)
	}
	sort.Slice(list, func(i, j int) bool {
		if len(list[i]) != len(list[j]) {
			return len(list[i]) > len(list[j])
		}
		return list[i] < list[j]
	})
	if len(list) == 0 {
		return redactor{}
	}
	pairs := make([]string, 0, 2*len(list))
	for _, v := range list {
		pairs = append(pairs, v, "***")
	}
	return redactor{strings.NewReplacer(pairs...)}
}

func (r redactor) text(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
