// Package engine is the agent core of xcsh: messages, the event stream, the
// agent loop, queues and session state. It imports only the standard
// library; providers, tools and the RPC front depend on it, never the
// reverse.
//
// # Concurrency model
//
// A Session's state is owned by one serial executor: functions posted to it
// (Post, Call) run one at a time, in the order they were posted, so
// whichever goroutine runs one owns the state for that moment. When the
// executor is idle the poster runs its function itself (an idle get_state
// is answered on the reader goroutine, with no hand-off); under contention
// functions queue for the actor goroutine (Loop). The RPC dispatcher runs
// each command that way, so commands see a consistent state and are
// answered in arrival order. A run (one prompt's agent loop) runs on its
// own goroutine and drives the provider and tools, but every state change
// and every event goes through the executor: there is exactly one ordering
// of events and responses, the order in which the Sink sees them.
//
// Abort is a context cancellation. Session.Interrupt cancels the running
// run directly, ahead of anything queued; the run then winds down through the
// actor as usual, emitting its closing events (message_end with
// stopReason "aborted", turn_end, agent_end).
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
// The clock and id source are injected (Config.Clock, Config.IDs). With
// FixedClock and SequentialIDs a transcript is byte-deterministic.
package engine
