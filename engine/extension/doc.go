// Package extension runs xcsh's extensions: separate processes, in any
// language, that watch and change what a session does, add tools and
// slash commands, and talk to the host's user, the source of the
// extension_ui_request and extension_error frames. docs/extensions.md is
// the protocol; this comment is the model.
//
// # Where it sits
//
// The host is a second client of the session, beside the front (rpc): it
// calls the same typed verbs (engine.Session: Dialog, SendMessage,
// AppendCustomEntry, SelectModel, SetActiveTools, Exec, ...) and depends
// on engine alone. The session reaches it through two seams the engine
// defines: the Sink (Tap wraps the front's, to forward the events an
// extension subscribed to) and engine.Hooks (the points where an answer
// may change something: input, before_agent_start, context, tool_call,
// tool_result, user_bash, the session switches, slash commands).
//
// # Processes and the wire
//
// Each extension is a process in its own process group, started in the
// session's directory with the environment cmd/xcsh gives it (through
// Spec.Wrap when cmd/xcsh confines it: Discover marks the project's own,
// which a sandbox does not run as the user unasked), under a reaper on
// Linux (engine/reaper): whatever it starts, even a process that left its
// group and session, ends with it and with the agent. It speaks JSON-RPC
// 2.0, one message per line, on its stdin and stdout, through a
// jsonrpc.Conn (engine/jsonrpc, the connection the ACP front uses too):
// its requests and notifications are served on the reader (calls.go),
// ours wait in the connection's table; its stderr goes to the agent's
// log, a line at a time. Lines on
// its stdout that are not JSON-RPC are logged and dropped: nothing it
// writes ever reaches the host's stdout. The handshake (initialize) says
// what it subscribes to and registers its tools and commands; Load runs
// every handshake in parallel, bounded by each extension's deadline but
// never past MaxHandshake (the session's ready waits for Load).
//
// # Cost
//
// Nothing is encoded, queued or started for an event or hook no live
// extension subscribed to: the tap and Has read one atomic bit set. Events
// are notifications (never awaited); hooks are requests, sent to the
// subscribed extensions in load order, each seeing the previous answer,
// each bounded by the extension's deadline (paused while a dialog it
// opened waits for the user).
//
// # Faults
//
// A hook that fails (an error answer, a malformed result, no answer in
// time) is one extension_error frame and no change from that extension. An
// extension whose process ends, or that stops reading its input (its
// queue passes QueueBytes), is killed and removed: its tools leave the
// session, its hooks and events stop, extension_error says why, and the
// session goes on. Requests it sends are bounded (quick calls are served
// in order on its reader; at most maxAsync waiting calls at once, the rest
// refused). Shutdown sends session_shutdown, closes stdin, then TERM and
// KILL to the process group, each step bounded by the grace.
//
// # Goroutines
//
// Per extension: a reader (its stdout: responses resolve waiting requests
// at once, in the connection's table, as rpc's pending table does), a writer (its stdin, fed by an
// unblocking queue: the tap runs on the session's executor and must never
// wait for an extension), a stderr copier, a watcher of its exit, and one
// goroutine per waiting call it made. The Host's wait group counts the
// host's; Shutdown waits for them.
package extension
