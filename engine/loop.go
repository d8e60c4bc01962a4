package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// errAborted is the cancellation cause of a user abort.
var errAborted = errors.New(AbortedMessage)

// run is the actor-side record of an active run.
type run struct {
	newMessages []Message
	// tools is the tool set the current request offered: tool calls are
	// resolved against it, whatever setTools did meanwhile. Written on the
	// executor in buildRequest, read by the run goroutine after that Call.
	tools []Tool
	model Model // the model of the current request
	err   error // the provider failure of the last assistant message, if any
	// promptChars is the estimated size of the current request, kept only
	// for APIs that truncate silently (see truncation.go).
	promptChars int
	// systemPrompt replaces the session's for this run when not "" (the
	// BeforeAgentStart hook).
	systemPrompt string
	// overflows counts the compactions this run made after overflow
	// errors.
	overflows int
	// ttsr is the rules' view of the current model call (nil without
	// rules); ruleCut is set when a rule cut it.
	ttsr    *ttsrStream
	ruleCut bool
	// reply builds the message of the current model call (reply.go).
	reply *Reply
	// cancel ends the run's context; a budget ends the run through it,
	// with the *BudgetError as the cause (budget.go). Safe anywhere.
	cancel context.CancelCauseFunc
	// meter counts the current model call against the cost and token
	// limits (nil: none set); made with the request on the executor,
	// then the run goroutine's while the call streams.
	meter *budgetMeter
	// timeUp is set on the executor once the time limit has passed.
	timeUp *BudgetError
	// span is the run's invoke_agent span (nil: tracing is off); set on
	// the run goroutine before anything reads it (trace.go).
	span Span
}

// postRun is work a run goroutine does after agent_end while the session
// stays busy in phase (retry backoff, auto-compaction). work runs on the
// run goroutine under the activity's own cancellable context, registered
// as act; it reports whether the run starts again (a retry) or the
// session goes idle.
type postRun struct {
	phase Phase
	act   ActivityKind
	work  func(ctx context.Context) (again bool)
	// finish, if set, runs on the executor in the step that ends the
	// activity (when work does not start again), just before the session
	// goes idle: its closing events and the switch to idle are one step.
	finish func()
	// resume, if set, runs on the executor when work starts the run again,
	// after its agent_start and turn_start: what the new run begins with
	// (a hidden reminder, a continue message).
	resume func(r *run)
}

// postStage is one step of the post-run decision: it looks at the run that
// just emitted agent_end (aborted: the run was cancelled) and returns the
// work to do next, or nil to pass the decision on. Stages run in order in
// the executor step that emits agent_end, and every stage before the one
// that asks for work runs, so each can close its own bookkeeping (retry
// ends a retry in progress). (actor)
type postStage func(r *run, aborted bool) *postRun

// decidePostRun runs the stages in order; the first that asks for work
// gets it. (actor)
func (s *Session) decidePostRun(r *run, aborted bool) *postRun {
	for _, stage := range s.stages {
		if post := stage(r, aborted); post != nil {
			return post
		}
	}
	return nil
}

// streamWatch looks at each event of a model call as it arrives, on the
// run goroutine, before the executor applies it; a non-nil error ends the
// call with that error as the cause, after the event itself is applied,
// in its place in the stream (a rule that cuts a violating stream, TTSR,
// is one: the delta that broke it is shown). The idle watchdog (watchStream) is the other watch, on
// time rather than on events. With no watch the cost is a loop over an
// empty slice.
type streamWatch func(r *run, ev StreamEvent) error

