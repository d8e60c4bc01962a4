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
}

// CompactContext is an automatic compaction (reason "threshold" or
// "overflow") of a context: the preparation, the summary calls and the
// result of Compact, and the context that follows, as a Session derives
// it from the compaction entry: the summary message (at the clock's
// time), then the kept messages. A context that starts with the summary
// of an earlier compaction has that summary merged into the new one.
func CompactContext(ctx context.Context, c ContextCompaction, msgs []Message, reason string) (*CompactionResult, []Message, error) {
	var branch []*Entry
	if len(msgs) > 0 {
		if prev, ok := msgs[0].(*CompactionSummaryMessage); ok {
			// The earlier kept messages follow it: all of them are
			// summarised again, with the earlier summary.
			branch = append(branch, &Entry{Type: EntryCompaction, ID: "c0000000", Timestamp: prev.Timestamp,
				Compaction: &Compaction{Summary: prev.Summary, ShortSummary: prev.ShortSummary, TokensBefore: prev.TokensBefore}})
			msgs = msgs[1:]
		}
	}
	for i, m := range msgs {
		branch = append(branch, &Entry{Type: EntryMessage, ID: fmt.Sprintf("%08x", i+1), Message: m})
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
		summaryJob: summaryJob{provider: c.Provider, clock: clock, retryBase: retryBase, model: m, level: level, reserve: reserve},
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
