package durable

import (
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Compaction in the workflow, as in process (engine/compact_auto.go,
// engine/compact.go), its decisions the engine's: after a prompt's run
// (engine.CompactionDue, then continue-as-new), before a prompt
// (engine.PromptCompactionDue), after a reply that failed because the
// context did not fit (engine.OverflowRecoverable: the request is sent
// again), and by hand (the compact command, compact_manual.go). Those
// that happen inside a run compact in place, and the session continues as
// new once it is idle: the history is the point.

// compactState is the workflow's state of compaction.
type compactState struct {
	// auto is set_auto_compaction's choice (nil: the worker's settings).
	auto *bool
	// kept is how many messages after the context's summary the latest
	// compaction kept: the context has nothing new when that is all
	// there is after it (a compact command is then Already compacted).
	kept int
	// reply is the last response since the latest compaction, which the
	// check before a prompt looks at (aborted and failed ones included);
	// hidden: it left the context (a retry or an overflow recovery sends
	// its request again), as the in-process record hides it.
	reply  *engine.AssistantMessage
	hidden bool
	// overflows counts the current run's overflow recoveries.
	overflows int
	// pending: compacted in place (before a prompt, an overflow, by
	// hand): the session continues as new once idle.
	pending bool
	// running: a compaction runs (get_state's isCompacting); manual: it
	// is the compact command's (then not isStreaming).
	running, manual bool
}

// CompactionCarry is the state of compaction a run carries to the next.
type CompactionCarry struct {
	// Auto is set_auto_compaction's choice (nil: the worker's settings).
	Auto *bool `json:",omitempty"`
	Kept int   `json:",omitempty"`
	// ReplyInContext: the last response since the latest compaction is the
	// last assistant message of the carried context; Reply is one that
	// left the context.
	ReplyInContext bool            `json:",omitempty"`
	Reply          json.RawMessage `json:",omitempty"`
}

// ReasonManual is a compaction by hand (the compact command).
const ReasonManual = "manual"

// compactionsVersion guards the compactions inside a run (before a
// prompt, overflow recovery): a history recorded before them replays
// without them (workflow.GetVersion).
const compactionsVersion = "xcsh.compactions"

// restoreCarried takes over what the run before carried besides the
// context: the queued messages and the state of compaction. (Session's
// start)
func (s *session) restoreCarried(in Start) error {
	var err error
	if s.steering, err = decodeMessages(in.Steering); err == nil {
		s.followUps, err = decodeMessages(in.FollowUps)
	}
	if err != nil {
		return temporal.NewNonRetryableApplicationError("bad carried queues", "xcsh.decode", err)
	}
	if len(s.steering) == 0 {
		s.steering = nil
	}
	if len(s.followUps) == 0 {
		s.followUps = nil
	}
	c := in.Compaction
	if c == nil {
		return nil
	}
	s.cmp.auto, s.cmp.kept = c.Auto, c.Kept
	if c.ReplyInContext {
		s.cmp.reply = s.lastAssistant()
	} else if c.Reply != nil {
		if a, err := decodeAssistant(c.Reply); err == nil {
			s.cmp.reply, s.cmp.hidden = a, true
		}
	}
	return nil
}

// carryCompaction is the state of compaction the next run takes over
// (nil when there is none to carry).
func (s *session) carryCompaction() *CompactionCarry {
	c := CompactionCarry{Auto: s.cmp.auto, Kept: s.cmp.kept}
	if s.cmp.reply != nil {
		if s.cmp.hidden {
			c.Reply = encodeMessage(s.cmp.reply)
		} else {
			c.ReplyInContext = true
		}
	}
	if c.Auto == nil && c.Kept == 0 && !c.ReplyInContext && c.Reply == nil {
		return nil
	}
	return &c
}

// autoCompaction reports whether automatic compaction is on.
func (s *session) autoCompaction() bool {
	if s.cmp.auto != nil {
		return *s.cmp.auto
	}
	return !s.setup.Compaction.Disabled
}

// noteReply records a response: the check before a prompt looks at the
// last one. (add)
func (s *session) noteReply(m *engine.AssistantMessage) { s.cmp.reply, s.cmp.hidden = m, false }

// hideReply takes m out of the context (the request is sent again).
func (s *session) hideReply(m *engine.AssistantMessage) {
	for i := len(s.messages) - 1; i >= 0; i-- {
		if s.messages[i] == engine.Message(m) {
			s.messages = append(s.messages[:i:i], s.messages[i+1:]...)
			break
		}
	}
	if s.cmp.reply == m {
		s.cmp.hidden = true
	}
}

// compactionDue is the engine's decision (engine.CompactionDue) on the
// prompt's last reply: "" when the session goes on in this run.
func (s *session) compactionDue(ctx workflow.Context, last *engine.AssistantMessage) string {
	if s.autoCompaction() && last != nil && last.StopReason != engine.StopError && last.StopReason != engine.StopAborted {
		if reason := engine.CompactionDue(last, s.setup.Model.ContextWindow, s.setup.Compaction, 0); reason != "" {
			return reason
		}
	}
	// The history itself grows with every step: Temporal says when a run
	// should hand over to a new one.
	if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return "history"
	}
	return ""
}

// compact is an automatic compaction after agent_end, as in process
// (compact_auto.go): auto_compaction_start, the summary (an activity:
// engine.CompactContext), auto_compaction_end as the engine words it,
// and the context replaced by the summary and the kept messages. An
// abort stops it (the session is busy meanwhile). It reports whether the
// context was compacted.
func (s *session) compact(ctx workflow.Context, reason string) bool {
	cctx, cancel := workflow.WithCancel(ctx)
	s.busy, s.abort, s.aborted = true, cancel, false
	defer func() { s.busy, s.abort = false, nil; cancel() }()
	return s.compactIn(cctx, reason, false)
}

// compactIn is an automatic compaction under ctx (a run's, or compact's
// own): its events, the summary, and the context replaced; willRetry is
// auto_compaction_end's (the request is sent again). It reports whether
// the context was compacted.
func (s *session) compactIn(ctx workflow.Context, reason string, willRetry bool) bool {
	s.cmp.running = true
	defer func() { s.cmp.running = false }()
	s.emit(engine.AutoCompactionStart{Reason: reason, Action: engine.CompactionActionContextFull})
	out, err := s.summarise(ctx, CompactInput{Reason: reason, WillRetry: willRetry})
	if err != nil {
		aborted := ctx.Err() != nil || temporal.IsCanceledError(err)
		s.emit(engine.AutoCompactionOutcome(reason, willRetry, nil, errors.New(rootMessage(err)), aborted))
		return false
	}
	s.emit(rawEvent(out.End))
	return out.Messages != nil && s.compacted(out.End, out.Messages)
}

// summarise runs the compaction's activity on the current context.
func (s *session) summarise(ctx workflow.Context, in CompactInput) (CompactOutput, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    s.heartbeat(),
		// Like a model call, the summary has no effect but its cost.
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second},
		WaitForCancellation: true,
	})
	in.Messages, in.RetryBaseMs, in.Kept = encodeMessages(s.messages), s.in.RetryBaseMs, s.cmp.kept
	var out CompactOutput
	err := workflow.ExecuteActivity(actx, ActivityCompact, in).Get(ctx, &out)
	return out, err
}

