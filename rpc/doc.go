// Package rpc is the JSONL front of xcsh (`xcsh --mode rpc`): line framing
// of stdin, classification and dispatch of commands, the single writer of
// stdout, and the mapping of errors to wire strings.
//
// # Model
//
// Three goroutines matter. The reader frames stdin (LF lines, CR and BOM
// stripped, blank lines skipped, a line cap enforced without buffering the
// whole line), validates each line and queues it on the session actor;
// preemptive commands (abort) act before they queue. The session actor
// (engine.Session) runs each command in arrival order and writes its
// response; events of a run reach the Server as the engine.Sink, on the
// same actor, so responses and events have a single order. The writer owns
// stdout: every frame is one Write of one line, and senders block when the
// host stops reading, so nothing on the protocol path is ever dropped.
//
// Failures have three shapes: a known command that fails answers with its
// id; an unknown type answers without id (as the reference documents);
// input that is not a JSON object, or a handler panic, answers with the
// uncorrelated "parse" frame. The server never exits on bad input.
package rpc
