// Package ollamatest is a scripted stand-in for an Ollama server, for the
// tests of the ollama provider and for scenarios that start xcsh against
// "Ollama" without one.
//
// NewServer starts an httptest server on 127.0.0.1 that answers the three
// endpoints the provider uses the way Ollama's own server does, byte for
// byte where it matters: /api/chat streams NDJSON (one chunk per line,
// each written and flushed on its own, Content-Type application/x-ndjson,
// chunks encoded from api.ChatResponse so keys come in Ollama's order);
// /api/tags and /api/show are built from the script's models; errors are
// Ollama's compact {"error":"..."} bodies with their status. Every request
// is recorded (Requests, ChatRequests) so a test can check what was sent:
// options.num_ctx, think, the messages, the tools.
//
// A Script can be built in Go (Text, Thinking, ToolCall, Done, ErrorLine,
// Raw) or loaded from JSON with Parse or Load:
//
//	{
//	  "models": [
//	    {"name": "qwen3:8b", "capabilities": ["completion", "tools", "thinking"],
//	     "architecture": "qwen3", "contextLength": 40960}
//	  ],
//	  "chat": [
//	    {"lines": [
//	      {"model": "qwen3:8b", "created_at": "2026-01-02T03:04:05Z",
//	       "message": {"role": "assistant", "content": "Hi"}, "done": false},
//	      {"model": "qwen3:8b", "created_at": "2026-01-02T03:04:05Z",
//	       "message": {"role": "assistant", "content": ""}, "done": true,
//	       "done_reason": "stop", "prompt_eval_count": 12, "eval_count": 2}
//	    ]},
//	    {"status": 404, "error": "model \"x\" not found, try pulling it first"},
//	    {"status": 429, "headers": {"retry-after": "2"}, "error": "too many requests"},
//	    {"lines": [{"error": "model runner has unexpectedly stopped"}]},
//	    {"lines": ["{\"model\":"], "end": "cut"},
//	    {"lines": [], "end": "stall"}
//	  ]
//	}
//
// "models" lists the installed models: name, capabilities (completion,
// tools, thinking, vision, embedding), architecture (model_info's
// general.architecture, default llama), family (details.family, default
// the architecture), contextLength (model_info's <architecture>.context_length,
// left out when 0), numCtx (a Modelfile's PARAMETER num_ctx, in the reply's
// "parameters"; left out when 0) and show (a reply replacing the built /api/show answer).
// "tags" replaces the built /api/tags answer. "chat" holds one reply per
// /api/chat request, in order; a request past the last gets a 500.
//
// A reply has a status (default 200), headers (added to the response; a
// content type given there replaces the reply's own) and at most one of:
// error (the body
// becomes {"error":...}), body (written as is) and lines. A line given as
// a JSON object is written compacted, exactly as given; a line given as a
// JSON string is written verbatim, which scripts lines that are not JSON.
// Every line is followed by a newline. "end" says how the response ends:
// "" normally, "cut" drops the connection without the final chunk, "stall"
// keeps it open and silent until the client goes away or Close is called.
// Parse rejects unknown keys and unknown end values.
package ollamatest