// startRun begins a run with the given prompt messages, followed by the
// custom messages kept for the next turn. With pre, the run starts after
// that work (a compaction before the prompt), whatever its outcome; with
// hook (a prompt, when the BeforeAgentStart hook is wanted), after the
// hook has answered: its messages follow the prompt and its system prompt
// is the run's. A fresh run spends its budget from nothing; one that is
// not (Continue) goes on from what the run before it spent. parent is the
// caller's traceparent for the run's span ("" for none; unused when
// tracing is off). (actor)
func (s *Session) startRun(prompts []Message, pre *postRun, hook *AgentStartHook, fresh bool, parent string) {
	prompts = append(prompts, s.nextTurn...)
	s.nextTurn = nil
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &run{cancel: cancel}
	removeRun := s.acts.add(ActRun, cancel)
	s.run = r
	s.startBudget(fresh)
	var pending []Message
	open := func() {
		s.phase = PhaseRunning
		// Bash executions recorded during the previous run join the context
		// before the new prompt, as the original flushes them.
		for _, m := range s.deferredBash {
			s.appendMessage(m)
		}
		s.deferredBash = nil
		s.emit(AgentStart{})
		s.emit(TurnStart{})
		for _, p := range prompts {
			s.emitMessage(r, p)
		}
		pending = s.dequeue(&s.steering, s.steeringMode)
	}
	var pctx context.Context
	var pcancel context.CancelCauseFunc
	var removePre func()
	switch {
	case pre != nil:
		s.phase = pre.phase
		pctx, pcancel = context.WithCancelCause(ctx)
		removePre = s.acts.add(pre.act, pcancel)
	case hook != nil:
		s.phase = PhaseRunning // busy while the hook answers
	default:
		// The opening events are emitted here, on the actor, so they follow
		// the prompt's acknowledgement directly and precede anything the
		// host sends next: a piped transcript is deterministic up to the
		// model call.
		open()
	}
	var trace RunTrace
	if s.cfg.Tracer != nil {
		trace = s.runTrace(prompts)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if s.cfg.Tracer != nil {
			// Opened here, off the executor, before the run's first model
			// call reads it; ended once the session is idle after the run.
			r.span = s.cfg.Tracer.StartRun(parent, trace)
			ctx = withSpan(ctx, r.span)
			defer endRunSpan(r)
		}
		if pre != nil {
			pre.work(pctx)
			removePre()
			pcancel(nil)
		}
		switch {
		case hook != nil:
			res := s.cfg.Hooks.BeforeAgentStart(ctx, *hook)
			s.Call(func() {
				r.systemPrompt = res.SystemPrompt
				for _, m := range res.Messages {
					m.Timestamp = s.now()
					prompts = append(prompts, m)
				}
				open()
			})
		case pre != nil:
			s.Call(open)
		}
		s.activity(ctx, r, pending)
		removeRun()
		cancel(nil)
	}()
}

// activity is the run goroutine: it owns the whole activity of a prompt,
// from agent_start through any post-run work to the session going idle.
func (s *Session) activity(ctx context.Context, r *run, pending []Message) {
	for {
		s.runLoop(ctx, r, pending)
		var post *postRun
		var pctx context.Context
		var pcancel context.CancelCauseFunc
		var remove func()
		// agent_end and the choice of what comes next are one actor step:
		// a host that sends a prompt as soon as it reads agent_end finds the
		// session idle, or busy in a post-run phase, never in between. The
		// post-run work registers in the same step, so an abort or
		// abort_retry read after any of its frames finds it.
		s.Call(func() {
			be := budgetCause(ctx)
			s.emit(AgentEnd{Messages: r.newMessages, Budget: be})
			if be != nil {
				for _, w := range s.turns {
					w.res.Budget = be
				}
			}
			post = s.decidePostRun(r, ctx.Err() != nil)
			if post == nil {
				s.finishRun(r)
				return
			}
			s.phase = post.phase
			// A child of the run's context: an abort that cancelled the run
			// just before this step ends the work too.
			pctx, pcancel = context.WithCancelCause(ctx)
			remove = s.acts.add(post.act, pcancel)
		})
		if post == nil {
			return
		}
		again := post.work(pctx) && ctx.Err() == nil
		remove()
		pcancel(nil)
		if !again {
			s.Call(func() {
				if post.finish != nil {
					post.finish()
				}
				s.finishRun(r)
			})
			return
		}
		s.Call(func() {
			s.phase = PhaseRunning
			r.newMessages = nil
			s.emit(AgentStart{})
			s.emit(TurnStart{})
			if post.resume != nil {
				post.resume(r)
			}
		})
		pending = nil
	}
}

// finishRun marks the session idle and releases idle waiters. (actor)
func (s *Session) finishRun(r *run) {
	if s.run != r {
		return
	}
	s.stopBudget(r)
	s.run = nil
	s.goIdle()
}

// goIdle makes the session idle and runs the functions waiting for it
// (WhenIdle), in the order they were registered. (actor)
func (s *Session) goIdle() {
	s.phase = PhaseIdle
	s.releaseIdle()
}

