package engine

import (
	"encoding/json"
	"slices"
)

// Compaction preparation (agent-core.md §6.3): which part of the branch a
// compaction summarises and which it keeps. It reads a snapshot of the
// branch (entries are immutable once recorded) and touches no session
// state, so it runs off the executor.

// CompactionPreparation is what a compaction summarises and keeps. Hooks
// (extensions, CompactionHook) see it before the summary is made.
type CompactionPreparation struct {
	// FirstKeptEntryID is the first entry kept verbatim after the summary.
	FirstKeptEntryID string
	// ToSummarize are the messages the summary replaces (before the cut,
	// or before the start of a split turn); TurnPrefix is the first part
	// of a turn the cut splits (summarised apart, so the kept part of the
	// turn makes sense); Recent are the messages kept.
	ToSummarize, TurnPrefix, Recent []Message
	// TokensBefore is the context size the last good response reported.
	TokensBefore int64
	// PreviousSummary is the summary of the compaction before, merged into
	// the new one ("" for the first).
	PreviousSummary string
	// ReadFiles and ModifiedFiles are the paths the summarised part read
	// and changed (read, write, edit calls), with the previous
	// compaction's; sorted, a file both read and changed counted as
	// changed.
	ReadFiles, ModifiedFiles []string
	// Ratio is how many real tokens one estimated token made in the last
	// request (at least 1): chunk sizes are estimated with it.
	Ratio float64
}

// estimateTokens is the original's chars/4 estimate of what a message
// adds to a prompt (rounded up). Lengths are bytes, not UTF-16 units: the
// same for ASCII, a little more for other text, which only moves a cut
// point.
func estimateTokens(m Message) int64 {
	chars := 0
	blocks := func(bs []ContentBlock, withCalls bool) {
		for i := range bs {
			b := &bs[i]
			switch b.Type {
			case BlockText:
				chars += len(b.Text)
			case BlockThinking:
				if withCalls {
					chars += len(b.Thinking)
				}
			case BlockToolCall:
				if withCalls {
					chars += len(b.Name) + len(b.Arguments)
				}
			case BlockImage:
				if !withCalls {
					chars += 4800
				}
			}
		}
	}
	switch v := m.(type) {
	case *UserMessage:
		blocks(v.Content, false)
	case *AssistantMessage:
		blocks(v.Content, true)
	case *ToolResultMessage:
		blocks(v.Content, false)
	case *CustomMessage:
		blocks(v.Content, false)
	case *DeveloperMessage:
		blocks(v.Content, false)
	case *BashExecutionMessage:
		chars = len(v.Command) + len(v.Output)
	case *BranchSummaryMessage:
		chars = len(v.Summary)
	case *CompactionSummaryMessage:
		chars = len(v.Summary)
	}
	return int64((chars + 3) / 4)
}

