package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestGrownWindow(t *testing.T) {
	t.Parallel()
	var c CompactionSettings
	m := Model{ContextWindow: 16384, MaxContextWindow: 131072}
	for _, tc := range []struct {
		tokens int64
		want   int
		ok     bool
	}{
		{8192, 16384, false},   // within 16k's threshold (8,192)
		{8193, 32768, true},    // 32k's threshold is 16,384
		{40000, 65536, true},   // 64k: 49,152
		{111412, 131072, true}, // 128k: 111,412
		{200000, 131072, true}, // as large as it gets; still over
	} {
		if w, ok := c.grownWindow(m, tc.tokens); w != tc.want || ok != tc.ok {
			t.Errorf("grownWindow(%d) = %d, %v; want %d, %v", tc.tokens, w, ok, tc.want, tc.ok)
		}
	}
	if w, ok := c.grownWindow(Model{ContextWindow: 8192}, 100000); w != 8192 || ok {
		t.Errorf("a window that cannot grow: %d, %v", w, ok)
	}
}

// windowProvider answers with usage input tokens, or refuses a request
// for its size while num_ctx (the request's window) is below need.
type windowProvider struct {
	mu      sync.Mutex
	usage   []int64 // input tokens reported by successive answers
	need    int     // refuse windows below this (0: never)
	minMsgs int     // refuse only requests with at least this many messages
	windows []int   // the window of every request
}

func (p *windowProvider) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	p.mu.Lock()
	p.windows = append(p.windows, req.Model.ContextWindow)
	if req.Model.ContextWindow < p.need && len(req.Messages) >= p.minMsgs {
		p.mu.Unlock()
		return &ProviderError{Kind: ErrorContextOverflow, Status: 400, Message: "400 the input length exceeds the context length"}
	}
	in := p.usage[0]
	if len(p.usage) > 1 {
		p.usage = p.usage[1:]
	}
	p.mu.Unlock()
	for _, ev := range []StreamEvent{{Kind: StreamTextStart}, {Kind: StreamTextDelta, Delta: "ok"}, {Kind: StreamTextEnd},
		{Kind: StreamUsage, Usage: Usage{Input: in, Output: 10, TotalTokens: in + 10}}, {Kind: StreamDone, StopReason: StopStop}} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

func windowSession(t *testing.T, p Provider, rec *recorder) *Session {
	t.Helper()
	m := Model{ID: "qwen3:8b", API: "ollama", Provider: "ollama", ContextWindow: 16384, MaxContextWindow: 40960, MaxTokens: 8192}
	return windowSessionWith(t, Config{Provider: p, Model: &m}, rec)
}

// windowSessionWith runs a session of cfg (its clock, ids and sink
// filled in) until the test ends.
func windowSessionWith(t *testing.T, cfg Config, rec *recorder) *Session {
	t.Helper()
	cfg.Clock, cfg.IDs, cfg.Sink, cfg.RetryBaseDelay = DeterministicEpoch, &SequentialIDs{}, rec, 1
	s := New(cfg)
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	t.Cleanup(func() {
		waitIdle(s)
		s.Stop()
		<-done
		s.Close()
	})
	return s
}

