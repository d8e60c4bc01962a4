package engine

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"time"
)

// Automatic compaction (agent-core.md §6.2, §6.5): after every agent_end
// (a post-run stage, after retry) and before every prompt, the session
// compacts when the last response shows the context over the threshold
// (reason "threshold"; then "Continue if you have next steps." resumes
// the work), or when the request failed because the context did not fit
// (reason "overflow"; the failed message leaves the context and the
// request is sent again once the summary is in place). An overflow is
// never retried by auto-retry. A model whose window can grow (window.go)
// grows it instead of compacting, until it is as large as it may be.

// overflowText is the original's list of context-overflow wordings (§6.2),
// with Ollama's own ("the input length exceeds the context length").
var (
	overflowText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)prompt is too long|input is too long for requested model|exceeds the context window|` +
			`input token count.*exceeds the maximum|maximum prompt length is \d+|reduce the length of the messages|` +
			`maximum context length is \d+ tokens|exceeds the limit of \d+|exceeds the available context size|` +
			`requested tokens?.*exceed.*context (window|length|size)|context (window|length|size).*(exceeded|overflow|too small)|` +
			`(prompt|input).*(too long|too large).*(context|n_ctx)|requested tokens?.*(exceeds?|greater than).*(n_ctx|context)|` +
			`greater than the context length|context window exceeds limit|exceeded model token limit|context[_ ]length[_ ]exceeded|` +
			`too many tokens|token limit exceeded|request_too_large|request exceeds the maximum size|payload too large|entity too large|` +
			`\b413\b.*\b(request|payload|entity)\b.*\btoo large\b|model_context_window_exceeded|` +
			`exceeds (the |maximum )?context length`)
	})
	overflowNoBody = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^4(00|13)\s*(status code)?\s*\(no body\)`) })
)

// isContextOverflow reports whether a failed response failed because the
// context did not fit: the adapter's typed error says so, or the text
// reads like it.
func isContextOverflow(msg *AssistantMessage, err error) bool {
	if msg.StopReason != StopError {
		return false
	}
	var pe *ProviderError
	if errors.As(err, &pe) && pe.Kind == ErrorContextOverflow {
		return true
	}
	return overflowText().MatchString(msg.ErrorMessage) || overflowNoBody().MatchString(msg.ErrorMessage)
}

// silentOverflow reports a response whose prompt was larger than the
// window (the server cut it without saying so).
func silentOverflow(msg *AssistantMessage, window int) bool {
	u := msg.Usage
	return window > 0 && u.Input+u.CacheRead+u.CacheWrite > int64(window)
}

// maxOverflowRecoveries bounds the compactions one run makes after
// overflow errors (a context that a summary cannot shrink must not loop).
const maxOverflowRecoveries = 3

// plugCompaction plugs automatic compaction in (features.go): on unless
// the configuration turns it off, and a post-run stage. (The compaction
// before a prompt is Prompt's own step.)
func (s *Session) plugCompaction() {
	s.compact.disabled = s.cfg.Compaction.Disabled
	s.stages = append(s.stages, s.compactionStage)
}

// compactionStage is the post-run decision of automatic compaction, after
// retry. (actor)
func (s *Session) compactionStage(r *run, aborted bool) *postRun {
	if aborted || s.compact.disabled || s.set.model == nil {
		return nil
	}
	msg := r.lastAssistant()
	if msg == nil || msg.StopReason == StopAborted {
		return nil
	}
	cur := *s.set.model
	// Only a response of the current model says anything about its window.
	if r.model.Provider != cur.Provider || r.model.ID != cur.ID {
		return nil
	}
	if msg.StopReason == StopError {
		if !OverflowRecoverable(msg, r.err, r.overflows) {
			return nil
		}
		r.overflows++
		// The failed message leaves the context (the record keeps it).
		s.rec.hide(msg)
		return s.autoCompaction("overflow", true)
	}
	if silentOverflow(msg, cur.ContextWindow) {
		if s.growWindow(contextTokens(msg.Usage)) {
			return nil // the next request has the room (window.go)
		}
		return s.autoCompaction("overflow", false)
	}
	saved := s.pruneToolOutputs()
	if reason := CompactionDue(msg, cur.ContextWindow, s.cfg.Compaction, saved); reason != "" { // decide.go
		if s.growWindow(contextTokens(msg.Usage) - saved) {
			return nil // a larger window instead of a compaction (window.go)
		}
		return s.autoCompaction(reason, false)
	}
	return nil
}

