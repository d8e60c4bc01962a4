// Package acp is the Agent Client Protocol front of xcsh (`xcsh --mode
// acp`): an ACP v1 agent over stdio (JSON-RPC 2.0, one message per line)
// that drives the same engine sessions as the RPC front, so Zed, the
// JetBrains IDEs, Neovim and every other ACP editor run this agent with
// no adapter. docs/acp.md is the user's and the wire's description.
//
// # Model
//
// The connection is the project's one JSON-RPC 2.0 connection
// (engine/jsonrpc.Conn, which the extension host speaks too); conn.go
// holds what is ACP's about it: how a line is read, the answers to a bad
// one, $/cancel_request. The reader frames stdin (lineio's line reader:
// 64 MiB lines) and never waits for a session: every message is taken on
// it, in the wire's order (server.go's preempt). A request is routed
// (initialize at once; the session verbs prompt, set_config_option and
// set_mode to their session's queue; new, load, resume, list and close on
// goroutines of their own, since they may read files), each answered by
// whoever ends up with it (Conn.Respond); a response resolves the request
// of ours it answers (the connection's table: permission, elicitation, fs
// and terminal requests, waited for by run and tool goroutines only);
// session/cancel cancels the session's work at once. A line that is not
// JSON gets -32700 and the connection lives on.
//
// Each ACP session is one live session of the session host
// (engine/sessions): an engine.Session with its own executor, tools (in
// the session's cwd), MCP servers and record, built by the program's
// Builder (cmd/xcsh); several live in one process. The host routes the
// requests of a session that is being created, feeds each session's
// requests to its executor in arrival order, and runs one prompt turn at
// a time: a prompt that comes meanwhile waits for it (a follow-up), and
// each is answered from its turn's result (engine.TurnResult) once the
// run and all that follows it (retries, compaction) are over, after its
// last update. This package's session is the engine session's Sink
// (updates.go: events become session/update notifications on its
// executor, in order) and its HostLink (host.go: dialogs become permission
// and elicitation requests).
//
// Delegation (delegate.go): with a client that offers fs/* and
// terminal/*, the file tools read and write the editor's buffers and bash
// runs in the editor's terminals; every tool call's context carries a
// recorder, which ties a terminal and the diffs of a write or edit to
// their call.
//
// stdout holds nothing but ACP: one writer, one Write of one line per
// message; cmd/xcsh points the process's own stdout at stderr before the
// front starts, so nothing else can reach the client.
package acp
