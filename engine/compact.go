package engine

import (
	"context"
	"errors"
)

// Compaction (agent-core.md §6): the older part of the branch is replaced
// in the model's context by a summary the current model writes. A
// compaction entry records it (summary, first kept entry, the size
// before), and the context is derived again from it: summary first, then
// the kept entries. It runs by hand (Compact, the compact command) or
// automatically after agent_end and before a prompt (compact_auto.go).
// The preparation and the model calls run off the executor, under a
// context registered as ActCompaction, which abort cancels.

// Compaction failures. Their texts are the original's wire strings.
var (
	ErrAlreadyCompacted    = errors.New("Already compacted")
	ErrNothingToCompact    = errors.New("Nothing to compact (session too small)")
	ErrCompactionCancelled = errors.New("Compaction cancelled")
)

// Compaction defaults (settings group compaction).
const (
	DefaultReserveTokens    = 16384
	DefaultKeepRecentTokens = 20000
)

// ContinueMessage is the developer message that resumes the work after a
// compaction the threshold started (compaction.autoContinue).
const ContinueMessage = "Continue if you have next steps."

// CompactionSettings configure compaction for a session.
type CompactionSettings struct {
	// Disabled turns automatic compaction off (set_auto_compaction toggles
	// it for the session); compact by hand always works.
	Disabled bool
	// ReserveTokens and KeepRecentTokens are the original's budgets (0:
	// the defaults); a small window scales both down (Budgets).
	ReserveTokens, KeepRecentTokens int
	// ThresholdTokens (> 0) or ThresholdPercent (1..99) set the threshold
	// instead of the reserve.
	ThresholdTokens, ThresholdPercent int
	// NoAutoContinue: after a compaction the threshold started, do not
	// send ContinueMessage.
	NoAutoContinue bool
}

// Budgets returns, for a context window of window tokens (0: unknown),
// the reserve kept free for the answer (also the summaries' budget), the
// tokens kept verbatim after a compaction, and the context size above
// which a compaction starts. Beyond the original, the reserve is at most
// half the window and the kept part at most a quarter, so a small local
// window (8k, 32k) compacts neither on every turn nor never; from 128k up
// the numbers are the original's (108,800 / 20,000 for 128k).
func (c CompactionSettings) Budgets(window int) (reserve, keep, threshold int64) {
	reserve, keep = int64(c.ReserveTokens), int64(c.KeepRecentTokens)
	if reserve <= 0 {
		reserve = DefaultReserveTokens
	}
	if keep <= 0 {
		keep = DefaultKeepRecentTokens
	}
	w := int64(window)
	if w <= 0 {
		return reserve, keep, 0
	}
	reserve, keep = min(reserve, w/2), min(keep, w/4)
	switch {
	case c.ThresholdTokens > 0:
		threshold = min(max(int64(c.ThresholdTokens), 1), w-1)
	case c.ThresholdPercent > 0:
		threshold = w * int64(min(max(c.ThresholdPercent, 1), 99)) / 100
	default:
		threshold = w - max(w*15/100, reserve)
	}
	return reserve, keep, threshold
}

// CompactionResult is the outcome of a compaction: the compact command's
// answer and auto_compaction_end's result (§6.5).
type CompactionResult struct {
	Summary          string
	ShortSummary     string // omitted when ""
	FirstKeptEntryID string
	TokensBefore     int64
	Details          []byte // raw JSON ({readFiles, modifiedFiles}); omitted when nil
	PreserveData     []byte // raw JSON; {} unless a hook keeps data
	fromExtension    bool
}

// AppendJSON appends the result object in the original's key order.
func (r *CompactionResult) AppendJSON(dst []byte) []byte {
	dst = AppendJSONString(append(dst, `{"summary":`...), r.Summary)
	if r.ShortSummary != "" {
		dst = appendStringField(dst, "shortSummary", r.ShortSummary)
	}
	dst = appendStringField(dst, "firstKeptEntryId", r.FirstKeptEntryID)
	dst = appendIntField(dst, "tokensBefore", r.TokensBefore)
	if r.Details != nil {
		dst = appendRawField(dst, "details", r.Details)
	}
	if r.PreserveData != nil {
		dst = appendRawField(dst, "preserveData", r.PreserveData)
	}
	return append(dst, '}')
}

