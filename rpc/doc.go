// Package rpc is the JSONL front of xcsh (`xcsh --mode rpc`): line framing
// of stdin, classification and dispatch of commands, the single writer of
// stdout, and the mapping of errors to wire strings.
//
// # Model
//
// The reader goroutine frames stdin (LF lines, CR and BOM stripped, blank
// lines skipped, a line cap enforced without buffering the whole line),
// validates each line and posts it to the session's serial executor;
// preemptive commands (abort, abort_bash) act before they queue. Each
// command runs on the executor in arrival order and writes its response;
// events of a run reach the Server as the engine.Sink, on the same
// executor, so responses and events have a single order. Frames are written
// to stdout by whoever produced them, one Write of one line each, already
// serialised by the executor; a blocked write blocks its producer, so
// nothing on the protocol path is ever dropped.
//
// Failures have three shapes: a known command that fails answers with its
// id; an unknown type answers without id (as the reference documents);
// input that is not a JSON object, or a handler panic, answers with the
// uncorrelated "parse" frame. The server never exits on bad input.
//
// Run ends on stdin EOF (after the running work), on cancellation (a
// signal: the run is aborted) or when a stdout write fails (the host has
// gone: the run is aborted and Run returns ErrOutputClosed). Once Run
// returns nothing more reaches stdout, so it only ever holds whole frames.
package rpc
