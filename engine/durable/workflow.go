package durable

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// DefaultHeartbeat is how long a model call or a tool call may go without
// a heartbeat before Temporal counts its worker as lost.
const DefaultHeartbeat = 30 * time.Second

// InterruptedMessage is the result of a tool call that may have started
// on a worker that was lost before its result was recorded, when the tool
// is not idempotent: the call is not run again (%s is the tool's name).
const InterruptedMessage = "Tool call interrupted: the worker running it stopped before its result was recorded. %s is not idempotent, so it was not run again; it may or may not have taken effect: check before calling it again."

// MaxLogEvents bounds the events the workflow keeps for fronts to read;
// an older cursor is told so (EventsResult.Lost).
const MaxLogEvents = 20000

// session is the workflow's state. Only workflow code touches it: the
// SDK runs the main function, the update handlers and the queries one
// at a time, so it needs no lock.
type session struct {
	in       Start
	setup    Setup
	messages []engine.Message
	log      []Frame
	seq      int64

	busy      bool
	prompts   []engine.Message // accepted prompts not yet started
	steering  []engine.Message
	followUps []engine.Message
	// abort cancels the current run (nil when none runs).
	abort     workflow.CancelFunc
	aborted   bool
	endpoints []string
	stats     Stats
	// hostTools are the host's (set_host_tools); hostWaiting the calls
	// waiting for the host's reply.
	hostTools   []HostTool
	hostWaiting []*hostCall
	ready       bool // the set-up is known
	// interruptMode is RPC's (set_interrupt_mode): "wait" (the default)
	// delivers a steering message after the turn's tools; "immediate"
	// skips the calls left once one has ended.
	interruptMode string
	retry         int // the attempt of the retry in progress (0: none)
	steps         int // model calls made, for step keys
	// TTSR (ttsr.go): the rules injected so far, and what the rules did
	// during the last model call.
	ttsrInjected []string
	ttsrLast     ttsrCall
	// Todos (todo.go): the list, its pending auto-clears, the reminders
	// sent since the last user prompt, and the workflow's root context,
	// which the auto-clear timers outlive runs under (a workflow.Context
	// is the coroutines' scheduler, not a request's: kept for them).
	todos         []engine.TodoPhase
	todoTimers    []*todoTimer
	todoReminders int
	root          workflow.Context

	// dialogs are the questions waiting for the host's answer.
	dialogs []*dialogWait
	cmp     compactState
	// rec is what this run adds to the session's record, for an export
	// (export.go).
	rec exportRecord
}

// Session is the workflow of one session (WorkflowName).
func Session(ctx workflow.Context, in Start) error {
	s := &session{in: in, seq: in.Seq, stats: in.Stats, hostTools: in.HostTools, interruptMode: in.InterruptMode,
		ttsrInjected: in.TTSRInjected, todoReminders: in.TodoReminders}
	if s.interruptMode == "" {
		s.interruptMode = engine.ModeWait
	}
	msgs, err := decodeMessages(in.Messages)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("bad carried messages", "xcsh.decode", err)
	}
	s.messages = msgs
	if err := s.restoreCarried(in); err != nil { // compact.go
		return err
	}
	if err := s.register(ctx); err != nil {
		return err
	}
	if in.Setup != nil {
		s.setup = *in.Setup
	} else {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
		})
		if err := workflow.ExecuteActivity(actx, ActivitySetup).Get(ctx, &s.setup); err != nil {
			return err
		}
	}
	s.ready = true
	s.root = ctx
	s.setTodos(in.Todos) // todo.go: the carried list, its auto-clears armed again
	if in.Continue {
		s.prompts = append(s.prompts, &engine.DeveloperMessage{Content: []engine.ContentBlock{engine.TextBlock(engine.ContinueMessage)},
			Attribution: "agent", Timestamp: workflow.Now(ctx).UnixMilli()})
	}
	for {
		if err := workflow.Await(ctx, func() bool { return len(s.prompts) > 0 || s.cmp.pending }); err != nil {
			return err
		}
		if len(s.prompts) == 0 {
			return s.continueAsNew(ctx, false) // compacted in place (compact.go)
		}
		prompt := s.prompts[0]
		s.prompts = s.prompts[1:]
		last := s.run(ctx, prompt)
		// A long session continues as new at compaction: the decision is
		// the engine's (CompactionDue), the context carried over is the
		// summary and the kept messages. (Not while prompts wait: they
		// would have to be carried too.)
		if reason := s.compactionDue(ctx, last); reason != "" && len(s.prompts) == 0 {
			if reason == "history" {
				return s.continueAsNew(ctx, false)
			}
			if s.compact(ctx, reason) && len(s.prompts) == 0 {
				return s.continueAsNew(ctx, !s.setup.Compaction.NoAutoContinue)
			}
		}
	}
}

