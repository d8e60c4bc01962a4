// Package client drives an xcsh agent from Go: `xcsh --mode rpc` as a
// child process (Start, or New over streams a host already has) or an
// agent server, `xcsh serve` (Dial). It correlates responses with
// requests, fans events out to subscribers, and serves host tools and
// extension UI dialogs. It depends on the standard library and
// github.com/coder/websocket only; the wire contracts are docs/rpc.md and
// docs/server.md.
//
// # Model
//
// A Client speaks over one connection at a time (a link: a process's
// pipes, a Unix socket, a WebSocket). One reader goroutine per connection
// decodes the frames. Responses go to the request that is waiting for
// them, by the id the client minted ("c1", "c2", …). The agent answers an
// unknown command and a "parse" failure without an id; the client matches
// those to a waiting request by rule (see Client.resolve), so no caller
// waits out its timeout. A prompt is acknowledged at once and may fail to
// start afterwards with a second response of the same id: Prompt returns
// a PromptHandle that receives it.
//
// Everything else is an Event, delivered to every subscription through its
// own unbounded queue: the reader never blocks on a subscriber and nothing
// is dropped. host_tool_call, host_tool_cancel and extension_ui_request
// frames are also acted on: handlers run on their own goroutines, and
// their replies are written under the one writer lock, one frame per Write.
//
// The typed commands belong to a target, the session they go to: the
// Client's is the connection's own session (no sessionId, the frames of
// --mode rpc); a Session's is a server's session by id (OpenSession,
// Attach), whose commands carry its sessionId and whose events their seq.
// A Session keeps its cursor (the server run's epoch and the last event
// delivered) and delivers each event once, in order. One supervisor
// goroutine per client attaches sessions again, after a lagged notice or
// a gap, and, for a Dial client, connects again after a drop (with
// backoff, bounded, stopped by Close) before attaching each from its
// cursor.
//
// Each request is bounded by its ctx or, when ctx has no deadline, by
// Options.Timeout (30 s by default; bash by 310 s); while a Dial client
// reconnects, a request waits within that bound to be sent. Close ends
// everything: it ends the client's input, lets the agent finish for a
// grace period, stops the process or drops the connection, fails pending
// requests with ErrClosed, cancels and waits for handlers, and closes
// subscriptions.
package client
