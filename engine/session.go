package engine

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Config wires a session. cmd/xcsh is the only place that builds one.
// Model, ThinkingLevel, Tools, SystemPrompt, SessionID, SessionFile and
// Store are the initial values of state that changes (the settings, the
// record and its store); the rest is fixed for the session's life.
type Config struct {
	Provider      Provider
	Model         *Model // nil: no model selected (prompts fail with ErrNoModel)
	ThinkingLevel ThinkingLevel
	Tools         []Tool
	Validator     Validator      // nil: arguments are not validated
	Shell         Shell          // nil: the RPC bash command is unavailable
	Host          HostLink       // nil: nothing can be asked of the host
	Hooks         Hooks          // nil: nothing watches or changes the session (hooks.go)
	Thinking      ThinkingPolicy // nil: RangePolicy
	// Gate, when set, may stop a validated tool call before it runs (a
	// confirmation policy asking the user): a non-nil result is the call's
	// result, which the model sees. It runs on the tool's goroutine.
	Gate func(ctx context.Context, call ToolCall) *ToolResult
	// Models is the model registry: the models SelectModel and CycleModel
	// choose from, and whether a provider can be called (a key, or none
	// needed: a prompt for a model without one fails before the run
	// starts, as the original's does). nil: only the session's model
	// exists, and it can be called.
	Models ModelCatalog
	// Scoped are the --models entries CycleModel walks (those with a key).
	Scoped []ScopedModel
	// Files creates and opens session files; nil keeps every session in
	// memory (--no-session).
	Files SessionFiles
	// Exporter renders export_html; nil fails it like an in-memory session.
	Exporter Exporter
	// RebuildPrompt makes the system prompt for a new tool set
	// (SetHostTools, SetToolGroup) and for the resources once they are
	// read; nil keeps the prompt as it is.
	RebuildPrompt func(PromptParts) string
	// LoadResources reads the user's setup (instruction files, skills,
	// prompt templates). Loop runs it once on its own goroutine; the
	// session installs the result and then opens Ready. nil: no resources,
	// ready at once.
	LoadResources func(ctx context.Context) Resources
	// Commands are slash-command sources listed and expanded before the
	// resources' templates and skills (extension commands).
	Commands []CommandSource
	// ToolSources own tool groups that change on their own (MCP servers);
	// a run lets them settle before each model call.
	ToolSources []ToolSource
	// AnnounceName asks the host to show the session's name as its title
	// when it is set (pi's PI_RPC_EMIT_TITLE).
	AnnounceName bool
	Store        Store // the initial record's store; nil: a MemoryStore
	// Compaction configures compaction (budgets, automatic or not).
	Compaction CompactionSettings
	// Rules are TTSR rules, compiled (Rule.Compile), beside those the
	// resources bring (Resources.Rules); nil: none.
	Rules []*Rule
	// Cwd is the working directory tool paths are relative to (TTSR
	// globs).
	Cwd          string
	SystemPrompt string
	Clock        Clock
	IDs          IDSource
	Sink         Sink
	Log          io.Writer // diagnostics (store failures); nil discards
	SessionID    string
	SessionFile  string // "" for an in-memory session
	// StreamIdleTimeout ends a model call that sends nothing for this long
	// with a retryable error; 0 means DefaultStreamIdleTimeout, negative
	// disables the watchdog.
	StreamIdleTimeout time.Duration
	// RetryBaseDelay is the first retry's wait (doubled for each further
	// attempt); 0 means DefaultRetryBase.
	RetryBaseDelay time.Duration
	// MaxTurns ends a run that keeps calling tools after this many model
	// calls, with an error message (TurnLimitMessage); 0 is no limit, as
	// the original.
	MaxTurns int
	// Budget limits what one run may spend (cost, tokens, time; budget.go);
	// SetBudget changes it. Zero: no limit, as the original.
	Budget Budget
	// OutputRetries is how many times a final answer that does not match
	// its prompt's output schema is asked for again (output.go); 0 means
	// DefaultOutputRetries, negative none.
	OutputRetries int
	// InboxSize bounds the actor's mailbox (backpressure); 0 picks a default.
	InboxSize int
	// TodoClearDelay is how long a completed or abandoned task stays in the
	// todo list; 0 means DefaultTodoClearDelay, negative never clears.
	TodoClearDelay time.Duration
	// Tracer opens the spans of runs, model calls and tool calls
	// (trace.go); nil: tracing is off and costs nothing.
	Tracer Tracer
	// OrderedResults reports the results of parallel (shared) tool calls in
	// call order instead of completion order. Only the deterministic test
	// mode sets it: completion order of parallel calls is a race, and a
	// golden transcript must not depend on one.
	OrderedResults bool
}