// contextTokens is the context size a response's usage reports.
func contextTokens(u Usage) int64 {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// promptTokens is the size of the prompt a response's usage reports.
func promptTokens(u Usage) int64 {
	if n := u.Input + u.CacheRead + u.CacheWrite; n > 0 {
		return n
	}
	return u.TotalTokens
}

// goodAssistant is an assistant message whose usage measures the context:
// neither aborted nor failed.
func goodAssistant(m Message) (*AssistantMessage, bool) {
	a, ok := m.(*AssistantMessage)
	return a, ok && a.StopReason != StopAborted && a.StopReason != StopError
}

// cutPoint reports whether a compaction may keep the branch from e on:
// never at a tool result (it would lose its call).
func cutPoint(e *Entry) bool {
	switch e.Type {
	case EntryCustomMessage, EntryBranchSummary:
		return true
	case EntryMessage:
		switch e.Message.(type) {
		case *UserMessage, *AssistantMessage, *BashExecutionMessage, *CustomMessage,
			*BranchSummaryMessage, *CompactionSummaryMessage:
			return true
		}
	}
	return false
}

// turnStart reports whether e opens a turn: a user message, a user's bash
// command, an injected message or a branch summary.
func turnStart(e *Entry) bool {
	switch e.Type {
	case EntryCustomMessage, EntryBranchSummary:
		return true
	case EntryMessage:
		switch e.Message.(type) {
		case *UserMessage, *BashExecutionMessage:
			return true
		}
	}
	return false
}

// prepareCompaction chooses what a compaction of branch (root first)
// summarises, keeping about keep estimated tokens of the most recent
// messages verbatim (fewer when real usage shows the estimate is low).
func prepareCompaction(branch []*Entry, keep int64) (*CompactionPreparation, error) {
	if len(branch) == 0 {
		return nil, ErrNothingToCompact
	}
	if branch[len(branch)-1].Type == EntryCompaction {
		return nil, ErrAlreadyCompacted
	}
	prep := &CompactionPreparation{Ratio: 1}
	// The part of the branch in the context: from the previous
	// compaction's first kept entry (the kept messages are summarised
	// now, or they would be lost), else from the root.
	start := 0
	var prev *Compaction
	for i := len(branch) - 1; i >= 0; i-- {
		if branch[i].Type != EntryCompaction {
			continue
		}
		prev = branch[i].Compaction
		start = i + 1
		if prev != nil {
			prep.PreviousSummary = prev.Summary
			for j := i - 1; j >= 0; j-- {
				if branch[j].ID == prev.FirstKeptEntryID {
					start = j
					break
				}
			}
		}
		break
	}
	part := branch[start:]
	msg := func(e *Entry) Message {
		if e.Type == EntryCompaction {
			return nil
		}
		return contextMessage(e)
	}

	// The last good response measures the context, and calibrates the
	// estimate against real tokens.
	for i := len(part) - 1; i >= 0; i-- {
		a, ok := goodAssistant(msg(part[i]))
		if !ok || contextTokens(a.Usage) == 0 {
			continue
		}
		prep.TokensBefore = contextTokens(a.Usage)
		var est int64
		if prep.PreviousSummary != "" {
			est += int64((len(prep.PreviousSummary) + 3) / 4)
		}
		for _, e := range part[:i] {
			if m := msg(e); m != nil {
				est += estimateTokens(m)
			}
		}
		if p := promptTokens(a.Usage); est > 0 && p > est {
			prep.Ratio = float64(p) / float64(est)
		}
		break
	}
	budget := max(int64(float64(keep)/prep.Ratio), 1)

	// The cut: walking back, the first cut point at or after the entry
	// where the kept part reaches the budget; with no such point, the
	// first cut point (everything is kept).
	cut := -1
	var acc int64
	for i := len(part) - 1; i >= 0; i-- {
		m := msg(part[i])
		if m == nil {
			continue
		}
		acc += estimateTokens(m)
		if acc >= budget {
			for j := i; j < len(part); j++ {
				if cutPoint(part[j]) {
					cut = j
					break
				}
			}
			break
		}
	}
	if cut < 0 {
		for j := range part {
			if cutPoint(part[j]) {
				cut = j
				break
			}
		}
	}
	if cut < 0 {
		return nil, ErrNothingToCompact
	}
	// A cut inside a turn: the turn's first part is summarised apart.
	split := !turnStart(part[cut])
	// Entries that are not messages (model or level changes, labels) just
	// before the cut stay with what is kept.
	for cut > 0 && part[cut-1].Type != EntryMessage && part[cut-1].Type != EntryCompaction && msg(part[cut-1]) == nil {
		cut--
	}
	prep.FirstKeptEntryID = part[cut].ID
	end := cut
	if split {
		for j := cut - 1; j >= 0; j-- {
			if turnStart(part[j]) {
				end = j
				break
			}
		}
	}
	collect := func(es []*Entry) []Message {
		var out []Message
		for _, e := range es {
			if m := msg(e); m != nil {
				out = append(out, m)
			}
		}
		return out
	}
	prep.ToSummarize = collect(part[:end])
	if end < cut {
		prep.TurnPrefix = collect(part[end:cut])
	}
	prep.Recent = collect(part[cut:])
	if len(prep.ToSummarize) == 0 && len(prep.TurnPrefix) == 0 {
		return nil, ErrNothingToCompact
	}
	prep.ReadFiles, prep.ModifiedFiles = fileOps(prev, prep.ToSummarize, prep.TurnPrefix)
	return prep, nil
}

// fileOps lists the paths the messages' read, write and edit calls name,
// with the lists of the previous compaction (unless an extension made it).
func fileOps(prev *Compaction, lists ...[]Message) (read, modified []string) {
	r, w := map[string]bool{}, map[string]bool{}
	if prev != nil && (prev.FromExtension == nil || !*prev.FromExtension) && prev.Details != nil {
		var d struct {
			ReadFiles     []string `json:"readFiles"`
			ModifiedFiles []string `json:"modifiedFiles"`
		}
		if json.Unmarshal(prev.Details, &d) == nil {
			for _, p := range d.ReadFiles {
				r[p] = true
			}
			for _, p := range d.ModifiedFiles {
				w[p] = true
			}
		}
	}
	for _, l := range lists {
		for _, m := range l {
			a, ok := m.(*AssistantMessage)
			if !ok {
				continue
			}
			for _, b := range a.Content {
				if b.Type != BlockToolCall || (b.Name != "read" && b.Name != "write" && b.Name != "edit") {
					continue
				}
				for _, p := range callPaths(b) {
					if b.Name == "read" {
						r[p] = true
					} else {
						w[p] = true
					}
				}
			}
		}
	}
	for p := range r {
		if !w[p] {
			read = append(read, p)
		}
	}
	for p := range w {
		modified = append(modified, p)
	}
	slices.Sort(read)
	slices.Sort(modified)
	return read, modified
}

// callPaths returns the path a tool call names ("path"), or the paths of
// edit's entries.
func callPaths(b ContentBlock) []string {
	var a struct {
		Path  string `json:"path"`
		Edits []struct {
			Path string `json:"path"`
		} `json:"edits"`
	}
	if json.Unmarshal(b.Arguments, &a) != nil {
		return nil
	}
	var out []string
	if a.Path != "" {
		out = append(out, a.Path)
	}
	for _, e := range a.Edits {
		if e.Path != "" && e.Path != a.Path {
			out = append(out, e.Path)
		}
	}
	return out
}
