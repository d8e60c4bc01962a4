// Package engine is the agent core of xcsh: messages, the event stream, the
// agent loop, queues, the session record and its settings. It imports only
// the standard library; providers, tools and the RPC front depend on it,
// never the reverse.
//
// # Concurrency model
//
// A Session's state is owned by a serial executor, not by a goroutine:
// functions posted to it (Post, Call) run one at a time, in the order they
// were posted, so whichever goroutine runs one owns the state for that
// moment. When the executor is free, the poster runs its function itself,
// on its own goroutine (an idle get_state is answered on rpc's dispatcher
// goroutine with no hand-off: a goroutine hop costs more than the whole
// answer); under contention functions queue, bounded (backpressure), and
// the Loop goroutine drains them. A function running on the executor must
// not Post or Call (it would wait on itself once the queue is full); it
// uses later to defer work, and the engine's tests check this. The queue
// is serial.go; the session's plumbing on it (Post, Call, later, and emit
// and now, which every feature uses) is executor.go.
//
// What may block the executor, exactly: a Sink write (stdout under
// backpressure, which is the host's own pace) and a Store append (one
// line written to the session file, and its lock, which a header rewrite
// holds only to copy what was appended meanwhile and move the file into
// place). Nothing else: everything that waits, for a model, a tool, a
// shell, the host or a disk, waits on its own goroutine: one per run
// (which drives the provider and the tools and owns the whole activity of
// a prompt, including work after agent_end), one per tool call, one per
// RPC bash command, and one per verb's file work (loading a session to
// switch to, writing a branch, fork or clone, rendering an export,
// rewriting a header on rename, closing a replaced store), which posts its
// result back. Every state change and every event still goes through the
// executor, so there is exactly one order of events and responses: the
// order in which the Sink sees them. Session.Close waits for every
// goroutine the session started. TestVerbsDoNoIOOnTheExecutor holds the
// rule for the verbs.
//
// Requests to the host (host tool calls, UI dialogs) go through a
// HostLink: the engine emits the request as an event, and the front that
// owns the wire decodes the reply into the engine's types (ToolResult,
// DialogReply) and resolves it on its reader goroutine, so a run waiting
// for the host is never stuck behind the executor queue. The engine reads
// no frame of any protocol. A tool call carries the UI it may use
// (ToolCall.UI), built on the HostLink.
//
// # The verbs
//
// Every front (rpc, acp and the print and json modes) and the extension
// host drive the session through the same methods, with typed arguments,
// results and errors; a front maps the errors to its own wire texts. The
// extension host also uses the verbs no front has: SendMessage,
// AppendCustomEntry, SetLabel, SetActiveTools, Exec and the UI requests. Queries and
// settings answer at once (State, Messages, Page, Stats, SelectModel,
// CycleModel, SetThinkingLevel, SetHostTools, SetBudget); Continue starts a
// run from the context as it stands, as Prompt does with a message. The lifecycle verbs
// (NewSession, SwitchSession, Branch, Clone, Export, SetSessionName) report
// through a done function on the executor once their work is over; a
// front that keeps its input in order holds what follows until then. A
// switch aborts a running prompt, and the session stays busy
// (PhaseSwitching) from idle until the new record is in place. The verbs'
// ports (SessionFiles, ModelCatalog, Exporter) are defined here, by their
// consumer, and wired by cmd/xcsh.
//
// Tracing is a port too (trace.go): Config.Tracer, nil unless tracing is
// configured (engine/otel implements it). A run opens its span on its own
// goroutine, a model call and a tool call theirs around the provider's
// Stream and the tool's Run, whose contexts then carry the span:
// TraceParent(ctx) is what an adapter's request, an MCP call or a child
// process carries. Nil, the engine opens nothing and the check is the cost.
//
// # Where features plug in
//
// A prompt's text takes Prompt's own extension steps first (hooks.go: an
// extension's slash command runs instead; the Input hook, when wanted, sees
// it off the executor), then the input stages (Session.inputs, commands.go:
// the expansion of skills and templates, expandCommand) before it becomes a
// user message. Session.Commands is the one listing of the slash commands a
// host may offer, from the CommandSources of the configuration (extensions)
// and of the resources.
//
// The resources (instruction files, skills, templates, rules) are read on
// their own goroutine once Loop starts (Config.LoadResources) and
// installed on the executor; Ready is closed then, and the fronts handle no command
// before it, so a prompt sent right after ready finds its template while
// ready itself waits for no disk. Tools that change at run time (one MCP
// server each) are tool groups (SetToolGroup); before each model call the
// run lets the ToolSources settle, so the call offers what they know of.
//
// Each feature plugs into the session's lists through one function in its
// own file (plugRetry, plugTTSR, ...), and features.go calls them in the
// one order that counts: its post-run stages, its stream watches, its input
// stages and what it forgets or re-reads when a record is installed
// (onInstall). After agent_end the run goroutine asks the post-run stages,
// in order (postStage: retry, TTSR, automatic compaction, todo reminders),
// for more work; the first that asks gets it, as a postRun with its own
// phase and cancellable activity, and what the next run starts with. A
// prompt may get such work before its run too (the pre-prompt compaction).
// The last stage checks the answer against the prompt's output schema
// (output.go) and asks again on a mismatch. While a model call streams,
// every event passes the stream watches (streamWatch) before it is
// applied, beside the idle watchdog; the budget watch (budget.go) ends the
// run at the delta that reaches a cost or token limit, the TTSR watch a
// call that breaks a rule. A budget ends a run through the run's own
// context, cancelled with the *BudgetError as its cause, so every
// post-run stage sees it aborted; the checks before each model call and
// the time limit's timer end it the same way. Rules without a condition
// (promptrules.go) are in the system prompt, or attached after the turn
// whose tool calls touched a file they match. Compaction (compact*.go) prepares
// and summarises off the executor through the session's Provider;
// extensions plug in with AddCompactionHook. Todos (todo*.go) are actor
// state with clear timers on the session's clock.
//
// What lives outside the process (extensions) plugs in through one port,
// Hooks (hooks.go), wired by Config.Hooks: the session asks Has before it
// builds anything for a hook point, so a point nobody handles costs one
// call and the hot paths (message_update deltas) none at all. The points:
// a prompt's text (Input, before anything else; the session counts as
// busy while it waits, as the original counts a prompt in flight), the
// accepted prompt (BeforeAgentStart: a message after it, this run's
// system prompt), each model call (Context replaces what is sent, never
// the record; BeforeProviderRequest), each tool call after validation
// (ToolCall: block or rewrite) and its result (ToolResult), the RPC bash
// command (UserBash), session changes (BeforeSwitch may cancel; the
// fronts answer cancelled:true), and slash commands (Commands: a prompt
// "/name args" runs one instead of a model call). Every blocking method
// is called off the executor, on the goroutine of the work it belongs to,
// with that work's context. Observe hears session changes that are not
// Sink events (session_start and _shutdown, model and thinking
// selection), on the executor. Events themselves reach the extension host
// through the Sink, which it wraps.
//
// # Phases and cancellation
//
// What the session is doing is one piece of actor state, its Phase: idle,
// running, retrying, compacting or switching. agent_end does not imply
// idle; a run's goroutine may go on with post-run work (retry backoff,
// auto-compaction, a todo reminder, a TTSR retry) while the phase keeps
// the session busy, and WhenIdle, IsStreaming and isCompacting derive from
// it (a compaction that belongs to a prompt is both streaming and
// compacting; a manual one only compacting).
//
// Every cancellable activity (a run, an RPC bash command, a retry wait, a
// compaction, a host call, a dialog) registers its cancel function by kind
// in one registry, the only session state touched outside the executor.
// Cancel cancels by kind at once, ahead of anything queued (abort passes
// AbortKinds); the cancelled work then winds down through the executor as
// usual, emitting its closing events (message_end with stopReason
// "aborted", turn_end, agent_end). Persistence ignores cancellation. A
// kind can also expire: LimitCompactions (the RPC front's EOF drain)
// cancels every compaction past a bound, and each that starts later.
//
// # The session record
//
// The session is a tree of entries (id, parentId, a current leaf), changed
// only by appending a child of the leaf; the model's context is derived
// from the branch that ends at the leaf. Every entry reaches the Store on
// the executor before the event that announces it, so a file store has it
// on disk before a host can see it. The record and its store are installed
// together, in one place (install): a new session, a file resumed at
// start-up (Resume) or switched to, a branch, a fork, a clone. Settings
// that commands change at run time (model, thinking level, tools, system
// prompt, identity) are actor state with a version: caches are keyed by
// the version, and a run snapshots the tools it offers with each request.
//
// # Streaming and encoding
//
// A model call's events reach the executor through a stream queue
// (streamqueue.go): the provider's callback appends the event and posts
// one drain when none is pending, and the drain, on the executor's own
// goroutine, applies what has arrived. So the provider never waits for
// the Sink, and the idle watchdog (watchStream) measures only its silence.
// When the Sink reports a backlog (Backlog: the host is not reading what
// it is given), consecutive deltas of one block that pile up are merged
// into one event, keeping full-mode output linear; without a backlog
// nothing is merged, whatever the timing, so transcripts are unchanged.
//
// The assistant message being streamed is a Partial, which keeps the JSON
// encoding of its content blocks cached: each delta is escaped once and
// appended, so a message_update frame with the whole partial message costs
// a copy, not a re-marshal. Every message type encodes itself with the key
// order of the original agent, and decodes itself (DecodeMessage dispatches
// on the role): decoding then encoding gives the bytes decoded, so a
// session file loads and saves unchanged, even one holding roles or block
// types this package does not know. The encoder, the fast decoder and the
// general decoder of each message, block, usage and file mention are
// generated from one table per object (internal/codecgen, go generate),
// so they cannot disagree about a key; the fast decoder reads a session
// file's lines in one pass with the lexer of internal/jsonscan.
//
// # Determinism
//
// The clock (with its timers) and the id source are injected
// (Config.Clock, Config.IDs). With FixedClock and SequentialIDs a
// transcript is byte-deterministic; ManualClock lets a test move time
// instead of sleeping. The same clock serves the tools (tools.Options.Clock)
// and measures a provider's retry instant (ProviderError.RetryAt), so no
// deterministic output reads the wall clock.
package engine
