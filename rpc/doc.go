// Package rpc is the JSONL front of xcsh (`xcsh --mode rpc`): reading of
// stdin, classification and dispatch of commands, stdout, the table of
// requests waiting for the host, and the mapping of errors to wire
// strings. The line framing of stdin and the single writer of stdout are
// engine/lineio's Reader and Writer, which the ACP front shares.
//
// # Model
//
// Three goroutines move input. The reader frames stdin (LF lines, CR and
// BOM stripped, blank lines skipped, a line cap enforced without buffering
// the whole line: lineio.Reader) and validates each line; it never waits for the session:
// preemptive commands cancel their activities at once by kind (the preempt
// table: abort, abort_and_prompt, abort_bash, abort_retry), replies to our
// requests (host_tool_result, host_tool_update, extension_ui_response)
// are decoded into the engine's types and resolve their waiters through
// the pending table, and everything else goes to the inbox. Every field of
// a command, the envelope's type and id included, is read by one rule,
// JSON.parse's: exact names, the last duplicate wins (jsonread.go).
//
// The inbox is the one queue of input and decides its order. The
// dispatcher starts once the session is ready (engine.Session.Ready: its
// resources read, after the ready frame was written); then it pops the
// oldest item and feeds it to the session's serial
// executor, except while a command holds the input behind it until it has
// answered (the holds table): abort lets get_state, the preemptive frames
// and replies through while its run winds down; the commands that switch,
// write or rename a session hold everything. The dispatcher is the
// goroutine that blocks when the executor's queue is full or stdout is
// stalled, so the reader keeps reading aborts and replies.
//
// Each command runs on the executor: its handler decodes the arguments,
// calls one verb of the session (engine.Session) and encodes the answer,
// with no decision of its own beyond argument shape and wire text;
// errors.go maps the engine's typed errors to the original's texts.
// wire.go lists every command with the types its handler decodes into and
// answers with (Commands): the protocol's schema (rpc/schema, `xcsh
// schema`) is generated from it, and a test holds it to the handlers.
// Events of a run reach the Server as the engine.Sink on the same
// executor, so responses and events have a single order. Frames are
// written to stdout by whoever produced them, one Write of one line each,
// already serialised by the executor; a blocked write blocks its producer,
// so nothing on the protocol path is ever dropped.
//
// Failures have three shapes: a known command that fails answers with its
// id; an unknown type answers without id (as the reference documents);
// input that is not a JSON object, or a handler panic, answers with the
// uncorrelated "parse" frame. The server never exits on bad input.
//
// Run ends on stdin EOF (after the running work; a compaction only within
// Options.EOFCompactionBound of the drain's start), on cancellation (a
// signal: the run is aborted) or when a stdout write fails (the host has
// gone: the run is aborted and Run returns ErrOutputClosed). Once Run
// returns nothing more reaches stdout, so it only ever holds whole frames.
package rpc
