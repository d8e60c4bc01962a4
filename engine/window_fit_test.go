package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// runOnce prompts s once and waits for the run to end.
func runOnce(t *testing.T, s *Session, text string) {
	t.Helper()
	s.Call(func() {
		if err := s.Prompt(text, PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitIdle(s)
}

// errorOf is the errorMessage of the one assistant message_end recorded.
func errorOf(t *testing.T, rec *recorder) string {
	t.Helper()
	ends := rec.matching(`{"type":"message_end","message":{"role":"assistant"`)
	if len(ends) != 1 {
		t.Fatalf("%d assistant messages: %v", len(ends), ends)
	}
	var f struct {
		Message struct {
			StopReason   string `json:"stopReason"`
			ErrorMessage string `json:"errorMessage"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(ends[0]), &f); err != nil {
		t.Fatal(err)
	}
	if f.Message.StopReason != "error" {
		t.Fatalf("stopReason %q", f.Message.StopReason)
	}
	return f.Message.ErrorMessage
}

// noRecovery checks that nothing compacted or retried the failure: the
// message must read as neither an overflow nor a transient failure.
func noRecovery(t *testing.T, rec *recorder, msg string) {
	t.Helper()
	if n := len(rec.matching(`{"type":"auto_compaction`)) + len(rec.matching(`{"type":"auto_retry`)); n != 0 {
		t.Errorf("%d compaction or retry frames", n)
	}
	a := &AssistantMessage{StopReason: StopError, ErrorMessage: msg}
	if isContextOverflow(a, nil) || retryable(a, nil) {
		t.Errorf("the message reads as an overflow or a transient failure: %q", msg)
	}
}

// TestCannotFitBeforeSending: a system prompt and tool schemas that alone
// fill the largest window the model may have fail the run before any
// request, with their sizes, the window and the fix.
func TestCannotFitBeforeSending(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		model Model
		want  string
	}{
		{"a fixed window", Model{ID: "tiny", API: "ollama", Provider: "lab", ContextWindow: 4096, MaxTokens: 64},
			"lab/tiny's context window of 4096 tokens, before any message."},
		{"at most its trained context", Model{ID: "qwen3:8b", API: "ollama", Provider: "ollama", ContextWindow: 2048, MaxContextWindow: 4096, MaxTokens: 64},
			"ollama/qwen3:8b's context window of 4096 tokens (the largest it may grow to), before any message."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &windowProvider{usage: []int64{10}}
			rec := &recorder{}
			m := tc.model
			s := windowSessionWith(t, Config{Provider: p, Model: &m, SystemPrompt: strings.Repeat("s", 20000), Tools: []Tool{&namedTool{name: "read"}}}, rec)
			runOnce(t, s, "hi")
			msg := errorOf(t, rec)
			want := "The request cannot fit: the system prompt (about 5000 tokens) and the schema of 1 tool (about 7 tokens) alone need more than " + tc.want +
				" Use a model with a larger context window (or a larger contextWindow in models.json when the model takes more), fewer tools (--tools with only the ones needed, or --no-tools), or a shorter system prompt (context files such as AGENTS.md, --system-prompt, --append-system-prompt)."
			if msg != want {
				t.Errorf("error\n%q\nwant\n%q", msg, want)
			}
			p.mu.Lock()
			if len(p.windows) != 0 {
				t.Errorf("requests sent: %v", p.windows)
			}
			p.mu.Unlock()
			noRecovery(t, rec, msg)
		})
	}
}

// TestCannotFitFitsLargerWindow: a fixed part that fits only a grown
// window is sent; the window grows on the refusal.
func TestCannotFitFitsLargerWindow(t *testing.T) {
	t.Parallel()
	p := &windowProvider{usage: []int64{10}, need: 4096}
	rec := &recorder{}
	m := Model{ID: "qwen3:8b", API: "ollama", Provider: "ollama", ContextWindow: 2048, MaxContextWindow: 4096, MaxTokens: 64}
	s := windowSessionWith(t, Config{Provider: p, Model: &m, SystemPrompt: strings.Repeat("s", 10000)}, rec)
	runOnce(t, s, "hi")
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.windows) != 2 || p.windows[1] != 4096 {
		t.Errorf("windows %v, want 2048 then 4096", p.windows)
	}
}

// TestCannotFitAfterRefusal: refused for its size at the largest window
// with only the prompt in it, the request holds nothing to compact: the
// run's error gives the three sizes (the server counts more than the
// estimate) instead of the 400 and a skipped compaction.
func TestCannotFitAfterRefusal(t *testing.T) {
	t.Parallel()
	p := &windowProvider{usage: []int64{10}, need: 1 << 30}
	rec := &recorder{}
	m := Model{ID: "tiny:latest", API: "ollama", Provider: "ollama", ContextWindow: 4096, MaxContextWindow: 8192, MaxTokens: 64}
	s := windowSessionWith(t, Config{Provider: p, Model: &m, SystemPrompt: strings.Repeat("s", 8000)}, rec)
	runOnce(t, s, strings.Repeat("p", 400))
	msg := errorOf(t, rec)
	want := "The request cannot fit: the server refused it for its size at ollama/tiny:latest's context window of 8192 tokens (the largest it may grow to), and it holds nothing to compact: " +
		"the system prompt (about 2000 tokens), with the prompt (about 100 tokens; estimates at 4 characters a token, the server counts more). "
	if !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, " Or send a shorter prompt.") {
		t.Errorf("error\n%q\nwant it to start\n%q", msg, want)
	}
	noRecovery(t, rec, msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.windows) != 2 || p.windows[0] != 4096 || p.windows[1] != 8192 {
		t.Errorf("windows %v, want 4096 then 8192", p.windows)
	}
}