// MarshalJSON implements json.Marshaler.
func (r *CompactionResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// CompactionRequest is what a compaction hook sees before the summary is
// made: why, the host's instructions, what will be summarised and kept,
// and the branch (root first; entries must not be modified).
type CompactionRequest struct {
	Reason             string // "manual", "threshold" or "overflow"
	CustomInstructions string
	Preparation        *CompactionPreparation
	Branch             []*Entry
}

// CompactionVerdict is a hook's answer: cancel the compaction, make the
// summary itself (the entry is then marked fromExtension), or add lines
// of context to the summary prompt (<additional-context>). The zero value
// lets the compaction go on unchanged.
type CompactionVerdict struct {
	Cancel            bool
	Result            *CompactionResult // Summary and ShortSummary are used; the rest is filled in
	AdditionalContext []string
}

// CompactionHook is where extensions plug into compaction (their
// session_before_compact): it runs on the compaction's goroutine, after
// the preparation and before any model call, under the compaction's
// context (an abort cancels it). Hooks run in the order they were added;
// the first that cancels or gives a result decides.
type CompactionHook func(ctx context.Context, req *CompactionRequest) CompactionVerdict

// errHookCancelled: a hook cancelled the compaction.
var errHookCancelled = errors.New("compaction cancelled by an extension")

// AddCompactionHook adds a hook that every later compaction consults.
// (actor)
func (s *Session) AddCompactionHook(h CompactionHook) {
	s.compact.hooks = append(append([]CompactionHook(nil), s.compact.hooks...), h)
}

// compactState is the actor state of compaction.
type compactState struct {
	disabled bool
	hooks    []CompactionHook // replaced, never changed in place
}

// SetAutoCompaction turns automatic compaction on or off for the session
// (never written to the user's settings). (actor)
func (s *Session) SetAutoCompaction(enabled bool) { s.compact.disabled = !enabled }

// compactionJob is one compaction's work, snapshotted on the executor
// and run off it.
type compactionJob struct {
	summaryJob
	branch []*Entry
	keep   int64
	reason string
	hooks  []CompactionHook
}

// newCompactionJob snapshots what a compaction of the current branch with
// the current model needs. The session has a model. (actor)
func (s *Session) newCompactionJob(reason, custom string) *compactionJob {
	m := *s.set.model
	reserve, keep, _ := s.cfg.Compaction.Budgets(m.ContextWindow)
	var level ThinkingLevel
	if m.Reasoning {
		if level = s.cfg.Thinking.Clamp(m, ThinkingHigh); level == ThinkingOff {
			level = ""
		}
	}
	return &compactionJob{
		summaryJob: summaryJob{provider: s.cfg.Provider, clock: s.cfg.Clock, retryBase: s.cfg.RetryBaseDelay,
			model: m, level: level, reserve: reserve, custom: custom},
		branch: s.rec.branch(s.rec.leaf),
		keep:   keep,
		reason: reason,
		hooks:  s.compact.hooks,
	}
}

// run prepares the compaction, consults the hooks and makes the summary.
// Off the executor.
func (j *compactionJob) run(ctx context.Context) (*CompactionResult, error) {
	prep, err := prepareCompaction(j.branch, j.keep)
	if err != nil {
		return nil, err
	}
	req := &CompactionRequest{Reason: j.reason, CustomInstructions: j.custom, Preparation: prep, Branch: j.branch}
	details := detailsJSON(prep.ReadFiles, prep.ModifiedFiles)
	for _, h := range j.hooks {
		v := h(ctx, req)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if v.Cancel {
			return nil, errHookCancelled
		}
		if v.Result != nil {
			r := *v.Result
			r.FirstKeptEntryID, r.TokensBefore, r.fromExtension = prep.FirstKeptEntryID, prep.TokensBefore, true
			if r.PreserveData == nil {
				r.PreserveData = []byte("{}")
			}
			return &r, nil
		}
		j.extra = append(j.extra, v.AdditionalContext...)
	}
	summary, short, err := j.summarize(ctx, prep)
	if err != nil {
		return nil, err
	}
	return &CompactionResult{Summary: summary, ShortSummary: short, FirstKeptEntryID: prep.FirstKeptEntryID,
		TokensBefore: prep.TokensBefore, Details: details, PreserveData: []byte("{}")}, nil
}

func detailsJSON(read, modified []string) []byte {
	if read == nil {
		read = []string{}
	}
	if modified == nil {
		modified = []string{}
	}
	b, _ := MarshalJSON(struct {
		ReadFiles     []string `json:"readFiles"`
		ModifiedFiles []string `json:"modifiedFiles"`
	}{read, modified})
	return b
}

// applyCompaction records the compaction entry (the context is derived
// again from it) and restores the todo list from the branch, as the
// original re-syncs it. (actor)
func (s *Session) applyCompaction(r *CompactionResult) {
	fromExt := r.fromExtension
	s.appendEntry(&Entry{Type: EntryCompaction, Compaction: &Compaction{
		Summary: r.Summary, ShortSummary: r.ShortSummary, FirstKeptEntryID: r.FirstKeptEntryID,
		TokensBefore: r.TokensBefore, Details: r.Details, FromExtension: &fromExt, PreserveData: r.PreserveData,
	}})
	s.restoreTodos()
}

// Compact summarises the branch by hand (the compact command) with the
// current model, customInstructions adding a focus to the summary: a
// running prompt is aborted first, then the session stays busy
// (PhaseCompacting) until done reports the result. No auto_compaction
// events are sent. Errors: ErrNoModel, a *NoAPIKeyError,
// ErrAlreadyCompacted, ErrNothingToCompact, ErrCompactionCancelled (an
// abort, or a hook), or the model's failure. (actor)
func (s *Session) Compact(customInstructions string, done func(*CompactionResult, error)) {
	s.Abort(func() {
		if s.set.model == nil {
			done(nil, ErrNoModel)
			return
		}
		if s.cfg.Models != nil && !s.cfg.Models.HasKey(*s.set.model) {
			done(nil, &NoAPIKeyError{Provider: s.set.model.Provider})
			return
		}
		job := s.newCompactionJob("manual", customInstructions)
		s.phase = PhaseCompacting
		ctx, cancel := context.WithCancelCause(context.Background())
		remove := s.acts.add(ActCompaction, cancel)
		var res *CompactionResult
		var err error
		s.background(func() { res, err = job.run(ctx) }, func() {
			remove()
			if ctx.Err() != nil || errors.Is(err, errHookCancelled) {
				res, err = nil, ErrCompactionCancelled
			}
			cancel(nil)
			if err == nil {
				s.applyCompaction(res)
			}
			done(res, err)
			s.goIdle()
		})
	})
}

// AutoCompactionStart opens an automatic compaction.
type AutoCompactionStart struct {
	Reason string // "threshold" or "overflow"
	Action string // "context-full"
}

// AutoCompactionEnd closes one: its result (nil when it failed, was
// aborted or skipped), whether the failed request is retried, and why it
// did not succeed.
type AutoCompactionEnd struct {
	Action       string
	Result       *CompactionResult // omitted when nil
	Aborted      bool
	WillRetry    bool
	ErrorMessage string // omitted when ""
	Skipped      bool   // omitted when false
}

// EventType implements Event.
func (AutoCompactionStart) EventType() string { return "auto_compaction_start" }

// EventType implements Event.
func (AutoCompactionEnd) EventType() string { return "auto_compaction_end" }

// AppendJSON implements Event.
func (e AutoCompactionStart) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "auto_compaction_start"), "reason", e.Reason)
	return append(appendStringField(dst, "action", e.Action), '}')
}