// compacted puts the summary and the kept messages in place of the
// context, and records the compaction for an export (end: a frame whose
// "result" is the compaction's); the session continues as new once idle.
func (s *session) compacted(end []byte, raw []json.RawMessage) bool {
	msgs, err := decodeMessages(raw)
	if err != nil || len(msgs) == 0 {
		return false
	}
	s.recordCompaction(end, msgs)
	s.messages = msgs
	s.cmp.kept, s.cmp.reply, s.cmp.hidden, s.cmp.pending = len(msgs)-1, nil, false, true
	s.todosCompacted() // todo.go
	return true
}

// beforePrompt is the check before a prompt's run (engine.PromptCompactionDue
// on the last response since the latest compaction), under the run's
// context: its events come before agent_start, and the run starts
// whatever its outcome (an abort then aborts the run too), as in process
// (preCompaction).
func (s *session) beforePrompt(ctx workflow.Context) {
	s.cmp.overflows = 0
	if !s.autoCompaction() {
		return
	}
	reason, _ := engine.PromptCompactionDue(s.cmp.reply, !s.cmp.hidden, s.setup.Model, s.setup.Compaction, noPruning)
	if reason == "" || workflow.GetVersion(ctx, compactionsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	if reason == "overflow" {
		s.hideReply(s.cmp.reply)
	}
	s.compactIn(ctx, reason, false)
}

// noPruning is what tool-output pruning saves in a durable session:
// nothing (it does not prune; docs/durable.md, Limits).
func noPruning() int64 { return 0 }

// recoverOverflow is the overflow recovery after a run's failed reply
// (compactionStage): the reply leaves the context, an automatic
// compaction runs (reason "overflow", willRetry) and, when it succeeded,
// the run sends the request again after the original's 100 ms. It reports
// whether the run goes on. ctx is the run's: an abort ends it.
func (s *session) recoverOverflow(ctx workflow.Context, last *engine.AssistantMessage, perr error) bool {
	if s.aborted || !s.autoCompaction() || !engine.OverflowRecoverable(last, perr, s.cmp.overflows) {
		return false
	}
	if workflow.GetVersion(ctx, compactionsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	s.cmp.overflows++
	s.hideReply(last)
	if !s.compactIn(ctx, "overflow", true) {
		return false
	}
	return workflow.Sleep(ctx, 100*time.Millisecond) == nil
}

// rawEvent is an event the engine encoded in an activity.
type rawEvent []byte

func (e rawEvent) EventType() string            { return gjsonType(e) }
func (e rawEvent) AppendJSON(dst []byte) []byte { return append(dst, e...) }

// continueAsNew ends this run and starts the next with the context it
// carries, the event numbering, the host tools, the modes, the queued
// messages and the state of compaction; cont starts
// it with engine.ContinueMessage. It waits for the updates in progress
// (a compact command's answer) to finish first.
func (s *session) continueAsNew(ctx workflow.Context, cont bool) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	next := s.in
	setup := s.setup
	next.Setup = &setup
	next.Messages = encodeMessages(s.messages)
	next.Seq = s.seq
	next.Stats = s.stats
	next.HostTools = s.hostTools
	next.InterruptMode = s.interruptMode
	next.Continue = cont
	next.Compaction = s.carryCompaction()
	next.Steering, next.FollowUps = nil, nil
	if len(s.steering) > 0 {
		next.Steering = encodeMessages(s.steering)
	}
	if len(s.followUps) > 0 {
		next.FollowUps = encodeMessages(s.followUps)
	}
	next.TTSRInjected, next.Todos, next.TodoReminders = s.ttsrInjected, s.todos, s.todoReminders
	// A front whose cursor is in this run reads the rest of it here.
	next.PrevRunID = workflow.GetInfo(ctx).WorkflowExecution.RunID
	return workflow.NewContinueAsNewError(ctx, WorkflowName, next)
}