// settings are the parts of a session a command may change at run time
// (set_model, set_thinking_level, set_host_tools, new_session, ...). They
// are actor state with a version that every change bumps: caches of their
// encodings (get_state) are keyed by it, and a run snapshots what it uses
// (the tools it offers) when it builds a request. Slices are replaced,
// never modified in place, so a snapshot stays valid.
type settings struct {
	version      uint64
	model        *Model
	thinking     ThinkingLevel
	tools        []Tool
	systemPrompt string
	id, file     string // session identity
	name         string
}

// Session is one agent session. Its state is owned by a serial executor
// (see doc.go): methods documented "(actor)" must only be called from a
// function passed to Post or Call; the others are safe anywhere.
type Session struct {
	cfg  Config
	exec *serial
	stop chan struct{}
	// wg counts every goroutine the session starts (runs, tool calls, RPC
	// bash commands); Close waits for them.
	wg sync.WaitGroup
	// acts is the cancellation registry, the one piece of state touched
	// outside the executor (abort cancels ahead of the queue).
	acts activities

	// Actor-owned state.
	set           settings
	phase         Phase
	rec           transcript
	partial       *Partial
	run           *run
	steering      []queued
	followUps     []queued
	nextTurn      []Message       // custom messages kept for the next prompt (SendMessage)
	hooked        []*hookedPrompt // prompts in their Input hook, in arrival order: busy while any is, as a prompt in flight is in the original
	turns         []*turnWatch    // prompts whose result is wanted, until the session settles after them (turn.go)
	steeringMode  string
	followUpMode  string
	interruptMode string
	todo          todoState
	compact       compactState
	drain         drainLimit // LimitCompactions
	ttsr          ttsrState
	idleWaiters   []func()
	deferredBash  []Message // bash executions recorded while a run was active
	stateCache    stateCache
	bashTail      chan struct{} // closed when the last queued bash command is done
	retry         retryState
	budget        budgetState
	output        *outputSpec     // the current prompt's output schema (output.go); nil: free text
	truncWarned   bool            // the silent-truncation warning was sent (once per session)
	noticed       map[string]bool // the providers' notices already told the host
	// saveErr is why the store last failed ("" while every entry is
	// written): get_state's sessionSaveError.
	saveErr string
	// stages are the post-run decision, taken in the step that emits
	// agent_end: the first stage that asks for work gets it (see postRun).
	// watches look at every event of a model call (see streamWatch).
	// onInstall run once a new record is in place (install). All three,
	// and inputs, are filled by the features in features.go's order;
	// tests add theirs after New.
	stages    []postStage
	watches   []streamWatch
	onInstall []func()
	// timers is the parent context of the session's own timers (todo
	// auto-clear); Close cancels it (stopTimers) so they end with the
	// session.
	timers     context.Context
	stopTimers context.CancelFunc
	// inputs are the steps a prompt's text takes before it becomes a user
	// message (commands.go), in the family's order (features.go).
	inputs []inputStage
	// res are the resources read at start (setup.go), installed on the
	// executor; ready is closed once they are.
	res       Resources
	ready     chan struct{}
	setupOnce sync.Once
}

