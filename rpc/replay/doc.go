// Package replay checks a JSONL conversation against a recorded one, in
// either direction: `xcsh replay TRANSCRIPT` drives the agent with the
// transcript's inputs and compares what it writes (agent mode, Agent);
// `xcsh replay --host CMD TRANSCRIPT` runs a host program against a
// scripted agent that plays the transcript's outputs and checks what the
// host sends (host mode, Host). So the suite's documented flows are a
// contract a host's own CI can run, with no model.
//
// # Transcripts
//
// A transcript is a JSONL file (Read, Transcript.Encode). Its first line is
// the header: the agent's command-line arguments, extra environment and
// the files its work directory needs (the fake provider's script, a
// context file). Each later line is one event, in the order they are
// replayed:
//
//	{"out":FRAME}      a frame the agent wrote, byte for byte
//	{"outRaw":"text"}  a line the agent wrote that is not JSON
//	{"in":FRAME}       a line the host wrote
//	{"inRaw":"text"}   a line the host wrote that is not JSON
//	{"close":true}     the host closed the agent's stdin
//	{"exit":0}         the agent exited with this code (the last line)
//
// An input stands right after the output the recording waited for before
// sending it (the suite's `rpc wait`): agent mode sends it once that
// frame has arrived, so flows whose answer depends on timing (an abort
// mid-stream, a steer during a tool call) replay as recorded. The suite
// writes transcripts with `rpc replay` (rpc/rpctest); they live in
// golden/replay/.
//
// # Normalisation
//
// Agent mode compares frames as the suite's golden command does: the
// work directory is written $WORK and the ready frame's schema hash
// $SCHEMA_HASH (NormaliseWork), and everything else is compared byte for
// byte; host mode plays the binary's own hash (HostOptions.SchemaHash). Host mode compares the host's lines as JSON
// values (key order and spacing are the host's), with three allowances a
// host needs: the ids of its commands are its own (matched by position,
// and the scripted agent answers with the host's id), keys named
// "timestamp" are not compared, and $WORK is the host's working
// directory. docs/testing.md is the user's guide.
package replay