// autoCompaction is the post-run work of one automatic compaction: its
// start is emitted now (right after agent_end), the summary is made on
// the run goroutine, and the run goes on after it: the failed request
// again (willRetry), or ContinueMessage after a threshold compaction.
// (actor)
func (s *Session) autoCompaction(reason string, willRetry bool) *postRun {
	s.emit(AutoCompactionStart{Reason: reason, Action: actionContextFull})
	job := s.newCompactionJob(reason, "")
	cont := !willRetry && !s.cfg.Compaction.NoAutoContinue
	return &postRun{phase: PhaseCompacting, act: ActCompaction,
		work: func(ctx context.Context) bool {
			res, err := job.run(ctx)
			var ok bool
			s.Call(func() { ok = s.endAutoCompaction(ctx, reason, willRetry, res, err) })
			if !ok || !(willRetry || cont) {
				return false
			}
			// The original resumes 100 ms later.
			return Sleep(ctx, s.cfg.Clock, 100*time.Millisecond) == nil
		},
		resume: func(r *run) {
			if cont {
				s.emitMessage(r, &DeveloperMessage{Content: []ContentBlock{TextBlock(ContinueMessage)}, Attribution: "agent", Timestamp: s.now()})
			}
		}}
}

// promptCompaction is the check before a prompt (§6.2), tool-output
// pruning included: the last response since the latest compaction
// (aborted ones included) over the threshold,
// or failed on an overflow that was not recovered (automatic compaction
// was off then, or the model changed to a smaller window). It returns the
// reason ("" for none) and the response. (actor)
func (s *Session) promptCompaction() (string, *AssistantMessage) {
	if s.compact.disabled || s.set.model == nil {
		return "", nil
	}
	cur := *s.set.model
	t := &s.rec
	var msg *AssistantMessage
	for id := t.leaf; id != "" && msg == nil; {
		i, ok := t.index[id]
		if !ok {
			break
		}
		e := t.entries[i]
		if e.Type == EntryCompaction {
			return "", nil
		}
		id = e.ParentID
		if a, ok := e.Message.(*AssistantMessage); ok && e.Type == EntryMessage {
			msg = a
		}
	}
	if msg == nil {
		return "", nil
	}
	inContext := msg.StopReason == StopError && t.inContext(msg)
	reason, grow := PromptCompactionDue(msg, inContext, cur, s.cfg.Compaction, s.pruneToolOutputs)
	if reason == "" || (grow > 0 && s.growWindow(grow)) {
		return "", nil // nothing due, or a larger window instead (window.go)
	}
	return reason, msg
}

// PromptCompactionDue is the decision of the check before a prompt (§6.2)
// on last, the last response since the latest compaction (nil: none),
// for the current model cur: "overflow" when it failed because the
// context did not fit, came from cur and is still in the context
// (inContext: automatic compaction was off then, or the run's recoveries
// ran out), "threshold" when its prompt was larger than the window or its
// context, less what tool-output pruning saves (saved, called only then),
// is over the threshold, "" otherwise. A "threshold" comes with the
// context size a larger window would have to hold instead (grow,
// window.go). Shared with the durable session, which prunes nothing and
// whose window does not grow.
func PromptCompactionDue(last *AssistantMessage, inContext bool, cur Model, settings CompactionSettings, saved func() int64) (reason string, grow int64) {
	if last == nil {
		return "", 0
	}
	if last.StopReason == StopError {
		if last.Provider == cur.Provider && last.Model == cur.ID && isContextOverflow(last, nil) && inContext {
			return "overflow", 0
		}
		return "", 0
	}
	if silentOverflow(last, cur.ContextWindow) {
		return "threshold", contextTokens(last.Usage)
	}
	tokens := contextTokens(last.Usage) - saved()
	if _, _, threshold := settings.Budgets(cur.ContextWindow); threshold > 0 && tokens > threshold {
		return "threshold", tokens
	}
	return "", 0
}

// OverflowRecoverable is the decision of the overflow recovery after a
// run (compactionStage): a reply that failed because the context did not
// fit (err: its provider failure, typed or not) is compacted away (reason
// "overflow", willRetry) and the request sent again, unless the run has
// made maxOverflowRecoveries such compactions (overflows) already. Shared
// with the durable session.
func OverflowRecoverable(msg *AssistantMessage, err error, overflows int) bool {
	return msg != nil && isContextOverflow(msg, err) && overflows < maxOverflowRecoveries
}

// preCompaction is the work before a prompt's run: a compaction; the run
// starts whatever its outcome (an abort then aborts the run too).
// (actor)
func (s *Session) preCompaction(reason string, msg *AssistantMessage) *postRun {
	s.emit(AutoCompactionStart{Reason: reason, Action: actionContextFull})
	if reason == "overflow" {
		s.rec.hide(msg)
	}
	job := s.newCompactionJob(reason, "")
	return &postRun{phase: PhaseCompacting, act: ActCompaction,
		work: func(ctx context.Context) bool {
			res, err := job.run(ctx)
			s.Call(func() { s.endAutoCompaction(ctx, reason, false, res, err) })
			return true
		}}
}
