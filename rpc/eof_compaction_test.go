package rpc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// summaryHangs answers a prompt with its text and a usage over the
// window, and never answers a summary request (compaction's) until
// cancelled.
type summaryHangs struct{ started chan struct{} }

func (p summaryHangs) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	if strings.HasPrefix(req.SystemPrompt, "You are a context summarization assistant") {
		close(p.started)
		<-ctx.Done()
		return context.Cause(ctx)
	}
	text := req.Messages[len(req.Messages)-1].(*engine.UserMessage).Text()
	for _, ev := range []engine.StreamEvent{{Kind: engine.StreamTextStart}, {Kind: engine.StreamTextDelta, Delta: text},
		{Kind: engine.StreamTextEnd}, {Kind: engine.StreamUsage, Usage: engine.Usage{Input: 200_000, TotalTokens: 200_000}},
		{Kind: engine.StreamDone, StopReason: engine.StopStop}} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// A compaction still running after stdin EOF ends within the bound: the
// drain waits for running work, but not for minutes of summary calls.
// Here the prompt's answer puts the context over the threshold, and the
// automatic compaction after it hangs. (Without the bound Run never
// returns: the guard fails the test.)
func TestEOFBoundsCompaction(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("word ", 30_000) // 150,000 characters: something to summarise
	in := `{"id":"p1","type":"prompt","message":"` + big + `"}` + "\n"
	p := summaryHangs{started: make(chan struct{})}
	done := make(chan string, 1)
	go func() {
		done <- serve(t, strings.NewReader(in), true, Options{EOFCompactionBound: 50 * time.Millisecond},
			func(c *engine.Config) { c.Provider, c.Model.ContextWindow = p, 100_000 })
	}()
	select {
	case out := <-done:
		select {
		case <-p.started:
		default:
			t.Fatalf("the compaction never asked for a summary:\n%s", out[max(0, len(out)-1500):])
		}
		if !strings.HasSuffix(out, `{"type":"auto_compaction_end","action":"context-full","aborted":true,"willRetry":false}`+"\n") {
			t.Errorf("no aborted compaction at the end of:\n%s", out[max(0, len(out)-1500):])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after EOF while a compaction hung")
	}
}
