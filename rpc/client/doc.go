// Package client drives an xcsh agent in RPC mode (`xcsh --mode rpc`) from
// Go: it starts the binary (or speaks over streams a host already has),
// correlates responses with requests, fans events out to subscribers, and
// serves host tools and extension UI dialogs. It depends on the standard
// library only; the wire contract is docs/rpc.md.
//
// # Model
//
// One reader goroutine decodes the agent's stdout. Responses go to the
// request that is waiting for them, by the id the client minted ("c1",
// "c2", …). The agent answers an unknown command and a "parse" failure
// without an id; the client matches those to a waiting request by rule (see
// Client.Call), so no caller waits out its timeout. A prompt is
// acknowledged at once and may fail to start afterwards with a second
// response of the same id: Prompt returns a PromptHandle that receives it.
//
// Everything else is an Event, delivered to every subscription through its
// own unbounded queue: the reader never blocks on a subscriber and nothing
// is dropped. host_tool_call, host_tool_cancel and extension_ui_request
// frames are also acted on: handlers run on their own goroutines, and
// their replies are written under the one writer lock, one frame per Write.
//
// Each request is bounded by its ctx or, when ctx has no deadline, by
// Options.Timeout (30 s by default; bash by 310 s). Close ends everything:
// it closes stdin, lets the agent finish for a grace period, stops it,
// fails pending requests with ErrClosed, cancels and waits for handlers,
// and closes subscriptions.
package client