// releaseIdle runs the functions waiting for idle if the session is idle
// (a prompt may still be in its Input hook). (actor)
func (s *Session) releaseIdle() {
	if !s.idle() {
		return
	}
	waiters := s.idleWaiters
	s.idleWaiters = nil
	for _, w := range waiters {
		w()
	}
}

// addMessage records a finished message in the session and the run.
// (actor)
func (s *Session) addMessage(r *run, m Message) {
	s.appendMessage(m)
	r.newMessages = append(r.newMessages, m)
	if a, ok := m.(*AssistantMessage); ok {
		s.observeAssistant(r, a)
	}
}

// emitMessage announces a complete message; it is recorded between its
// start and its end, so a store has it before the host sees message_end.
// (actor)
func (s *Session) emitMessage(r *run, m Message) {
	s.emit(MessageStart{Message: m})
	s.addMessage(r, m)
	s.emit(MessageEnd{Message: m})
}

// runLoop is the agent loop of agent-core.md §3.3. It runs on its own
// goroutine; every state change and event goes through the actor.
// pending are steering messages that were queued before the run started.
func (s *Session) runLoop(ctx context.Context, r *run, pending []Message) {
	firstTurn := true
	calls := 0 // model calls of this loop (Config.MaxTurns)
	for {
		more := true
		for more || len(pending) > 0 {
			if max := s.cfg.MaxTurns; max > 0 && calls >= max {
				s.Call(func() { s.turnLimit(r, pending, max) })
				return
			}
			calls++
			var req *Request
			var msgs []Message
			var spent bool // a budget was reached: the turn ends without a call
			// Tools that change on their own (MCP servers starting, a
			// changed tool list) are in place before the request is built.
			s.settleTools(ctx)
			s.Call(func() {
				if !firstTurn {
					s.emit(TurnStart{})
				}
				for _, p := range pending {
					s.emitMessage(r, p)
				}
				if be := s.budgetBeforeCall(r); be != nil {
					s.budgetTurn(r, be)
					spent = true
					return
				}
				req, msgs = s.buildRequest(r)
			})
			if spent {
				return
			}
			firstTurn, pending = false, nil
			s.hookRequest(ctx, r, req, msgs)

			msg := s.streamAssistant(ctx, r, req)
			next := AfterReply(msg) // decide.go
			if next == NextEnd {
				s.Call(func() {
					results := s.placeholderResults(r, msg)
					s.emit(TurnEnd{Message: msg, ToolResults: results})
				})
				return
			}
			toolCalls := msg.ToolCalls()
			more = next == NextTools
			var results []*ToolResultMessage
			var steer []Message
			if more {
				results, steer = s.executeTools(ctx, r, toolCalls)
			}
			s.Call(func() {
				s.emit(TurnEnd{Message: msg, ToolResults: results})
				s.attachFileRules(toolCalls) // for the next call: promptrules.go
				if steer != nil {
					pending = steer
				} else {
					pending = s.dequeue(&s.steering, s.steeringMode)
				}
			})
		}
		var follow []Message
		s.Call(func() { follow = s.dequeue(&s.followUps, s.followUpMode) })
		if len(follow) == 0 {
			break
		}
		pending = follow
	}
}

// TurnLimitMessage is the error of a run that reached Config.MaxTurns.
const TurnLimitMessage = "Turn limit reached: the model asked for more tool calls after %d model calls (--max-turns %d); the run stops here"

// turnLimit ends a run that reached its turn limit: one more turn whose
// assistant message is the error (recorded, as a provider failure is),
// after the messages that were waiting to be sent. (actor)
func (s *Session) turnLimit(r *run, pending []Message, max int) {
	s.emit(TurnStart{})
	for _, p := range pending {
		s.emitMessage(r, p)
	}
	m := s.set.model
	msg := &AssistantMessage{Content: []ContentBlock{}, StopReason: StopError,
		ErrorMessage: fmt.Sprintf(TurnLimitMessage, max, max), Timestamp: s.now()}
	if m != nil {
		msg.API, msg.Provider, msg.Model = m.API, m.Provider, m.ID
	}
	s.emit(MessageStart{Message: msg})
	s.addMessage(r, msg)
	s.emit(MessageEnd{Message: msg})
	s.emit(TurnEnd{Message: msg, ToolResults: []*ToolResultMessage{}})
}

