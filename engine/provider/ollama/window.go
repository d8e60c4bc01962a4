package ollama

import (
	"os"
	"strconv"
	"strings"
)

// The window a discovered model starts with. Ollama reserves memory (the
// KV cache) for every token of the num_ctx a request asks for when it
// loads the model, so asking for the model's trained context (131,072
// tokens for llama3.1: about 16 GiB of cache for an 8B model) fails or
// crawls on a laptop. A discovered model therefore starts with the window
// the server would use itself, and the session doubles it up to the
// trained context when the conversation needs more (engine/window.go):
//
//  1. the model's own num_ctx, when its Modelfile sets one (/api/show's
//     "parameters"): its author sized it;
//  2. else OLLAMA_CONTEXT_LENGTH, the server's setting, read from this
//     process's environment (a server started from the same shell or
//     service file sees the same value; set it here too when it differs);
//  3. else DefaultWindow.
//
// The start is never larger than the trained context. A model whose
// window is configured (modelOverrides or a models.json model with
// contextWindow) keeps that window and never grows.

// DefaultWindow is the window a discovered model starts with when neither
// its Modelfile nor OLLAMA_CONTEXT_LENGTH says: Ollama 0.17's own default
// is 4,096 below 24 GiB of VRAM (32,768 up to 48 GiB, 262,144 above),
// which xcsh's system prompt and tool schemas nearly fill alone; 8,192
// leaves room for a conversation and costs about 1 GiB of cache for an 8B
// model.
const DefaultWindow = 8192

// ServerContextLength is OLLAMA_CONTEXT_LENGTH as the ollama server reads
// it (spaces and quotes trimmed, a decimal count), or 0 when it is unset
// or not a positive number.
func ServerContextLength() int {
	return parseContextLength(os.Getenv("OLLAMA_CONTEXT_LENGTH"))
}

// StartWindow is the window of a model whose Modelfile sets none:
// ServerContextLength(), else DefaultWindow.
func StartWindow() int {
	if n := ServerContextLength(); n > 0 {
		return n
	}
	return DefaultWindow
}

func parseContextLength(s string) int {
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return 0
	}
	return int(n)
}

// modelfileNumCtx is the num_ctx a Modelfile's PARAMETER sets, from
// /api/show's "parameters" text (one "name value" line per parameter);
// 0 when it sets none.
func modelfileNumCtx(params string) int {
	for line := range strings.SplitSeq(params, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
			return parseContextLength(f[1])
		}
	}
	return 0
}

// startWindow is the window a model starts with: start (the Modelfile's
// num_ctx, else the discovery's default), at most trained when that is
// known.
func startWindow(start, trained int) int {
	if trained > 0 && start > trained {
		return trained
	}
	return start
}
