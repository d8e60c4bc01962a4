package durable

import (
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// compactionDue is the engine's decision (engine.CompactionDue) on the
// prompt's last reply: "" when the session goes on in this run.
func (s *session) compactionDue(ctx workflow.Context, last *engine.AssistantMessage) string {
	if last != nil && last.StopReason != engine.StopError && last.StopReason != engine.StopAborted {
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

// continueAsNew ends this run and starts the next with the context it
// carries, the event numbering and the totals.
func (s *session) continueAsNew(ctx workflow.Context, reason string) error {
	next := s.in
	setup := s.setup
	next.Setup = &setup
	next.Messages = encodeMessages(s.messages)
	next.Seq = s.seq
	next.Stats = s.stats
	next.HostTools = s.hostTools
	next.InterruptMode = s.interruptMode
	return workflow.NewContinueAsNewError(ctx, WorkflowName, next)
}
