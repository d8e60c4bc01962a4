package durable

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// run is one prompt's activity, the engine's (loop.go: startRun, activity,
// runLoop) with its decisions taken by the engine's functions and its work
// in activities. It returns the last assistant message.
func (s *session) run(ctx workflow.Context, prompt engine.Message) *engine.AssistantMessage {
	rctx, cancel := workflow.WithCancel(ctx)
	s.busy, s.abort, s.aborted = true, cancel, false
	defer func() { s.busy, s.abort = false, nil; cancel() }()
	s.beforePrompt(rctx) // compact.go
	pending := []engine.Message{prompt}
	var last *engine.AssistantMessage
	var resume func() // what a run started again by a post-run stage begins with
	for {
		s.emit(engine.AgentStart{})
		s.emit(engine.TurnStart{})
		if resume != nil {
			resume()
			resume = nil
		}
		var news []engine.Message
		var perr error
		last, perr = s.loop(rctx, pending, &news)
		s.emit(engine.AgentEnd{Messages: news})
		pending = nil
		// The post-run decision of auto-retry (retry.go retryStage), on
		// workflow time.
		if s.aborted || last == nil || !engine.Retryable(last, perr) {
			if s.retry > 0 {
				final := engine.RetryCancelled
				if !s.aborted && last != nil && last.ErrorMessage != "" {
					final = last.ErrorMessage
				}
				s.emit(engine.AutoRetryEnd{Success: false, Attempt: s.retry, FinalError: final})
				s.retry = 0
			}
			// The stages after retry, in the session's order
			// (engine/features.go): TTSR, the overflow recovery, the todo
			// reminder (ttsr.go).
			var again bool
			if resume, again = s.afterRun(ctx, rctx, last, perr); again {
				continue
			}
			return last
		}
		s.retry++
		if s.retry > engine.DefaultMaxRetries {
			s.emit(engine.AutoRetryEnd{Success: false, Attempt: s.retry - 1, FinalError: last.ErrorMessage})
			s.retry = 0
			return last
		}
		now := engine.FixedClock(workflow.Now(ctx).UnixMilli())
		delay := engine.RetryDelay(now, s.retryBase(), s.retry, last, perr)
		s.emit(engine.AutoRetryStart{Attempt: s.retry, MaxAttempts: engine.DefaultMaxRetries, DelayMs: delay.Milliseconds(), ErrorMessage: last.ErrorMessage})
		// The failed message leaves the context: the next attempt asks
		// again from the same user message.
		s.messages = s.messages[:len(s.messages)-1]
		s.cmp.hidden = true
		if err := workflow.Sleep(rctx, delay); err != nil {
			s.emit(engine.AutoRetryEnd{Success: false, Attempt: s.retry, FinalError: engine.RetryCancelled})
			s.retry = 0
			return last
		}
	}
}

// loop is runLoop: turns until the model stops and nothing is queued.
func (s *session) loop(ctx workflow.Context, pending []engine.Message, news *[]engine.Message) (*engine.AssistantMessage, error) {
	first := true
	for {
		more := true
		for more || len(pending) > 0 {
			if !first {
				s.emit(engine.TurnStart{})
			}
			first = false
			for _, p := range pending {
				s.announce(p)
				*news = append(*news, p)
			}
			pending = nil
			msg, out := s.callModel(ctx)
			*news = append(*news, msg)
			perr := out.providerError(msg)
			next := engine.AfterReply(msg) // decide.go
			if next == engine.NextEnd {
				results := s.placeholders(ctx, msg, news)
				s.emit(engine.TurnEnd{Message: msg, ToolResults: results})
				return msg, perr
			}
			more = next == engine.NextTools
			var results []*engine.ToolResultMessage
			var steer []engine.Message
			if more {
				results, steer = s.runTools(ctx, msg, out.Cut, news)
			}
			s.emit(engine.TurnEnd{Message: msg, ToolResults: results})
			if steer != nil {
				pending = steer
			} else {
				pending = s.take(&s.steering)
			}
			// An abort during the tools ends the run as in process: the
			// next model call is the aborted reply (callModel).
		}
		follow := s.take(&s.followUps)
		if len(follow) == 0 {
			return s.lastAssistant(), nil
		}
		pending = follow
	}
}

func (s *session) lastAssistant() *engine.AssistantMessage {
	for i := len(s.messages) - 1; i >= 0; i-- {
		if a, ok := s.messages[i].(*engine.AssistantMessage); ok {
			return a
		}
	}
	return nil
}