func (r *recorder) matching(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, f := range r.frames {
		if strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return out
}

// TestWindowGrowsInsteadOfCompacting: a context past the threshold of the
// window in force grows the window (no compaction, an info notify);
// the next request carries it; at the largest window the session
// compacts with that window's threshold.
func TestWindowGrowsInsteadOfCompacting(t *testing.T) {
	t.Parallel()
	// 9,000 is past 16k's threshold (8,192); 30,000 past 32k's (16,384)
	// and past 40k's too (24,576).
	p := &windowProvider{usage: []int64{9000, 12000, 30000, 100}}
	rec := &recorder{}
	s := windowSession(t, p, rec)
	prompt := func(text string) {
		s.Call(func() {
			if err := s.Prompt(text, PromptOptions{}); err != nil {
				t.Error(err)
			}
		})
		waitIdle(s)
	}
	prompt("one")
	if n := len(rec.matching(`{"type":"auto_compaction_start"`)); n != 0 {
		t.Fatalf("compacted instead of growing")
	}
	var w, max int
	s.Call(func() { w, max = s.set.model.ContextWindow, s.set.model.MaxContextWindow })
	if w != 32768 || max != 40960 {
		t.Fatalf("window %d (at most %d), want 32768", w, max)
	}
	notes := rec.matching(`{"type":"extension_ui_request"`)
	if len(notes) != 1 || !strings.Contains(notes[0], `"message":"ollama/qwen3:8b: context window 16384 → 32768 tokens (the conversation needs it; at most 40960). The server reloads the model at the new size.","notifyType":"info"`) {
		t.Errorf("notify: %v", notes)
	}
	prompt("two")
	prompt("three")
	p.mu.Lock()
	windows := append([]int(nil), p.windows...)
	p.mu.Unlock()
	if len(windows) < 3 || windows[0] != 16384 || windows[1] != 32768 || windows[2] != 32768 {
		t.Errorf("request windows %v, want 16384, 32768, 32768, …", windows)
	}
	// 30,000 grew it to its largest, still past that threshold: compacted.
	s.Call(func() { w = s.set.model.ContextWindow })
	if w != 40960 {
		t.Errorf("window %d, want 40960", w)
	}
	if got := rec.matching(`{"type":"auto_compaction_start"`); len(got) != 1 || !strings.Contains(got[0], `"reason":"threshold"`) {
		t.Errorf("compactions: %v", got)
	}
}

// TestWindowGrowsOnRefusal: a request refused for its size goes again at
// once with the window doubled, in the same assistant message, until it
// fits; no error reaches the host and nothing is compacted.
func TestWindowGrowsOnRefusal(t *testing.T) {
	t.Parallel()
	p := &windowProvider{usage: []int64{100}, need: 40000}
	rec := &recorder{}
	s := windowSession(t, p, rec)
	s.Call(func() {
		if err := s.Prompt("a long paste", PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitIdle(s)
	p.mu.Lock()
	windows := append([]int(nil), p.windows...)
	p.mu.Unlock()
	if want := []int{16384, 32768, 40960}; !slices.Equal(windows, want) {
		t.Errorf("request windows %v, want %v", windows, want)
	}
	if got := rec.matching(`{"type":"message_end","message":{"role":"assistant"`); len(got) != 1 || strings.Contains(got[0], `"stopReason":"error"`) {
		t.Errorf("assistant messages: %v", got)
	}
	if n := len(rec.matching(`{"type":"message_start","message":{"role":"assistant"`)); n != 1 {
		t.Errorf("%d assistant message_start, want 1", n)
	}
	if got := rec.matching(`{"type":"extension_ui_request"`); len(got) != 2 || !strings.Contains(got[1], "32768 → 40960 tokens (the request did not fit; at most 40960)") {
		t.Errorf("notifies: %v", got)
	}
	if n := len(rec.matching(`{"type":"auto_compaction`)); n != 0 {
		t.Errorf("compacted")
	}
}

// TestWindowRefusedAtLargest: at its largest window a refused request
// with a conversation before it takes the usual course: the failure, then
// an overflow compaction.
func TestWindowRefusedAtLargest(t *testing.T) {
	t.Parallel()
	p := &windowProvider{usage: []int64{100}, need: 1 << 30, minMsgs: 2}
	rec := &recorder{}
	s := windowSession(t, p, rec)
	for _, text := range []string{"first", "too long"} {
		s.Call(func() {
			if err := s.Prompt(text, PromptOptions{}); err != nil {
				t.Error(err)
			}
		})
		waitIdle(s)
	}
	if got := rec.matching(`{"type":"auto_compaction_start"`); len(got) == 0 || !strings.Contains(got[0], `"reason":"overflow"`) {
		t.Errorf("compactions: %v", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.windows) < 4 || p.windows[1] != 16384 || p.windows[2] != 32768 || p.windows[3] != 40960 {
		t.Errorf("windows %v", p.windows)
	}
}
