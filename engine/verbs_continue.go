package engine

import "errors"

// The continue verb (agent-core.md §3.2, continue()): the agent runs again
// from the context as it stands, without a new prompt. It is how a run
// that stopped (a budget reached, an abort) goes on: the run keeps the
// budget it had spent and its prompt's output schema.

// Continue's refusals; their texts are the original's.
var (
	ErrNothingToContinue = errors.New("No messages to continue from")
	ErrContinueAssistant = errors.New("Cannot continue from message role: assistant")
)

// Continue runs the agent again from the context. When the context ends
// with a reply that failed or was cut (aborted, a budget, an error), that
// reply and the placeholder results of its tool calls leave the context
// (the record keeps them) and the model is asked again from what came
// before; when it ends with a finished reply, the queued steering, else
// the queued follow-ups, are the new run's messages, and with none queued
// there is nothing to continue (ErrContinueAssistant). It fails with
// ErrBusy while the session works, ErrNothingToContinue in an empty
// session, and as a prompt does without a model or a key. started, if
// set, is called just before the run's first event. (actor)
func (s *Session) Continue(started func()) error {
	if !s.idle() {
		return ErrBusy
	}
	c := s.rec.context
	if len(c) == 0 {
		return ErrNothingToContinue
	}
	if err := s.canRun(); err != nil {
		return err
	}
	var prompts []Message
	if cut := cutReply(c); cut != nil {
		s.rec.hideFrom(cut)
	} else if _, ok := c[len(c)-1].(*AssistantMessage); ok {
		prompts = s.dequeue(&s.steering, s.steeringMode)
		if len(prompts) == 0 {
			prompts = s.dequeue(&s.followUps, s.followUpMode)
		}
		if len(prompts) == 0 {
			return ErrContinueAssistant
		}
	}
	if started != nil {
		started()
	}
	s.startRun(prompts, nil, nil, false, "")
	return nil
}

// cutReply is the failed or cut reply the context ends with, followed only
// by the placeholder results of its tool calls; nil when it ends
// otherwise.
func cutReply(c []Message) *AssistantMessage {
	for i := len(c) - 1; i >= 0; i-- {
		switch m := c[i].(type) {
		case *ToolResultMessage:
			continue
		case *AssistantMessage:
			if m.StopReason != StopAborted && m.StopReason != StopError {
				return nil
			}
			// Its results are placeholders only if it is the reply the
			// results answer: a failed message has no executed calls.
			return m
		}
		return nil
	}
	return nil
}