// register installs the updates and queries.
func (s *session) register(ctx workflow.Context) error {
	prompt := func(ctx workflow.Context, in PromptInput) error {
		m := s.userMessage(ctx, in.Message)
		switch {
		case !s.busy && len(s.prompts) == 0:
			s.prompts = append(s.prompts, m)
			s.todoReminders = 0 // the reminders count from the last user prompt
		case in.StreamingBehavior == "followUp":
			s.enqueue(&s.followUps, m)
		default:
			s.enqueue(&s.steering, m)
		}
		return nil
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePrompt, prompt, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, in PromptInput) error {
			if (s.busy || len(s.prompts) > 0) && in.StreamingBehavior != "steer" && in.StreamingBehavior != "followUp" {
				return errors.New(engine.ErrBusy.Error())
			}
			return nil
		},
	}); err != nil {
		return err
	}
	queue := func(q *[]engine.Message) func(workflow.Context, PromptInput) error {
		return func(ctx workflow.Context, in PromptInput) error {
			s.enqueue(q, s.userMessage(ctx, in.Message))
			return nil
		}
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateSteer, queue(&s.steering)); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateFollowUp, queue(&s.followUps)); err != nil {
		return err
	}
	// abort answers once the session is idle, as RPC's abort does.
	if err := workflow.SetUpdateHandler(ctx, UpdateAbort, func(ctx workflow.Context) error {
		s.prompts = nil
		if s.abort != nil {
			s.aborted = true
			s.abort()
		}
		return workflow.Await(ctx, func() bool { return !s.busy })
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateAttach, func(ctx workflow.Context, endpoint string) error {
		for _, e := range s.endpoints {
			if e == endpoint {
				return nil
			}
		}
		s.endpoints = append(s.endpoints, endpoint)
		return nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateInterruptMode, func(ctx workflow.Context, mode string) error {
		s.interruptMode = mode
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, mode string) error {
		if mode != engine.ModeWait && mode != engine.ModeImmediate {
			return fmt.Errorf("Invalid mode %q for set_interrupt_mode", mode)
		}
		return nil
	}}); err != nil {
		return err
	}
	if err := s.registerHostTools(ctx); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateSetTodos, s.hostTodos); err != nil { // todo.go
		return err
	}
	if err := s.registerDialogs(ctx); err != nil {
		return err
	}
	if err := s.registerCompaction(ctx); err != nil {
		return err
	}
	if err := s.registerExport(ctx); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, s.events); err != nil {
		return err
	}
	// State and messages are answered as the bytes the engine's encoders
	// write (the data converter would escape <, > and & in raw JSON).
	if err := workflow.SetQueryHandler(ctx, QueryState, func() ([]byte, error) {
		st, _ := s.state()
		return engine.MarshalJSON(st)
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryMessages, func() ([]byte, error) {
		b := []byte{'['}
		for i, m := range encodeMessages(s.messages) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, m...)
		}
		return append(b, ']'), nil
	}); err != nil {
		return err
	}
	// get_session_stats is the engine's, over the context (after a
	// continue-as-new: the summary and the kept messages, as in process).
	return workflow.SetQueryHandler(ctx, QueryStats, func() ([]byte, error) {
		st := engine.StatsOf(s.messages, s.setup.Model.ContextWindow)
		st.SessionID = s.in.SessionID
		return engine.MarshalJSON(st)
	})
}

func (s *session) userMessage(ctx workflow.Context, text string) engine.Message {
	return &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}, Attribution: "user",
		Timestamp: workflow.Now(ctx).UnixMilli()}
}

// emit numbers an event and keeps it for the fronts.
func (s *session) emit(ev engine.Event) {
	s.seq++
	s.log = append(s.log, Frame{Seq: s.seq, Data: ev.AppendJSON(nil)})
	if len(s.log) > MaxLogEvents {
		s.log = append(s.log[:0:0], s.log[len(s.log)-MaxLogEvents:]...)
	}
}

