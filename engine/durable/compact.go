package durable

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// compactionDue is the engine's decision (engine.CompactionDue) on the
// prompt's last reply: "" when the session goes on in this run.
func (s *session) compactionDue(ctx workflow.Context, last *engine.AssistantMessage) string {
	if !s.setup.Compaction.Disabled && last != nil && last.StopReason != engine.StopError && last.StopReason != engine.StopAborted {
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
	s.emit(engine.AutoCompactionStart{Reason: reason, Action: engine.CompactionActionContextFull})
	actx := workflow.WithActivityOptions(cctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    s.heartbeat(),
		// Like a model call, the summary has no effect but its cost.
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second},
		WaitForCancellation: true,
	})
	var out CompactOutput
	err := workflow.ExecuteActivity(actx, ActivityCompact, CompactInput{Messages: encodeMessages(s.messages), Reason: reason,
		RetryBaseMs: s.in.RetryBaseMs}).Get(cctx, &out)
	if err != nil {
		aborted := cctx.Err() != nil || temporal.IsCanceledError(err)
		s.emit(engine.AutoCompactionOutcome(reason, false, nil, errors.New(rootMessage(err)), aborted))
		return false
	}
	s.emit(rawEvent(out.End))
	if out.Messages == nil {
		return false
	}
	msgs, err := decodeMessages(out.Messages)
	if err != nil {
		return false
	}
	s.recordCompaction(out.End, msgs)
	s.messages = msgs
	return true
}

// rawEvent is an event the engine encoded in an activity.
type rawEvent []byte

func (e rawEvent) EventType() string            { return gjsonType(e) }
func (e rawEvent) AppendJSON(dst []byte) []byte { return append(dst, e...) }

// continueAsNew ends this run and starts the next with the context it
// carries, the event numbering, the host tools and the modes; cont starts
// it with engine.ContinueMessage.
func (s *session) continueAsNew(ctx workflow.Context, cont bool) error {
	next := s.in
	setup := s.setup
	next.Setup = &setup
	next.Messages = encodeMessages(s.messages)
	next.Seq = s.seq
	next.Stats = s.stats
	next.HostTools = s.hostTools
	next.InterruptMode = s.interruptMode
	next.Continue = cont
	// A front whose cursor is in this run reads the rest of it here.
	next.PrevRunID = workflow.GetInfo(ctx).WorkflowExecution.RunID
	return workflow.NewContinueAsNewError(ctx, WorkflowName, next)
}
