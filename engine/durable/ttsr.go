package durable

import (
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// TTSR in the workflow (engine/ttsr_watch.go in process): the model-call
// activity watches the stream with the worker's rules and cuts the call
// on a match (callwatch.go); the workflow emits ttsr_triggered after the
// call's deltas, and after agent_end does what the session's stage does
// (engine.TTSRResume): the cut message leaves the context, the rules are
// injected as the hidden ttsr-injection message (engine.RuleInjection)
// and the run starts again. A rule fires once per branch: the names
// injected are workflow state, carried across continue-as-new.

// Change ids of workflow.GetVersion: histories recorded before these
// behaviours replay as they ran.
const (
	versionTTSR         = "xcsh.ttsr"
	versionTodoReminder = "xcsh.todo-reminder"
	versionTodoClear    = "xcsh.todo-auto-clear"
)

// ttsrCall is what the rules did during the run's last model call.
type ttsrCall struct {
	cut      []*engine.Rule // interrupting rules that matched: the call was cut
	deferred []*engine.Rule // rules that matched without interrupting
	msg      *engine.AssistantMessage
}

// noteRules takes a model call's report of its rules; a cut is announced
// here, after the call's deltas and before its message_end, as in
// process.
func (s *session) noteRules(out ModelOutput, msg *engine.AssistantMessage) {
	s.ttsrLast = ttsrCall{cut: rulePtrs(out.Rules), deferred: rulePtrs(out.Deferred), msg: msg}
	if len(s.ttsrLast.cut) > 0 {
		s.emit(engine.TTSRTriggered{Rules: s.ttsrLast.cut})
	}
}

func rulePtrs(rules []engine.Rule) []*engine.Rule {
	if len(rules) == 0 {
		return nil
	}
	out := make([]*engine.Rule, len(rules))
	for i := range rules {
		out[i] = &rules[i]
	}
	return out
}

// afterRun is the post-run decision after retry (the session's stages in
// order, engine/features.go): TTSR, the overflow recovery (compact.go),
// then, unless compaction is due (the main loop compacts), the todo
// reminder. It reports whether the run starts again, and what it begins
// with after its agent_start and turn_start (nil: nothing more). ctx is
// the workflow's, rctx the run's (an abort cancels it).
func (s *session) afterRun(ctx, rctx workflow.Context, last *engine.AssistantMessage, perr error) (func(), bool) {
	if resume := s.ttsrStage(ctx, rctx, last); resume != nil || rctx.Err() != nil {
		return resume, resume != nil
	}
	if s.recoverOverflow(rctx, last, perr) {
		return nil, true
	}
	if reason := s.compactionDue(ctx, last); reason != "" && reason != "history" {
		return nil, false
	}
	resume := s.todoStage(ctx, last)
	return resume, resume != nil
}

// ttsrStage is the session's ttsrStage on workflow time.
func (s *session) ttsrStage(ctx, rctx workflow.Context, last *engine.AssistantMessage) func() {
	call := s.ttsrLast
	s.ttsrLast = ttsrCall{}
	if s.aborted || (call.cut == nil && call.deferred == nil) {
		return nil
	}
	delay, ok := engine.TTSRResume(call.cut != nil, last)
	if !ok || workflow.GetVersion(ctx, versionTTSR, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	if err := workflow.Sleep(rctx, delay); err != nil {
		return nil
	}
	rules := append(append([]*engine.Rule(nil), call.cut...), call.deferred...)
	return func() {
		if call.cut != nil {
			s.dropFrom(call.msg)
		}
		m := engine.RuleInjection(rules)
		m.Timestamp = workflow.Now(ctx).UnixMilli()
		s.messages = append(s.messages, m)
		for _, r := range rules {
			s.ttsrInjected = append(s.ttsrInjected, r.Name)
		}
	}
}

// dropFrom takes a message and what follows it out of the context (the
// session hides them: they stay recorded in the history).
func (s *session) dropFrom(m engine.Message) {
	for i, x := range s.messages {
		if x == m {
			s.messages = s.messages[:i:i]
			return
		}
	}
}
