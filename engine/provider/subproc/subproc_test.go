package subproc

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// pipeStart connects a Provider to Serve(stream) through pipes, as the
// helper's stdin and stdout; it counts the helpers started, and kill ends
// the newest as if the process died.
type pipeStart struct {
	stream  StreamFunc
	started atomic.Int32
	mu      sync.Mutex
	kill    func()
}

func (ps *pipeStart) start() (io.WriteCloser, io.Reader, func() error, error) {
	ps.started.Add(1)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(inR, outW, ps.stream)
		outW.Close()
		done <- err
	}()
	ps.mu.Lock()
	ps.kill = func() { inR.CloseWithError(errors.New("killed")); outW.CloseWithError(io.ErrUnexpectedEOF) }
	ps.mu.Unlock()
	return inW, outR, func() error { return <-done }, nil
}

func newPiped(t *testing.T, stream StreamFunc) (*Provider, *pipeStart) {
	t.Helper()
	ps := &pipeStart{stream: stream}
	p := New(Options{Name: "test-helper", Start: ps.start, APIKey: func(m engine.Model) string { return "key-of-" + m.Provider }})
	t.Cleanup(func() { p.Close() })
	return p, ps
}

func TestRequestEventsAndKeyCrossTheWire(t *testing.T) {
	t.Parallel()
	var got *engine.Request
	var gotKey string
	events := []engine.StreamEvent{
		{Kind: engine.StreamThinkingStart},
		{Kind: engine.StreamThinkingDelta, Delta: "hmm <&>"},
		{Kind: engine.StreamThinkingEnd, Signature: "sig"},
		{Kind: engine.StreamToolCallStart, ToolCallID: "t1", ToolName: "read"},
		{Kind: engine.StreamToolCallDelta, ToolCallID: "t1", ToolName: "read", Delta: `{"path":"a"}`},
		{Kind: engine.StreamToolCallEnd, ToolCallID: "t1", ToolName: "read", Arguments: []byte(`{"path":"a"}`)},
		{Kind: engine.StreamRedactedThinking, Delta: "b64"},
		{Kind: engine.StreamUsage, Usage: engine.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, TotalTokens: 10}},
		{Kind: engine.StreamDone, StopReason: engine.StopToolUse, ResponseID: "r1"},
	}
	p, _ := newPiped(t, func(ctx context.Context, req *engine.Request, key string, fn func(engine.StreamEvent) error) error {
		got, gotKey = req, key
		for _, e := range events {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
	req := &engine.Request{
		Model:        engine.Model{ID: "m", API: "bedrock-converse-stream", Provider: "amazon-bedrock", BaseURL: "http://x", Reasoning: true, MaxTokens: 10, Headers: map[string]string{"X-A": "b"}},
		SystemPrompt: "sys",
		Messages: []engine.Message{
			&engine.UserMessage{Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "hi"}, {Type: engine.BlockImage, MimeType: "image/png", Data: "AAAA"}}, Attribution: "user", Timestamp: 1},
			&engine.AssistantMessage{API: "bedrock-converse-stream", Provider: "amazon-bedrock", Model: "m", StopReason: engine.StopToolUse, Timestamp: 2,
				Content: []engine.ContentBlock{{Type: engine.BlockThinking, Thinking: "t", ThinkingSignature: "s"}, {Type: engine.BlockToolCall, ID: "t0", Name: "ls", Arguments: []byte(`{}`)}}},
			&engine.ToolResultMessage{ToolCallID: "t0", ToolName: "ls", IsError: true, Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "no"}}, Timestamp: 3},
		},
		Tools:         []engine.ToolSpec{{Name: "read", Description: "Read", Parameters: []byte(`{"type":"object"}`)}},
		ThinkingLevel: engine.ThinkingMedium,
		Output:        &engine.OutputFormat{Name: "answer", Schema: []byte(`{"type":"string"}`)},
	}
	var seen []engine.StreamEvent
	if err := p.Stream(context.Background(), req, func(e engine.StreamEvent) error { seen = append(seen, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, events) {
		t.Errorf("events:\n%+v\nwant\n%+v", seen, events)
	}
	if gotKey != "key-of-amazon-bedrock" {
		t.Errorf("key %q", gotKey)
	}
	if !reflect.DeepEqual(got.Model, req.Model) || got.SystemPrompt != req.SystemPrompt || got.ThinkingLevel != req.ThinkingLevel ||
		!reflect.DeepEqual(got.Tools, req.Tools) || !reflect.DeepEqual(got.Output, req.Output) {
		t.Errorf("request:\n%+v\nwant\n%+v", got, req)
	}
	for i := range req.Messages {
		if !reflect.DeepEqual(got.Messages[i], req.Messages[i]) {
			t.Errorf("message %d:\n%+v\nwant\n%+v", i, got.Messages[i], req.Messages[i])
		}
	}
}

func TestProviderErrorCrossesAsItsKindAndWait(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1767225600000)
	p, _ := newPiped(t, func(context.Context, *engine.Request, string, func(engine.StreamEvent) error) error {
		return &engine.ProviderError{Kind: engine.ErrorRateLimit, Status: 429, Message: "Throttling error: slow down", RetryAfter: 3 * time.Second, RetryAt: at, Err: errors.New("sdk")}
	})
	err := p.Stream(context.Background(), &engine.Request{}, func(engine.StreamEvent) error { return nil })
	var pe *engine.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v", err)
	}
	if pe.Kind != engine.ErrorRateLimit || pe.Status != 429 || pe.Message != "Throttling error: slow down" || pe.RetryAfter != 3*time.Second || !pe.RetryAt.Equal(at) || !errors.Is(err, ErrHelper) {
		t.Errorf("got %+v", pe)
	}
}