// events answers the events query.
func (s *session) events(after int64) (EventsResult, error) {
	res := EventsResult{Last: s.seq, First: s.seq + 1, Busy: s.busy || len(s.prompts) > 0, Base: s.in.Seq, PrevRunID: s.in.PrevRunID, Ready: s.ready}
	if len(s.log) > 0 {
		res.First = s.log[0].Seq
	}
	// Events up to Base are the earlier runs' (the front reads them there);
	// a cursor before what this run's log still keeps of its own is lost.
	if after < res.First-1 && res.First-1 > res.Base {
		res.Lost = true
	}
	for _, f := range s.log {
		if f.Seq > after {
			res.Frames = append(res.Frames, f)
		}
	}
	return res, nil
}

// state answers get_state with the engine's State.
func (s *session) state() (engine.State, error) {
	m := s.setup.Model
	st := engine.State{Model: &m, ThinkingLevel: s.setup.Thinking, IsStreaming: s.busy && !s.cmp.manual, IsCompacting: s.cmp.running,
		SteeringMode: engine.ModeOneAtATime, FollowUpMode: engine.ModeOneAtATime, InterruptMode: s.interruptMode,
		SessionID: s.in.SessionID, AutoCompactionEnabled: s.autoCompaction(), MessageCount: len(s.messages),
		QueuedMessageCount: len(s.steering) + len(s.followUps), PendingMessageCount: len(s.steering) + len(s.followUps),
		TodoPhases: s.todoPhases(), SystemPrompt: s.setup.SystemPrompt, DumpTools: []engine.ToolDump{}}
	for _, t := range s.setup.Tools {
		st.DumpTools = append(st.DumpTools, engine.ToolDump{Name: t.Name, Description: t.Description, Parameters: t.Schema})
	}
	for _, t := range s.offeredHostTools() {
		st.DumpTools = append(st.DumpTools, engine.ToolDump{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return st, nil
}

// add records a message in the context and the totals.
func (s *session) add(m engine.Message) {
	s.messages = append(s.messages, m)
	s.recordMessage(m)
	switch m := m.(type) {
	case *engine.UserMessage:
		s.stats.UserMessages++
	case *engine.AssistantMessage:
		s.noteReply(m)
		s.stats.AssistantMessages++
		s.stats.ToolCalls += len(m.ToolCalls())
		u := &s.stats.Tokens
		u.Input += m.Usage.Input
		u.Output += m.Usage.Output
		u.CacheRead += m.Usage.CacheRead
		u.CacheWrite += m.Usage.CacheWrite
		u.TotalTokens += m.Usage.TotalTokens
		u.Cost.Total += m.Usage.Cost.Total
	case *engine.ToolResultMessage:
		s.stats.ToolResults++
	}
}

// announce emits a whole message (start, record, end).
func (s *session) announce(m engine.Message) {
	s.emit(engine.MessageStart{Message: m})
	s.add(m)
	s.emit(engine.MessageEnd{Message: m})
}

// enqueue queues a steering or follow-up message and announces the
// queues (queue_update), as the in-process session does.
func (s *session) enqueue(q *[]engine.Message, m engine.Message) {
	*q = append(*q, m)
	s.queueChanged()
}

// take takes the first queued message (mode one-at-a-time) and announces
// the change.
func (s *session) take(q *[]engine.Message) []engine.Message {
	if len(*q) == 0 {
		return nil
	}
	m := (*q)[:1]
	*q = (*q)[1:]
	s.queueChanged()
	return m
}

func (s *session) queueChanged() {
	texts := func(q []engine.Message) []string {
		out := make([]string, 0, len(q))
		for _, m := range q {
			if u, ok := m.(*engine.UserMessage); ok {
				out = append(out, u.Text())
			}
		}
		return out
	}
	s.emit(engine.QueueUpdate{Steering: texts(s.steering), FollowUp: texts(s.followUps)})
}

func msToDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func (s *session) heartbeat() time.Duration {
	if s.in.HeartbeatMs > 0 {
		return msToDuration(s.in.HeartbeatMs)
	}
	return DefaultHeartbeat
}

func (s *session) retryBase() time.Duration {
	if s.in.RetryBaseMs > 0 {
		return msToDuration(s.in.RetryBaseMs)
	}
	return engine.DefaultRetryBase
}

func (s *session) tool(name string) (ToolInfo, bool) {
	for _, t := range s.setup.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolInfo{}, false
}

// stepKey names the current model call: its deltas carry it.
func (s *session) stepKey(ctx workflow.Context) string {
	return fmt.Sprintf("%s/%d/%d", workflow.GetInfo(ctx).WorkflowExecution.RunID, s.seq, s.steps)
}
