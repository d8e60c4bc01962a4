package engine

import (
	"context"
	"strings"
	"sync"
	"unicode"
)

// Config wires a session. cmd/xcsh is the only place that builds one.
type Config struct {
	Provider      Provider
	Model         *Model // nil: no model selected (prompts fail with ErrNoModel)
	ThinkingLevel ThinkingLevel
	Tools         []Tool
	Validator     Validator // nil: arguments are not validated
	Shell         Shell     // nil: the RPC bash command is unavailable
	SystemPrompt  string
	Clock         Clock
	IDs           IDSource
	Sink          Sink
	SessionID     string
	SessionFile   string // "" for an in-memory session
	// InboxSize bounds the actor's mailbox (backpressure); 0 picks a default.
	InboxSize int
	// OrderedResults reports the results of parallel (shared) tool calls in
	// call order instead of completion order. Only the deterministic test
	// mode sets it: completion order of parallel calls is a race, and a
	// golden transcript must not depend on one.
	OrderedResults bool
}

// Session is one agent session. Its state is owned by a single actor
// goroutine (Loop); everything else talks to it by posting functions to the
// actor's inbox. Methods documented "(actor)" must only be called from a
// function passed to Post or Call; the others are safe anywhere.
type Session struct {
	cfg  Config
	exec *serial
	stop chan struct{}
	wg   sync.WaitGroup // run goroutines

	// cancelMu guards cancel, the current run's cancel function. It is the
	// one piece of state touched outside the actor, so abort can cancel a
	// run ahead of the queue (Interrupt).
	cancelMu sync.Mutex
	cancel   context.CancelCauseFunc

	// bashMu guards bashCancels, the running RPC bash commands, which
	// AbortBash cancels from the reader goroutine.
	bashMu      sync.Mutex
	bashCancels map[*context.CancelFunc]context.CancelFunc

	// Actor-owned state.
	model         *Model
	thinking      ThinkingLevel
	messages      []Message
	partial       *Partial
	run           *run
	steering      []queued
	followUps     []queued
	steeringMode  string
	followUpMode  string
	interruptMode string
	sessionName   string
	todos         []TodoPhase
	idleWaiters   []func()
	deferredBash  []Message // bash executions recorded while a run was active
	stateCache    stateCache
	bashTail      chan struct{} // closed when the last queued bash command is done
}

type queued struct {
	msg *UserMessage
}

// New builds a session; call Loop to start its actor.
func New(cfg Config) *Session {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.IDs == nil {
		cfg.IDs = &RandomIDs{Clock: cfg.Clock}
	}
	if cfg.InboxSize <= 0 {
		cfg.InboxSize = 256
	}
	if cfg.SessionID == "" {
		cfg.SessionID = cfg.IDs.NewID("session")
	}
	s := &Session{
		cfg:           cfg,
		exec:          newSerial(cfg.InboxSize),
		stop:          make(chan struct{}),
		model:         cfg.Model,
		steeringMode:  ModeOneAtATime,
		followUpMode:  ModeOneAtATime,
		interruptMode: ModeWait,
		bashCancels:   map[*context.CancelFunc]context.CancelFunc{},
	}
	if cfg.Model != nil {
		s.thinking = ClampThinking(*cfg.Model, cfg.ThinkingLevel)
	}
	return s
}

// Loop runs the actor goroutine until Stop is called: it drains functions
// that were queued while another was running (see serial).
func (s *Session) Loop() { s.exec.loop(s.stop) }

// Stop ends Loop. Call it only when the session is idle (see WhenIdle).
func (s *Session) Stop() { close(s.stop) }

// Post runs fn on the actor: now, on the calling goroutine, when the actor
// is free, else after the functions posted before it. It blocks while the
// queue is full (backpressure). fn must not call Call.
func (s *Session) Post(fn func()) { s.exec.post(fn) }

// Call runs fn on the actor and waits for it.
func (s *Session) Call(fn func()) {
	done := make(chan struct{})
	s.exec.post(func() { fn(); close(done) })
	<-done
}

// Interrupt cancels the running run, if any, without queueing behind other
// work. Safe from any goroutine.
func (s *Session) Interrupt() {
	s.cancelMu.Lock()
	if s.cancel != nil {
		s.cancel(errAborted)
	}
	s.cancelMu.Unlock()
}

func (s *Session) emit(ev Event) {
	if s.cfg.Sink != nil {
		s.cfg.Sink.Event(ev)
	}
}

func (s *Session) now() int64 { return s.cfg.Clock.NowMillis() }

// IsStreaming reports whether a run is active. (actor)
func (s *Session) IsStreaming() bool { return s.run != nil }

// WhenIdle calls fn on the actor once no run is active (at once if idle).
// (actor)
func (s *Session) WhenIdle(fn func()) {
	if s.run == nil {
		fn()
		return
	}
	s.idleWaiters = append(s.idleWaiters, fn)
}

// Abort cancels the active run and calls done once it has wound down (its
// closing events emitted). Queues are kept. (actor)
func (s *Session) Abort(done func()) {
	s.Interrupt()
	s.WhenIdle(done)
}

