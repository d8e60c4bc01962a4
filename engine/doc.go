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
// uses Later to defer work, and the engine's tests check this.
//
// No function on the executor blocks, except on the Sink (a stdout write
// under backpressure) and on the Store (a session file append). Everything
// that waits, for a model, a tool, a shell or the host, waits on its own
// goroutine: one per run (which drives the provider and the tools and owns
// the whole activity of a prompt, including work after agent_end), one per
// tool call and one per RPC bash command. Every state change and every
// event still goes through the executor, so there is exactly one order of
// events and responses: the order in which the Sink sees them. Session.Close
// waits for every goroutine the session started.
//
// Requests to the host (host tool calls, UI dialogs) go through a HostLink,
// whose replies are resolved on rpc's reader goroutine: a run waiting for
// the host is never stuck behind the executor queue (AskHost).
//
// # Phases and cancellation
//
// What the session is doing is one piece of actor state, its Phase: idle,
// running, retrying or compacting. agent_end does not imply idle; a run's
// goroutine may go on with post-run work (retry backoff, auto-compaction)
// while the phase keeps the session busy, and WhenIdle, IsStreaming and
// IsCompacting derive from it.
//
// Every cancellable activity (a run, an RPC bash command, a retry wait, a
// compaction, a host call, a dialog) registers its cancel function by kind
// in one registry, the only session state touched outside the executor.
// Cancel cancels by kind at once, ahead of anything queued (abort passes
// AbortKinds); the cancelled work then winds down through the executor as
// usual, emitting its closing events (message_end with stopReason
// "aborted", turn_end, agent_end). Persistence ignores cancellation.
//
// # The session record
//
// The session is a tree of entries (id, parentId, a current leaf), changed
// only by appending a child of the leaf; the model's context is derived
// from the branch that ends at the leaf. Every entry reaches the Store on
// the executor before the event that announces it, so a file store has it
// on disk before a host can see it. Settings that commands change at run
// time (model, thinking level, tools, system prompt, identity) are actor
// state with a version: caches are keyed by the version, and a run
// snapshots the tools it offers with each request.
//
// # Streaming and encoding
//
// The assistant message being streamed is a Partial, which keeps the JSON
// encoding of its content blocks cached: each delta is escaped once and
// appended, so a message_update frame with the whole partial message costs
// a copy, not a re-marshal. Every message type encodes itself with the key
// order of the original agent, and decodes itself (DecodeMessage dispatches
// on the role): decoding then encoding gives the bytes decoded, so a
// session file loads and saves unchanged, even one holding roles or block
// types this package does not know.
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