func TestCancelReachesTheHelper(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	p, _ := newPiped(t, func(ctx context.Context, _ *engine.Request, _ string, fn func(engine.StreamEvent) error) error {
		fn(engine.StreamEvent{Kind: engine.StreamTextStart})
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	err := p.Stream(ctx, &engine.Request{}, func(e engine.StreamEvent) error {
		cancel() // abort once the answer began
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the helper's call was not cancelled")
	}
}

func TestConcurrentCallsKeepTheirEvents(t *testing.T) {
	t.Parallel()
	p, ps := newPiped(t, func(_ context.Context, req *engine.Request, _ string, fn func(engine.StreamEvent) error) error {
		for i := 0; i < 50; i++ {
			if err := fn(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: req.SystemPrompt}); err != nil {
				return err
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			err := p.Stream(context.Background(), &engine.Request{SystemPrompt: name}, func(e engine.StreamEvent) error {
				if e.Delta != name {
					t.Errorf("call %s got %q", name, e.Delta)
				}
				n++
				return nil
			})
			if err != nil || n != 50 {
				t.Errorf("call %s: %d events, %v", name, n, err)
			}
		}()
	}
	wg.Wait()
	if n := ps.started.Load(); n != 1 {
		t.Errorf("%d helpers started for concurrent calls, want 1", n)
	}
}

func TestHelperDeathFailsTheCallAndTheNextStartsAnother(t *testing.T) {
	t.Parallel()
	var ps *pipeStart
	first := true
	p, ps := newPiped(t, func(ctx context.Context, _ *engine.Request, _ string, fn func(engine.StreamEvent) error) error {
		if first {
			first = false
			fn(engine.StreamEvent{Kind: engine.StreamTextStart})
			<-ctx.Done() // until the helper "dies"
			return ctx.Err()
		}
		return fn(engine.StreamEvent{Kind: engine.StreamDone, StopReason: engine.StopStop})
	})
	err := p.Stream(context.Background(), &engine.Request{}, func(engine.StreamEvent) error {
		ps.mu.Lock()
		kill := ps.kill
		ps.mu.Unlock()
		kill()
		return nil
	})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorTransport || !strings.Contains(pe.Message, "test-helper ended") {
		t.Fatalf("error %v, want a transport failure naming the helper", err)
	}
	// The engine retries: a new helper serves it.
	var done bool
	for i := 0; i < 100 && !done; i++ {
		err = p.Stream(context.Background(), &engine.Request{}, func(e engine.StreamEvent) error {
			done = e.Kind == engine.StreamDone
			return nil
		})
		if err != nil {
			// The old helper may still be ending: its end is the
			// retry's cue.
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !done || ps.started.Load() != 2 {
		t.Errorf("after the death: done %v, %d helpers started (want 2), last error %v", done, ps.started.Load(), err)
	}
}

func TestMissingHelperSaysHowToInstallIt(t *testing.T) {
	t.Parallel()
	p := New(Options{Name: "xcsh-no-such-helper", Hint: "Install it with go install."})
	err := p.Stream(context.Background(), &engine.Request{Model: engine.Model{API: "bedrock-converse-stream"}}, func(engine.StreamEvent) error { return nil })
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorOther || !strings.Contains(pe.Message, "xcsh-no-such-helper") ||
		!strings.Contains(pe.Message, "bedrock-converse-stream") || !strings.HasSuffix(pe.Message, "Install it with go install.") {
		t.Fatalf("error %v", err)
	}
}

func TestServeEndsWithItsInputAndCancelsItsCalls(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	started := make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		ended <- Serve(inR, io.Discard, func(ctx context.Context, _ *engine.Request, _ string, _ func(engine.StreamEvent) error) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	io.WriteString(inW, `{"id":1,"request":{"model":{"id":"m"},"messages":[]}}`+"\n")
	<-started
	inW.Close()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end with its input")
	}
}