// PromptOptions are the optional parts of a prompt.
type PromptOptions struct {
	Images []ContentBlock
	// StreamingBehavior is "steer" or "followUp" to queue the message when a
	// run is active; empty means fail with ErrBusy then.
	StreamingBehavior string
}

// Prompt starts a run with a user message, or queues it when a run is
// active and opts say how. (actor)
func (s *Session) Prompt(text string, opts PromptOptions) error {
	msg := s.userMessage(text, opts.Images)
	if s.run != nil {
		switch opts.StreamingBehavior {
		case "":
			return ErrBusy
		case "followUp":
			s.followUps = append(s.followUps, queued{msg})
		default: // "steer" and, as in the original, any other value
			s.steering = append(s.steering, queued{msg})
		}
		return nil
	}
	if s.model == nil {
		return ErrNoModel
	}
	s.startRun([]Message{msg})
	return nil
}

// Steer queues a steering message (delivered at the next turn boundary).
// (actor)
func (s *Session) Steer(text string, images []ContentBlock) {
	s.steering = append(s.steering, queued{s.userMessage(text, images)})
}

// FollowUp queues a follow-up (delivered when the run would stop). (actor)
func (s *Session) FollowUp(text string, images []ContentBlock) {
	s.followUps = append(s.followUps, queued{s.userMessage(text, images)})
}

func (s *Session) userMessage(text string, images []ContentBlock) *UserMessage {
	content := []ContentBlock{TextBlock(text)}
	content = append(content, images...)
	return &UserMessage{Content: content, Attribution: "user", Timestamp: s.now()}
}

func dequeue(q *[]queued, mode string) []Message {
	if len(*q) == 0 {
		return nil
	}
	n := 1
	if mode == ModeAll {
		n = len(*q)
	}
	out := make([]Message, n)
	for i := 0; i < n; i++ {
		out[i] = (*q)[i].msg
	}
	*q = append((*q)[:0:0], (*q)[n:]...)
	return out
}

// SetSteeringMode sets how many steering messages a poll takes. (actor)
func (s *Session) SetSteeringMode(mode string) error {
	if mode != ModeAll && mode != ModeOneAtATime {
		return ErrInvalidMode
	}
	s.steeringMode = mode
	return nil
}

// SetFollowUpMode sets how many follow-ups a poll takes. (actor)
func (s *Session) SetFollowUpMode(mode string) error {
	if mode != ModeAll && mode != ModeOneAtATime {
		return ErrInvalidMode
	}
	s.followUpMode = mode
	return nil
}

// SetInterruptMode sets when steering interrupts tool execution. (actor)
func (s *Session) SetInterruptMode(mode string) error {
	if mode != ModeImmediate && mode != ModeWait {
		return ErrInvalidMode
	}
	s.interruptMode = mode
	return nil
}

// State returns the get_state payload. (actor)
func (s *Session) State() State {
	st := State{
		Model:                 s.model,
		ThinkingLevel:         s.thinking,
		IsStreaming:           s.run != nil,
		SteeringMode:          s.steeringMode,
		FollowUpMode:          s.followUpMode,
		InterruptMode:         s.interruptMode,
		SessionFile:           s.cfg.SessionFile,
		SessionID:             s.cfg.SessionID,
		SessionName:           s.sessionName,
		AutoCompactionEnabled: true,
		MessageCount:          len(s.messages),
		QueuedMessageCount:    len(s.steering) + len(s.followUps),
		TodoPhases:            s.todos,
		SystemPrompt:          s.cfg.SystemPrompt,
		DumpTools:             make([]ToolDump, 0, len(s.cfg.Tools)),
	}
	if s.partial != nil {
		st.MessageCount++
	}
	if st.TodoPhases == nil {
		st.TodoPhases = []TodoPhase{}
	}
	for _, t := range s.cfg.Tools {
		st.DumpTools = append(st.DumpTools, ToolDump{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	return st
}

// Messages returns the context's messages, including the assistant message
// being streamed (as it stands). (actor)
func (s *Session) Messages() []Message {
	out := make([]Message, 0, len(s.messages)+1)
	out = append(out, s.messages...)
	if s.partial != nil {
		out = append(out, s.partial.snapshot())
	}
	return out
}

// LastAssistantText returns the trimmed text of the last assistant message,
// skipping aborted ones with no content; ok is false when there is none.
// (actor)
func (s *Session) LastAssistantText() (text string, ok bool) {
	for i := len(s.messages) - 1; i >= 0; i-- {
		m, isA := s.messages[i].(*AssistantMessage)
		if !isA {
			continue
		}
		if m.StopReason == StopAborted && len(m.Content) == 0 {
			continue
		}
		t := strings.TrimSpace(m.Text())
		return t, t != ""
	}
	return "", false
}

// SetSessionName names the session: control characters become spaces, runs
// of spaces collapse, and the result is trimmed. (actor)
func (s *Session) SetSessionName(name string) error {
	clean := CleanSessionName(name)
	if clean == "" {
		return ErrEmptySessionName
	}
	s.sessionName = clean
	return nil
}

// CleanSessionName applies the session-name rules (control characters to
// spaces, runs of spaces collapsed, trimmed).
func CleanSessionName(name string) string {
	var b strings.Builder
	space := false
	for _, r := range name {
		if unicode.IsControl(r) || r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