// callModel is one model call: its message_start, the activity, its
// message_end.
func (s *session) callModel(ctx workflow.Context) (*engine.AssistantMessage, ModelOutput) {
	s.steps++
	m := s.setup.Model
	ts := workflow.Now(ctx).UnixMilli()
	start := engine.NewReply(engine.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID,
		StopReason: engine.StopStop, Timestamp: ts}, m.Cost)
	s.emit(engine.MessageStart{Message: start.Snapshot()})
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    s.heartbeat(),
		// A model call has no effect but its cost: one cut by a lost worker
		// runs again. A provider's failure is a result, not an error (the
		// engine's retry decides about it, visibly).
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second},
	})
	var out ModelOutput
	var err error
	if ctx.Err() != nil {
		// Aborted before the call: no step is scheduled; the reply is the
		// aborted one the in-process loop makes.
		err = ctx.Err()
	} else {
		err = workflow.ExecuteActivity(actx, ActivityModel, ModelInput{Step: s.stepKey(ctx), Messages: encodeMessages(s.messages),
			Endpoints: s.endpoints, HostTools: s.offeredHostTools(), Timestamp: ts, Injected: s.ttsrInjected}).Get(ctx, &out)
	}
	var msg *engine.AssistantMessage
	if err == nil {
		msg, err = decodeAssistant(out.Message)
	}
	if err != nil {
		msg = start.Snapshot()
		msg.Content = []engine.ContentBlock{}
		if ctx.Err() != nil || temporal.IsCanceledError(err) {
			msg.StopReason, msg.ErrorMessage = engine.StopAborted, engine.AbortedMessage
		} else {
			msg.StopReason, msg.ErrorMessage = engine.StopError, "model call failed: "+rootMessage(err)
		}
		out = ModelOutput{}
	}
	s.noteRules(out, msg) // ttsr.go: ttsr_triggered before the message_end
	s.add(msg)
	s.emit(engine.MessageEnd{Message: msg})
	if s.retry > 0 && msg.StopReason != engine.StopError && msg.StopReason != engine.StopAborted {
		s.emit(engine.AutoRetryEnd{Success: true, Attempt: s.retry})
		s.retry = 0
	}
	return msg, out
}

// rootMessage is the innermost error's text (an activity error wraps the
// cause in the SDK's own words).
func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// placeholders pairs every call of a failed or aborted reply with an
// error result (loop.go placeholderResults).
func (s *session) placeholders(ctx workflow.Context, msg *engine.AssistantMessage, news *[]engine.Message) []*engine.ToolResultMessage {
	res := engine.PlaceholderResult(msg)
	results := []*engine.ToolResultMessage{}
	for _, call := range msg.ToolCalls() {
		s.emit(engine.ToolExecutionStart{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
		s.emit(engine.ToolExecutionEnd{ToolCallID: call.ID, ToolName: call.Name, Result: engine.ToolResultJSON(res), IsError: true, NoWarning: true})
		tr := engine.NewToolResultMessage(call.ID, call.Name, res, workflow.Now(ctx).UnixMilli())
		s.announce(tr)
		*news = append(*news, tr)
		results = append(results, tr)
	}
	return results
}

// runTools runs a reply's calls one after another, each its own
// activity; in interrupt mode immediate a steering message that arrives
// meanwhile skips the rest, as in process.
func (s *session) runTools(ctx workflow.Context, msg *engine.AssistantMessage, cut map[string]string, news *[]engine.Message) ([]*engine.ToolResultMessage, []engine.Message) {
	var results []*engine.ToolResultMessage
	var steer []engine.Message
	for _, call := range msg.ToolCalls() {
		s.emit(engine.ToolExecutionStart{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, Intent: call.Intent})
		var res engine.ToolResult
		if steer != nil {
			res = engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(engine.SkippedMessage)}, Details: []byte("{}"), IsError: true}
		} else {
			res = s.runTool(ctx, call, cut[call.ID])
			s.noteTodoWrite(call.Name, res) // todo.go
		}
		s.emit(engine.ToolExecutionEnd{ToolCallID: call.ID, ToolName: call.Name, Result: engine.ToolResultJSON(res), IsError: res.IsError, IsWarning: res.IsWarning})
		tr := engine.NewToolResultMessage(call.ID, call.Name, res, workflow.Now(ctx).UnixMilli())
		s.announce(tr)
		*news = append(*news, tr)
		results = append(results, tr)
		if steer == nil && s.interruptMode == engine.ModeImmediate && len(s.steering) > 0 {
			steer = s.take(&s.steering)
		}
	}
	return results, steer
}

// runTool is one tool call's activity, keyed by the call's id. A call
// lost with its worker is run again only when its tool is idempotent.
func (s *session) runTool(ctx workflow.Context, call engine.ContentBlock, cut string) engine.ToolResult {
	if cut != "" {
		return errorResult(cut)
	}
	if t, ok := s.hostTool(call.Name); ok {
		return s.runHostTool(ctx, call, t)
	}
	info, ok := s.tool(call.Name)
	if !ok {
		return *engine.CheckToolCall(call, nil, nil)
	}
	if ctx.Err() != nil {
		return errorResult("Operation aborted")
	}
	attempts := int32(1)
	if info.Idempotent {
		attempts = 3
	}
	opts := workflow.ActivityOptions{
		ActivityID:          call.ID,
		StartToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:    s.heartbeat(),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: attempts, InitialInterval: time.Second},
		// An abort waits for the tool to stop, so nothing runs on after
		// the run's end.
		WaitForCancellation: true,
	}
	in := ToolInput{ID: call.ID, Name: call.Name, Arguments: call.Arguments}
	if call.Name == engine.TodoWriteTool {
		in.Todos = s.todoPhases() // todo.go: its ops change the list as it stands
	}
	out, err := s.toolSteps(ctx, opts, in) // dialogs.go
	var cancelled *temporal.CanceledError
	switch {
	case err == nil:
		return out.result()
	case errors.As(err, &cancelled) && cancelled.HasDetails() && cancelled.Details(&out) == nil:
		// The tool's own answer to the abort ("Command aborted"), recorded
		// with the cancellation (RunTool), as in process.
		return out.result()
	case ctx.Err() != nil || temporal.IsCanceledError(err):
		return errorResult("Operation aborted")
	case !info.Idempotent:
		return errorResult(fmt.Sprintf(InterruptedMessage, call.Name))
	}
	return errorResult(fmt.Sprintf("Tool call failed after %d attempts: %s", attempts, rootMessage(err)))
}

func errorResult(text string) engine.ToolResult {
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(text)}, Details: []byte("{}"), IsError: true}
}
