package engine

import (
	"fmt"
)

// Tool-output pruning (agent-core.md §6.6), before the threshold check
// after agent_end: walking the tool results from the newest, the first
// 40,000 estimated tokens of output are kept; past them, results of tools
// other than read and skill are emptied (their text becomes a notice
// saying how much was dropped, and prunedAt is set), when that saves at
// least 20,000 tokens in all. The recorded entries are replaced (a store
// that can rewrite them does so off the executor) and the context is
// derived again.

const (
	pruneProtectTokens = 40000
	pruneMinSavings    = 20000
)

// pruneKeepTools are never pruned: their output is what the model works
// from.
var pruneKeepTools = map[string]bool{"read": true, "skill": true}

// EntryRewriter is a Store that can replace recorded entries (by id) with
// new versions of them; pruning uses it. Rewrite is called off the
// executor, concurrently with Append.
type EntryRewriter interface {
	Rewrite(entries []*Entry) error
}

// pruneToolOutputs prunes the branch's old tool output and returns the
// estimated tokens saved (0 when nothing was pruned). (actor)
func (s *Session) pruneToolOutputs() int64 {
	t := &s.rec
	var total, savings int64
	var cands []int
	for id := t.leaf; id != ""; {
		i, ok := t.index[id]
		if !ok {
			break
		}
		e := t.entries[i]
		if e.Type == EntryCompaction {
			break
		}
		id = e.ParentID
		tr, ok := e.Message.(*ToolResultMessage)
		if e.Type != EntryMessage || !ok || t.hidden[e.ID] {
			continue
		}
		est := estimateTokens(tr)
		total += est
		if total <= pruneProtectTokens || tr.PrunedAt != 0 || pruneKeepTools[tr.ToolName] {
			continue
		}
		cands = append(cands, i)
		savings += est
	}
	if savings < pruneMinSavings {
		return 0
	}
	now := s.now()
	replaced := make([]*Entry, 0, len(cands))
	for _, i := range cands {
		e := *t.entries[i]
		tr := *e.Message.(*ToolResultMessage)
		tr.Content = []ContentBlock{TextBlock(fmt.Sprintf("[Output truncated - %d tokens]", estimateTokens(&tr)))}
		tr.PrunedAt = now
		e.Message = &tr
		// A new entry, not a change of the old one: snapshots taken
		// before (an export, a compaction under way) keep what they saw.
		t.entries[i] = &e
		replaced = append(replaced, &e)
	}
	t.context = t.deriveContext(t.branch(t.leaf))
	if rw, ok := t.store.(EntryRewriter); ok {
		var err error
		s.background(func() { err = rw.Rewrite(replaced) }, func() {
			if err != nil {
				fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
			}
		})
	}
	return savings
}

// Rewrite implements EntryRewriter.
func (m *MemoryStore) Rewrite(entries []*Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	byID := make(map[string]*Entry, len(entries))
	for _, e := range entries {
		byID[e.ID] = e
	}
	for i, e := range m.entries {
		if n, ok := byID[e.ID]; ok {
			m.entries[i] = n
		}
	}
	return nil
}