// buildRequest snapshots what the next model call sends, and the tools
// and model the run resolves this turn against. When the Context hook is
// wanted it leaves the messages to hookRequest and returns a copy of the
// context for it instead. (actor)
func (s *Session) buildRequest(r *run) (*Request, []Message) {
	r.model = *s.set.model
	r.tools = s.set.tools
	req := &Request{
		Model:        r.model,
		SystemPrompt: s.set.systemPrompt,
	}
	if r.systemPrompt != "" {
		req.SystemPrompt = r.systemPrompt
	}
	if o := s.output; o != nil {
		req.Output = &o.format
		req.SystemPrompt += outputInstruction(o.format.Schema)
	}
	var msgs []Message
	if s.has(HookContext) {
		msgs = append([]Message(nil), s.rec.context...)
	} else {
		req.Messages = ConvertToLLM(s.rec.context)
	}
	if s.set.thinking != ThinkingOff {
		req.ThinkingLevel = s.set.thinking
	}
	for _, t := range r.tools {
		req.Tools = append(req.Tools, ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	r.ttsr, r.ruleCut = s.newTTSRStream(), false
	r.meter = s.newBudgetMeter(r)
	r.promptChars = 0
	if silentTruncationAPIs[r.model.API] && !s.truncWarned {
		r.promptChars = -1 // measured by hookRequest, once the request is final
	}
	return req, msgs
}

// HookRequest finishes a model call's request with the hooks of h (nil:
// none), as a session does before it sends one: the Context hook may
// replace msgs, the context the request is made of (nil: req.Messages is
// made already and no Context hook is wanted), and BeforeProviderRequest
// may change the request. A durable worker's model call takes it too.
func HookRequest(ctx context.Context, h Hooks, req *Request, msgs []Message) {
	if msgs != nil {
		if h != nil && h.Has(HookContext) {
			if repl := h.Context(ctx, msgs); repl != nil {
				msgs = repl
			}
		}
		req.Messages = ConvertToLLM(msgs)
	}
	if h != nil && h.Has(HookBeforeProviderRequest) {
		h.BeforeProviderRequest(ctx, req)
	}
}

// hookRequest finishes a request off the executor: the Context hook's
// messages (when buildRequest left them to it) and the
// BeforeProviderRequest hook. With neither wanted it only measures.
func (s *Session) hookRequest(ctx context.Context, r *run, req *Request, msgs []Message) {
	HookRequest(ctx, s.cfg.Hooks, req, msgs)
	if r.promptChars < 0 {
		r.promptChars = promptChars(req)
	}
}

// streamAssistant runs one model call and returns the finished message.
func (s *Session) streamAssistant(ctx context.Context, r *run, req *Request) *AssistantMessage {
	s.Call(func() {
		r.reply = NewReply(AssistantMessage{
			API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
			StopReason: StopStop, Timestamp: s.now(),
		}, r.model.Cost)
		s.partial = r.reply.Partial()
		s.emit(MessageStart{Message: s.partial.snapshot()})
	})
	var err error
	var cut *ttsrCut // the rule that ended the call, if one did
	var chat Span    // the call's span when tracing is on
	q := newStreamQueue(s.cfg.Sink)
	// Not at all when its fixed part cannot fit (window_fit.go); once, or
	// again when the request was refused for its size and the window could
	// grow (window.go).
	err = cannotFit(req, nil)
	for again := err == nil; again && ctx.Err() == nil; {
		again = false
		// The stream runs under its own context so the watchdog can end a
		// silent provider without it counting as an abort.
		sctx, scancel := context.WithCancelCause(ctx)
		var seen atomic.Uint64
		stopWatch := s.watchStream(scancel, &seen, &q.waiting)
		stopQueue := context.AfterFunc(sctx, q.close)
		pctx := sctx
		if r.span != nil {
			chat = s.cfg.Tracer.StartChat(r.span, req)
			pctx = withSpan(sctx, chat) // the adapters' requests carry it
		}
		err = s.cfg.Provider.Stream(pctx, req, func(ev StreamEvent) error {
			seen.Add(1)
			if sctx.Err() != nil {
				return context.Cause(sctx)
			}
			for _, w := range s.watches {
				if werr := w(r, ev); werr != nil {
					s.queueStream(r, q, ev)
					scancel(werr)
					return werr
				}
			}
			// Asynchronous and in order (streamqueue.go): the executor
			// applies it; the provider never waits for the Sink.
			if !s.queueStream(r, q, ev) {
				return context.Cause(sctx)
			}
			return nil
		})
		stopQueue()
		stopWatch()
		if ctx.Err() == nil && errors.Is(context.Cause(sctx), errStalled) {
			err = s.stallError()
		}
		if ctx.Err() == nil {
			cut = ttsrCutOf(context.Cause(sctx))
		}
		r.ruleCut = cut != nil
		scancel(nil)
		if err != nil && cut == nil && ctx.Err() == nil {
			s.Call(func() {
				s.drainStream(r, q, -1)
				again = s.growOnRefusal(r, req, err)
				if !again && s.partial != nil && len(s.partial.msg.Content) == 0 {
					if e := cannotFit(req, err); e != nil {
						err = e
					}
				}
			})
			if again {
				if chat != nil {
					// The refused attempt is a call of its own: its span
					// ends with the refusal, the next attempt opens another.
					chat.End(SpanEnd{Message: &AssistantMessage{StopReason: StopError, ErrorMessage: err.Error()}})
					chat = nil
				}
				err, q = nil, newStreamQueue(s.cfg.Sink)
			}
		}
	}
	var msg *AssistantMessage
	s.Call(func() {
		s.drainStream(r, q, -1) // whatever no drain has applied yet
		if cut != nil {
			s.emit(TTSRTriggered{Rules: cut.rules}) // after the delta that broke the rule
		}
		msg = s.finishAssistant(r, ctx, err)
	})
	if chat != nil {
		chat.End(SpanEnd{Message: msg})
	}
	return msg
}

// applyStream folds one provider event into the partial and emits the
// matching message_update (reply.go); a notice is told to the user once
// per text. (actor)
func (s *Session) applyStream(r *run, ev StreamEvent) {
	if s.partial == nil || r.reply == nil {
		return
	}
	if notice := r.reply.Apply(ev, s.emit); notice != "" && !s.noticed[notice] {
		if s.noticed == nil {
			s.noticed = map[string]bool{}
		}
		s.noticed[notice] = true
		s.notify("warning", notice)
	}
}

// finishAssistant closes the streamed message (completed, failed or
// aborted), emits its message_end and adds it to the context. (actor)
func (s *Session) finishAssistant(r *run, ctx context.Context, err error) *AssistantMessage {
	msg := r.reply.Finish(ctx.Err() != nil, r.ruleCut, err)
	s.partial = nil
	if msg.StopReason == StopAborted && !r.ruleCut {
		if be := budgetCause(ctx); be != nil { // cut by a budget (budget.go)
			msg.ErrorMessage = be.Error()
		}
	}
	if err != nil && msg.StopReason == StopError { // the provider's failure, not an abort
		r.err = err
	}
	s.commitBudget(r, msg)
	s.addMessage(r, msg)
	s.emit(MessageEnd{Message: msg})
	s.retrySucceeded(msg)
	s.checkTruncation(r, msg)
	return msg
}

// placeholderResults gives every tool call of a failed or aborted message
// an error result so calls and results stay paired (§3.5). (actor)
func (s *Session) placeholderResults(r *run, msg *AssistantMessage) []*ToolResultMessage {
	res := PlaceholderResult(msg) // decide.go
	results := []*ToolResultMessage{}
	for _, call := range msg.ToolCalls() {
		s.emit(ToolExecutionStart{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
		s.emit(ToolExecutionEnd{ToolCallID: call.ID, ToolName: call.Name, Result: resultJSON(res), IsError: true, NoWarning: true})
		tr := &ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: res.Content, Details: []byte("{}"), IsError: true, Timestamp: s.now()}
		s.emitMessage(r, tr)
		results = append(results, tr)
	}
	return results
}

// resultJSON encodes a tool result as tool_execution_end.result.
func resultJSON(res ToolResult) []byte {
	if res.Raw != nil {
		return AppendRawJSON(nil, res.Raw)
	}
	dst := appendBlocks(append([]byte(nil), `{"content":`...), res.Content)
	dst = appendRawField(dst, "details", orEmptyObject(res.Details))
	if res.IsWarning {
		dst = appendBoolField(dst, "isWarning", true)
	}
	return append(dst, '}')
}
