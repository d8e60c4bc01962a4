package engine

import (
	"context"
	"fmt"
	"time"
)

// CompactionActionContextFull is the action of an automatic compaction's
// auto_compaction_start and _end.
const CompactionActionContextFull = actionContextFull

// ContextCompaction is what CompactContext needs to summarise a context
// that no Session holds (the durable session's, in an activity): the
// model that writes the summary, its provider, the settings' budgets,
// and the clock and first wait of the summary calls' own retries.
type ContextCompaction struct {
	Provider  Provider
	Model     Model
	Settings  CompactionSettings
	Clock     Clock
	RetryBase time.Duration
	// CustomInstructions add a focus to the summary (the compact
	// command's customInstructions).
	CustomInstructions string
	// Kept is, for a context that starts with an earlier compaction's
	// summary, how many of the messages after it that compaction kept;
	// the rest came after it. With none after those, the context is
	// already compacted (ErrAlreadyCompacted), as a branch that ends in
	// its compaction entry is.
	Kept int
}

// CompactContext is a compaction of a context, automatic (reason
// "threshold" or "overflow") or by hand ("manual", with c's
// CustomInstructions): the preparation, the summary calls and the result
// of Compact, and the context that follows, as a Session derives it from
// the compaction entry: the summary message (at the clock's time), then
// the kept messages. A context that starts with the summary of an earlier
// compaction has that summary merged into the new one.
func CompactContext(ctx context.Context, c ContextCompaction, msgs []Message, reason string) (*CompactionResult, []Message, error) {
	var branch []*Entry
	var prev *Entry
	if len(msgs) > 0 {
		if sum, ok := msgs[0].(*CompactionSummaryMessage); ok {
			// The earlier kept messages are summarised again, with the
			// earlier summary; the compaction's entry follows them, as on a
			// session's branch.
			prev = &Entry{Type: EntryCompaction, ID: "c0000000", Timestamp: sum.Timestamp,
				Compaction: &Compaction{Summary: sum.Summary, ShortSummary: sum.ShortSummary, TokensBefore: sum.TokensBefore}}
			msgs = msgs[1:]
		}
	}
	if prev != nil && (c.Kept <= 0 || c.Kept > len(msgs)) {
		branch = append(branch, prev)
	}
	for i, m := range msgs {
		branch = append(branch, &Entry{Type: EntryMessage, ID: fmt.Sprintf("%08x", i+1), Message: m})
		if prev != nil && i+1 == c.Kept {
			prev.Compaction.FirstKeptEntryID = branch[0].ID
			branch = append(branch, prev)
		}
	}
	m := c.Model
	reserve, keep, _ := c.Settings.Budgets(m.ContextWindow)
	var level ThinkingLevel
	if m.Reasoning { // as newCompactionJob, with the default policy
		if level = ClampThinking(m, ThinkingHigh); level == ThinkingOff {
			level = ""
		}
	}
	clock := c.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	retryBase := c.RetryBase
	if retryBase <= 0 {
		retryBase = DefaultRetryBase
	}
	job := &compactionJob{
		summaryJob: summaryJob{provider: c.Provider, clock: clock, retryBase: retryBase, model: m, level: level, reserve: reserve, custom: c.CustomInstructions},
		branch:     branch,
		keep:       keep,
		reason:     reason,
	}
	res, err := job.run(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := []Message{&CompactionSummaryMessage{Summary: res.Summary, ShortSummary: res.ShortSummary,
		TokensBefore: res.TokensBefore, Timestamp: clock.NowMillis()}}
	kept := false
	for _, e := range branch {
		kept = kept || e.ID == res.FirstKeptEntryID
		if kept && e.Type == EntryMessage {
			out = append(out, e.Message)
		}
	}
	return res, out, nil
}
