// Package fakeprovider is a model-free, byte-deterministic engine.Provider.
// Hosts select it with --provider fake to test against the agent without a
// network or a model; the test suites of xcsh drive their transcripts with it.
//
// # The model
//
// A Provider answers one model call at a time, numbered from 1 in the order
// Stream is called. It runs in one of two modes:
//
//   - Scripted (New, with a Script from Load or Parse): call n replays turn
//     n of the script. A turn may first check the request (its expect
//     object) and fails the call with an *engine.ProviderError naming every
//     unmet expectation; then its steps emit text, thinking and tool-call
//     blocks, usage, an error or a block until cancelled, and the call ends
//     with StreamDone. An echo step answers with a part of the request (the
//     system prompt, the tools, the last user text or the context), so a
//     user sees what the agent sends without a server of their own. A
//     looping script cycles through its turns; otherwise
//     a call past the last turn fails.
//   - Demo (Demo): no script; the reply is computed from the last message
//     of the request (echo, demo:think, demo:error, demo:block, demo:tool,
//     demo:echo, tool-result summaries).
//
// Nothing depends on the wall clock or on randomness: the same requests give
// the same events, byte for byte. The only waiting is a block step (or
// demo:block), which returns ctx.Err() once ctx is done. Cancellation is
// checked before every event, and an error returned by the callback is
// returned unchanged.
//
// Scripts are validated entirely by Parse: unknown keys, steps with no or
// several kinds and tool-call argument deltas that do not form a JSON object
// are errors that name the file, the turn and the step (both 1-based). docs/fakeprovider.md is the format reference.
//
// Calls are expected to be sequential; the call counter is still guarded by
// a mutex, so concurrent calls are race-free (though their order, and hence
// the turns they get, is then up to the scheduler).
package fakeprovider
