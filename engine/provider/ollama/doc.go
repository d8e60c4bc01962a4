// Package ollama is the engine.Provider for a local Ollama server, through
// its native /api/chat endpoint and the official client package
// github.com/ollama/ollama/api.
//
// # Why the native API
//
// Ollama's OpenAI-compatible endpoint ignores the context size a client
// asks for and runs the model with the server's default num_ctx (a few
// thousand tokens), silently dropping the oldest messages of a long
// conversation. /api/chat takes options.num_ctx, so every request carries
// the model's ContextWindow and the server sizes its KV cache for it.
//
// # Requests
//
// The host is Model.BaseURL (a trailing /v1, as the original's discovered
// models carry, is removed) or else Host(): $OLLAMA_HOST or
// http://127.0.0.1:11434. The system prompt is a "system" message; user
// messages carry their text and their images as raw bytes; assistant
// messages carry their text, their thinking (in the thinking field) and
// their tool calls; tool results become "tool" messages with tool_name and
// tool_call_id. Tools are sent as functions whose parameters are the JSON
// Schema decoded into the api's types: Ollama's server decodes a request
// into the same types, so keywords they have no field for (nested
// "required", "additionalProperties", "minimum", "default", "format",
// "oneOf", ...) never reach the model's template whatever a client sends;
// that loss is Ollama's, not this adapter's.
//
// Thinking: Ollama's "think" is a boolean for most models and a level
// (low, medium, high) for gpt-oss, whose template is rendered by the
// harmony parser; the server answers 400 to a level for any other model
// and to think:true for a model without the thinking capability. So a
// model with Reasoning false gets no think field at all; a reasoning model
// gets think:false when the level is "" or off (sent explicitly because
// such models think by default), and otherwise think:true, or the level
// (minimal→low, xhigh→high) when the model takes levels: its id contains
// "gpt-oss", or Model.Compat has "thinkLevels": true (or false to turn the
// name rule off). Discover describes boolean models with the single level
// high (the session's selector then cycles off ↔ high, which is all such a
// model can do) and gpt-oss models with low..high.
//
// options.num_ctx is Model.ContextWindow when positive: the window in
// force, which Discover starts small (window.go: the Modelfile's num_ctx,
// else OLLAMA_CONTEXT_LENGTH, else DefaultWindow) and the session grows up
// to the trained context (Model.MaxContextWindow); options.num_predict
// is Model.MaxTokens when positive (without it Ollama generates until the
// context is full, so a looping model would never stop).
//
// # Responses
//
// The api client calls back once per NDJSON line; a provider.StreamWriter
// emits the events and keeps the block contract. message.thinking and
// message.content become thinking and text blocks (one block at a time: a
// change of kind closes the open block first). Ollama sends each tool call
// whole, so each becomes StreamToolCallStart, one StreamToolCallDelta with
// the compact arguments JSON and StreamToolCallEnd carrying the same
// object (StreamWriter.ToolCall). A call without an id gets
// call_<n>, n counting from the number of tool calls already in the
// request's history, so minted ids are deterministic and do not repeat
// within a conversation. The done line gives the usage (input =
// prompt_eval_count, output = eval_count) and StreamDone: done_reason
// "length" → length, else toolUse when the response had tool calls, else
// stop.
//
// Usage.Input is the prompt's token count as the runner evaluated it,
// whether or not its KV cache already held a prefix, and after any
// truncation. Ollama does not report truncation (it drops old messages
// when the rendered prompt exceeds num_ctx), so the engine compares Input
// with its own estimate of the request to warn about it.
//
// # Failures
//
// Every failure is an *engine.ProviderError whose Err is the cause: a 404
// is a model that is not pulled (the message says how to pull it), 429 a
// rate limit, 401/403 an auth failure, 5xx (503 is Ollama's "server busy")
// overloaded, a message about the context length a context overflow; a
// server that cannot be reached is a transport failure naming the host; an
// {"error":...} line in the middle of a stream keeps Ollama's wording; a
// stream that ends without its done line (cut connection) or has a line
// whose fields do not decode is a transport failure. (The api client
// reports a line that is not JSON at all exactly as it reports an error
// line, with the line as the error's text, so that one is kept as an
// error of kind other.) A cancelled ctx returns
// ctx.Err(). There are no retries here: the engine owns them. The one
// request sent twice is a different request: a model the server refuses
// tools for (400 "... does not support tools", for a model discovery did
// not describe) is asked again at once without them, with a StreamNotice
// between (the first attempt streamed nothing), and the Provider remembers
// the model so later calls leave the tools out from the start.
//
// The package ollamatest is a scripted stand-in for the server, for tests.
package ollama
