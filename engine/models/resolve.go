package models

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// SplitThinking splits a trailing ":<level>" off a model pattern
// (claude-opus-4-5:high). level is "" when the suffix is absent or not a
// thinking level (llama3.1:8b keeps its colon); off is a level here.
func SplitThinking(pattern string) (base string, level engine.ThinkingLevel) {
	i := strings.LastIndexByte(pattern, ':')
	if i <= 0 {
		return pattern, ""
	}
	l := engine.ThinkingLevel(pattern[i+1:])
	if l != engine.ThinkingOff && effortRank(l) < 0 {
		return pattern, ""
	}
	return pattern[:i], l
}

// Resolve finds the model a CLI --model pattern names, among all models
// (with or without a key: --api-key may supply it). The matching is a
// simplified form of the original's, in this order:
//
//  1. provider/id, case-insensitive;
//  2. the id alone, case-insensitive (first in registry order; ids may
//     hold slashes, as OpenRouter's do);
//  3. provider/part, when provider names a provider: the first of its
//     models whose id contains part;
//  4. a case-insensitive substring of the id or the name: among the
//     matches, the first whose id does not end in a -YYYYMMDD date (an
//     alias, such as claude-sonnet-4-5) wins, else the latest date.
//
// The original also ranks ties by recent use and provider priority, and
// matches fuzzily (subsequences); we do neither.
func (r *Registry) Resolve(pattern string) (engine.Model, bool) {
	return match(r.All(), pattern, false)
}

// ResolveThinking is Resolve for a pattern that may end in ":<level>": the
// whole pattern is tried exactly first (an id may end in :high), then the
// pattern without its level. level is the suffix, "" if there is none.
func (r *Registry) ResolveThinking(pattern string) (m engine.Model, level engine.ThinkingLevel, ok bool) {
	return matchThinking(r.All(), pattern)
}

func matchThinking(models []engine.Model, pattern string) (engine.Model, engine.ThinkingLevel, bool) {
	if m, ok := match(models, pattern, true); ok {
		return m, "", true
	}
	if base, level := SplitThinking(pattern); level != "" {
		if m, ok := match(models, base, false); ok {
			return m, level, true
		}
		return engine.Model{}, "", false
	}
	m, ok := match(models, pattern, false)
	return m, "", ok
}

var dateSuffixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-\d{8}$`) })

func match(models []engine.Model, pattern string, exactOnly bool) (engine.Model, bool) {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return engine.Model{}, false
	}
	lower := strings.ToLower(pattern)
	prov, rest, slash := strings.Cut(lower, "/")
	if slash {
		for _, m := range models {
			if strings.ToLower(m.Provider) == prov && strings.ToLower(m.ID) == rest {
				return m, true
			}
		}
	}
	for _, m := range models {
		if strings.ToLower(m.ID) == lower {
			return m, true
		}
	}
	if exactOnly {
		return engine.Model{}, false
	}
	if slash && rest != "" {
		known := false
		for _, m := range models {
			if strings.ToLower(m.Provider) != prov {
				continue
			}
			known = true
			if strings.Contains(strings.ToLower(m.ID), rest) {
				return m, true
			}
		}
		if known {
			return engine.Model{}, false
		}
	}
	var aliases, dated []engine.Model
	for _, m := range models {
		if strings.Contains(strings.ToLower(m.ID), lower) || strings.Contains(strings.ToLower(m.Name), lower) {
			if dateSuffixRE().MatchString(m.ID) {
				dated = append(dated, m)
			} else {
				aliases = append(aliases, m)
			}
		}
	}
	if len(aliases) > 0 {
		return aliases[0], true
	}
	if len(dated) > 0 {
		sort.SliceStable(dated, func(i, j int) bool { return dated[i].ID > dated[j].ID })
		return dated[0], true
	}
	return engine.Model{}, false
}

// Scoped is one model of the CLI's --models scope, with the thinking
// level its pattern asked for (clamped to the model; "" when none).
type Scoped struct {
	Model    engine.Model
	Thinking engine.ThinkingLevel
}

// ScopedModels resolves the --models patterns (agent-core §10.5) against
// the available models, in pattern order, each model once (the first
// pattern that names it sets its level). A pattern is provider/id, an id
// or part of one (matched as Resolve does), or a glob (*, ?, [...]) tried
// on provider/id and on the id, case-insensitively; any of them may end in
// ":<level>". Patterns that match nothing are skipped, as in the original.
func (r *Registry) ScopedModels(patterns []string) []Scoped {
	avail := r.Available()
	out := []Scoped{}
	seen := map[modelKey]bool{}
	add := func(m engine.Model, level engine.ThinkingLevel) {
		if seen[keyOf(m)] {
			return
		}
		seen[keyOf(m)] = true
		if level != "" {
			level = ClampThinking(m, level)
		}
		out = append(out, Scoped{Model: m, Thinking: level})
	}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if strings.ContainsAny(p, "*?[") {
			base, level := SplitThinking(p)
			glob := strings.ToLower(base)
			for _, m := range avail {
				full := strings.ToLower(m.Provider + "/" + m.ID)
				if ok, _ := path.Match(glob, full); ok {
					add(m, level)
				} else if ok, _ := path.Match(glob, strings.ToLower(m.ID)); ok {
					add(m, level)
				}
			}
			continue
		}
		if m, level, ok := matchThinking(avail, p); ok {
			add(m, level)
		}
	}
	return out
}