// AppendJSON implements Event.
func (e AutoCompactionEnd) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "auto_compaction_end"), "action", e.Action)
	if e.Result != nil {
		dst = e.Result.AppendJSON(appendKey(dst, "result"))
	}
	dst = appendBoolField(dst, "aborted", e.Aborted)
	dst = appendBoolField(dst, "willRetry", e.WillRetry)
	if e.ErrorMessage != "" {
		dst = appendStringField(dst, "errorMessage", e.ErrorMessage)
	}
	if e.Skipped {
		dst = appendBoolField(dst, "skipped", true)
	}
	return append(dst, '}')
}

// actionContextFull is the action of every automatic compaction here (the
// handoff strategy is not implemented).
const actionContextFull = "context-full"

// endAutoCompaction applies an automatic compaction's outcome and emits
// its auto_compaction_end; it reports whether it succeeded. (actor)
func (s *Session) endAutoCompaction(ctx context.Context, reason string, willRetry bool, res *CompactionResult, err error) bool {
	end := AutoCompactionOutcome(reason, willRetry, res, err, ctx.Err() != nil)
	if end.Result != nil {
		s.applyCompaction(res)
	}
	s.emit(end)
	return end.Result != nil
}

// AutoCompactionOutcome is the auto_compaction_end of an automatic
// compaction that ended with res or err (aborted: its context was
// cancelled), shared with the durable session.
func AutoCompactionOutcome(reason string, willRetry bool, res *CompactionResult, err error, aborted bool) AutoCompactionEnd {
	end := AutoCompactionEnd{Action: actionContextFull}
	switch {
	case aborted || errors.Is(err, errHookCancelled):
		end.Aborted = true
	case errors.Is(err, ErrNothingToCompact), errors.Is(err, ErrAlreadyCompacted):
		end.Skipped = true
	case err != nil:
		prefix := "Auto-compaction failed: "
		if reason == "overflow" {
			prefix = "Context overflow recovery failed: "
		}
		end.ErrorMessage = prefix + err.Error()
	default:
		end.Result, end.WillRetry = res, willRetry
	}
	return end
}
