package models

import (
	"reflect"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestCatalogSanity(t *testing.T) {
	seen := map[modelKey]bool{}
	for _, m := range catalog {
		t.Run(m.Provider+"/"+m.ID, func(t *testing.T) {
			if seen[keyOf(m)] {
				t.Fatalf("duplicate id")
			}
			seen[keyOf(m)] = true
			if m.ID == "" || m.Name == "" || m.API == "" || m.Provider == "" || m.BaseURL == "" {
				t.Errorf("empty identity field: %+v", m)
			}
			if len(m.Input) == 0 {
				t.Errorf("no input kinds")
			}
			for _, in := range m.Input {
				if in != "text" && in != "image" {
					t.Errorf("input kind %q", in)
				}
			}
			if m.ContextWindow <= 0 || m.MaxTokens <= 0 || m.MaxTokens > m.ContextWindow {
				t.Errorf("contextWindow %d maxTokens %d", m.ContextWindow, m.MaxTokens)
			}
			c := m.Cost
			if c.Input <= 0 || c.Output <= 0 || c.CacheRead < 0 || c.CacheWrite < 0 || c.CacheRead > c.Input {
				t.Errorf("cost %+v", c)
			}
			if m.Reasoning != (m.Thinking != nil) {
				t.Fatalf("reasoning %v with thinking %v", m.Reasoning, m.Thinking)
			}
			if m.Thinking != nil {
				lo, hi := effortRank(m.Thinking.MinLevel), effortRank(m.Thinking.MaxLevel)
				if lo < 0 || hi < 0 || lo > hi || !contains(thinkingModes, m.Thinking.Mode) {
					t.Errorf("thinking %+v", *m.Thinking)
				}
				// The table spells out what inference would give, except
				// where a comment says why not.
				if m.ID != "o4-mini" && !reflect.DeepEqual(m.Thinking, inferThinking(m)) {
					t.Errorf("thinking %+v, inferred %+v", *m.Thinking, *inferThinking(m))
				}
			}
			if len(m.Headers) != 0 || m.Compat != nil {
				t.Errorf("built-in model carries headers or compat")
			}
		})
	}
}

func TestCatalogInRegistry(t *testing.T) {
	r, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := r.All()
	if len(all) != len(catalog) {
		t.Fatalf("All: %d models, catalog has %d", len(all), len(catalog))
	}
	for i := range all {
		if !reflect.DeepEqual(all[i], catalog[i]) {
			t.Errorf("registry changed %s:\n got %+v\nwant %+v", catalog[i].ID, all[i], catalog[i])
		}
	}
	if got := r.Available(); len(got) != 0 {
		t.Errorf("Available without keys: %d models", len(got))
	}
	if r.Available() == nil {
		t.Error("Available must be [] not nil (it is marshalled)")
	}
	m, ok := r.Find("anthropic", "claude-sonnet-4-5")
	if !ok || m.Thinking == nil || *m.Thinking != (engine.ModelThinking{MinLevel: "minimal", MaxLevel: "xhigh", Mode: "anthropic-budget-effort"}) {
		t.Errorf("Find claude-sonnet-4-5: %v %+v", ok, m)
	}
}