type queued struct {
	msg Message // a user message, or a custom one (SendMessage)
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
	if cfg.Thinking == nil {
		cfg.Thinking = RangePolicy{}
	}
	if cfg.RetryBaseDelay <= 0 {
		cfg.RetryBaseDelay = DefaultRetryBase
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Session{
		cfg:  cfg,
		exec: newSerial(cfg.InboxSize),
		stop: make(chan struct{}),
		set: settings{
			version: 1, model: cfg.Model, tools: cfg.Tools, systemPrompt: cfg.SystemPrompt,
			id: cfg.SessionID, file: cfg.SessionFile,
		},
		rec:           transcript{store: cfg.Store},
		steeringMode:  ModeOneAtATime,
		followUpMode:  ModeOneAtATime,
		interruptMode: ModeWait,
	}
	if s.rec.store == nil {
		s.rec.store = &MemoryStore{}
	}
	s.timers, s.stopTimers = context.WithCancel(context.Background())
	s.plugFeatures()
	s.ready = make(chan struct{})
	if cfg.LoadResources == nil {
		close(s.ready)
	}
	if cfg.Model != nil {
		s.set.thinking = cfg.Thinking.Clamp(*cfg.Model, cfg.ThinkingLevel)
	}
	return s
}

// Loop runs the executor's own goroutine until Stop is called: it drains functions
// that were queued while another was running (see serial).
func (s *Session) Loop() {
	s.setupOnce.Do(s.startSetup)
	s.exec.loop(s.stop)
}

// Stop ends Loop. Call it only when the session is idle (see WhenIdle).
func (s *Session) Stop() { close(s.stop) }

// Close waits for every goroutine the session started (runs, tool calls,
// RPC bash commands) to return. Call it after the session went idle and
// Loop returned; work still running must have been cancelled first.
func (s *Session) Close() {
	s.stopTimers()
	s.drain.close()
	s.wg.Wait()
}

// Cancel cancels every registered activity of the given kinds (abort
// passes AbortKinds), ahead of anything queued. Safe from any goroutine.
func (s *Session) Cancel(kinds ...ActivityKind) { s.acts.cancel(errAborted, kinds...) }

// Interrupt cancels the run and its post-run work: Cancel(AbortKinds...).
func (s *Session) Interrupt() { s.Cancel(AbortKinds...) }

// Phase reports what the session is doing. (actor)
func (s *Session) Phase() Phase { return s.phase }

// IsStreaming reports whether a prompt's activity is under way: a run, or
// the retry wait that belongs to it. (actor)
func (s *Session) IsStreaming() bool {
	// A compaction that belongs to a prompt (before it, or after its
	// agent_end) keeps the prompt in flight, as the original reports it;
	// so does a prompt in its Input hook.
	return s.phase == PhaseRunning || s.phase == PhaseRetrying || (s.phase == PhaseCompacting && s.run != nil) ||
		len(s.hooked) > 0
}

// idle reports whether nothing is going on: no phase of work and no
// prompt in its Input hook. (actor)
func (s *Session) idle() bool { return s.phase == PhaseIdle && len(s.hooked) == 0 }

// isCompacting reports whether a compaction is under way. (actor)
func (s *Session) isCompacting() bool { return s.phase == PhaseCompacting }

// WhenIdle calls fn on the actor once the session is idle (at once if it
// is): no run, no post-run work and no prompt in its Input hook. (actor)
func (s *Session) WhenIdle(fn func()) {
	if s.idle() {
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
	// Source is where the prompt comes from, as the Input hook sees it:
	// "rpc" when empty, "extension" for an extension's sendUserMessage.
	Source string
	// Failed receives, on the executor, a failure found after the Input
	// hook ran (busy, no model): Prompt has returned nil by then. nil
	// drops it.
	Failed func(error)
	// Taken, if set, is called on the executor once the prompt has left
	// its input steps (started, queued, consumed or failed): at once,
	// or after the Input hook. A front that keeps its input in order holds
	// what follows the prompt until then (rpc does).
	Taken func()
	// Done, if set, receives the prompt's result on the executor once the
	// session has settled after it (TurnResult): the run and everything
	// after it, or the extension command it named. It is called exactly
	// once, unless Prompt returns an error.
	Done func(TurnResult)
	// OutputSchema, if set, is a JSON Schema the prompt's final answer
	// must be a JSON value valid against (output.go): a mismatch is told
	// to the model, which answers again, at most Config.OutputRetries
	// times. It needs a prompt that starts a run: queued, it fails with
	// ErrOutputQueued.
	OutputSchema []byte
	// TraceParent is the caller's W3C traceparent: the run's span joins
	// that trace when tracing is on (Config.Tracer); ignored otherwise.
	TraceParent string

	inTurn bool // admitted from the Input hook in arrival order (admit)
}

func (o PromptOptions) taken() {
	if o.Taken != nil {
		o.Taken()
	}
}

// Prompt starts a run with a user message, or queues it when a run is
// active and opts say how. The text first takes the input steps of
// commands.go, in the family's order: a slash command of an extension runs
// instead (even during a run: the prompt is consumed); the Input hook, when
// wanted, sees it (on a goroutine of the prompt: the session counts as busy
// meanwhile, and what follows reports its failure through opts.Failed);
// then a skill or template it names is expanded. opts.Taken, if set, is
// called once all that is over. (actor)
func (s *Session) Prompt(text string, opts PromptOptions) error {
	in := Input{Text: text, Images: opts.Images}
	w := s.openTurn(opts)
	var done func()
	if w != nil {
		done = func() { s.settleTurn(w) }
	}
	if _, handled := s.runExtensionCommand(in, done); handled {
		opts.taken()
		return nil
	}
	if s.has(HookInput) {
		s.promptHooked(in, opts, w)
		return nil
	}
	defer opts.taken()
	if err := s.promptInput(in, opts); err != nil {
		s.dropTurn(w)
		return err
	}
	s.settleTurn(w)
	return nil
}

// hookedPrompt is a prompt in its Input hook, and what the hook decided.
type hookedPrompt struct {
	in      Input
	opts    PromptOptions
	turn    *turnWatch
	done    bool
	aborted bool
	res     InputResult
}

// promptHooked passes a prompt through the Input hook off the executor,
// then goes on with what it decided. The hook's wait is a run activity:
// abort ends it, and the prompt is dropped. Prompts leave their hooks in
// the order they came, whatever order the hooks answer in: a prompt that
// came second never starts a run ahead of the first and never makes the
// first fail as busy. (actor)
func (s *Session) promptHooked(in Input, opts PromptOptions, w *turnWatch) {
	ctx, cancel := context.WithCancelCause(context.Background())
	remove := s.acts.add(ActRun, cancel)
	h := &hookedPrompt{in: in, opts: opts, turn: w}
	s.hooked = append(s.hooked, h)
	source := opts.Source
	if source == "" {
		source = "rpc"
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res := s.cfg.Hooks.Input(ctx, InputHook{Text: in.Text, Images: in.Images, Source: source})
		aborted := ctx.Err() != nil
		remove()
		cancel(nil)
		s.Call(func() {
			h.done, h.aborted, h.res = true, aborted, res
			s.admitHooked()
		})
	}()
}

// admitHooked lets the prompts at the head of the hooked list that are out
// of their hooks go on, in arrival order. (actor)
func (s *Session) admitHooked() {
	defer s.releaseIdle()
	for len(s.hooked) > 0 && s.hooked[0].done {
		h := s.hooked[0]
		s.hooked[0] = nil
		s.hooked = s.hooked[1:]
		s.admit(h)
	}
}

// admit goes on with a prompt whose Input hook has answered and whose
// turn has come: the prompts still in their hooks came after it and do
// not make it busy. (actor)
func (s *Session) admit(h *hookedPrompt) {
	defer h.opts.taken()
	if h.aborted || h.res.Action == InputHandled {
		if h.turn != nil {
			h.turn.aborted = h.aborted
		}
		s.settleTurn(h.turn)
		return
	}
	in := h.in
	if h.res.Action == InputTransform {
		in.Text = h.res.Text
		if h.res.Images != nil {
			in.Images = h.res.Images
		}
	}
	opts := h.opts
	opts.inTurn = true
	if err := s.promptInput(in, opts); err != nil {
		if opts.Failed != nil {
			opts.Failed(err)
		}
		s.failTurn(h.turn, err)
		return
	}
	s.settleTurn(h.turn)
}

// promptInput is Prompt past the extensions' steps: the remaining input
// stages (expansion), then the prompt itself. (actor)
func (s *Session) promptInput(in Input, opts PromptOptions) error {
	if err := s.checkSkill(in.Text); err != nil { // commands.go
		return err
	}
	in, handled := s.prepareInput(in)
	if handled {
		return nil
	}
	return s.prompt(in.Text, in.Images, opts)
}

// prompt starts a run with a prepared text, or queues it. (actor)
func (s *Session) prompt(text string, images []ContentBlock, opts PromptOptions) error {
	msg := s.userMessage(text, images)
	busy := !s.idle()
	if opts.inTurn {
		busy = s.phase != PhaseIdle // those still in their Input hook came after this one
	}
	if busy {
		if opts.OutputSchema != nil && opts.StreamingBehavior != "" {
			return ErrOutputQueued
		}
		switch opts.StreamingBehavior {
		case "":
			return ErrBusy
		case "followUp":
			s.enqueue(&s.followUps, msg)
		default: // "steer" and, as in the original, any other value
			s.enqueue(&s.steering, msg)
		}
		return nil
	}
	if err := s.canRun(); err != nil {
		return err
	}
	var hook *AgentStartHook
	if s.has(HookBeforeAgentStart) {
		hook = &AgentStartHook{Prompt: text, Images: images, SystemPrompt: s.set.systemPrompt}
	}
	out, err := s.newOutputSpec(opts.OutputSchema)
	if err != nil {
		return err
	}
	s.todo.reminders = 0 // the reminders count from the last user prompt
	s.output = out
	var pre *postRun
	if reason, last := s.promptCompaction(); reason != "" {
		pre = s.preCompaction(reason, last)
	}
	s.startRun([]Message{msg}, pre, hook, true, opts.TraceParent)
	return nil
}

// Steer queues a steering message (delivered at the next turn boundary).
// A text naming an extension's slash command fails with a
// *CommandQueueError, one naming a skill that is not loaded with an
// *UnknownSkillError; a skill or template it names is expanded, as the
// original does. (actor)
func (s *Session) Steer(text string, images []ContentBlock) error {
	if name, _, ok := s.extensionCommand(text); ok {
		return &CommandQueueError{Name: name}
	}
	if err := s.checkSkill(text); err != nil {
		return err
	}
	in, _ := s.expandCommand(Input{Text: text, Images: images})
	s.enqueue(&s.steering, s.userMessage(in.Text, in.Images))
	return nil
}

// FollowUp queues a follow-up (delivered when the run would stop), with
// Steer's rules. (actor)
func (s *Session) FollowUp(text string, images []ContentBlock) error {
	if name, _, ok := s.extensionCommand(text); ok {
		return &CommandQueueError{Name: name}
	}
	if err := s.checkSkill(text); err != nil {
		return err
	}
	in, _ := s.expandCommand(Input{Text: text, Images: images})
	s.enqueue(&s.followUps, s.userMessage(in.Text, in.Images))
	return nil
}

func (s *Session) userMessage(text string, images []ContentBlock) *UserMessage {
	content := []ContentBlock{TextBlock(text)}
	content = append(content, images...)
	return &UserMessage{Content: content, Attribution: "user", Timestamp: s.now()}
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
		Model:                 s.set.model,
		ThinkingLevel:         s.set.thinking,
		IsStreaming:           s.IsStreaming(),
		IsCompacting:          s.isCompacting(),
		SteeringMode:          s.steeringMode,
		FollowUpMode:          s.followUpMode,
		InterruptMode:         s.interruptMode,
		SessionFile:           s.set.file,
		SessionID:             s.set.id,
		SessionName:           s.set.name,
		AutoCompactionEnabled: !s.compact.disabled,
		MessageCount:          len(s.rec.context),
		QueuedMessageCount:    len(s.steering) + len(s.followUps),
		PendingMessageCount:   len(s.steering) + len(s.followUps),
		TodoPhases:            s.todo.phases,
		SystemPrompt:          s.set.systemPrompt,
		DumpTools:             make([]ToolDump, 0, len(s.set.tools)),
		SessionSaveError:      s.saveErr,
		Budget:                s.budgetStateOrNil(),
	}
	if s.partial != nil {
		st.MessageCount++
	}
	if st.TodoPhases == nil {
		st.TodoPhases = []TodoPhase{}
	}
	for _, t := range s.set.tools {
		st.DumpTools = append(st.DumpTools, ToolDump{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	return st
}

// Messages returns the context's messages, including the assistant message
// being streamed (as it stands). (actor)
func (s *Session) Messages() []Message {
	out := make([]Message, 0, len(s.rec.context)+1)
	out = append(out, s.rec.context...)
	if s.partial != nil {
		out = append(out, s.partial.snapshot())
	}
	return out
}

// LastAssistantText returns the trimmed text of the last assistant message,
// skipping aborted ones with no content; ok is false when there is none.
// (actor)
func (s *Session) LastAssistantText() (text string, ok bool) {
	for i := len(s.rec.context) - 1; i >= 0; i-- {
		m, isA := s.rec.context[i].(*AssistantMessage)
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
