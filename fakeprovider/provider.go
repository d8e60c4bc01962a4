package fakeprovider

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// Provider is a deterministic engine.Provider: it replays a Script, or runs
// the built-in demo. Stream never sleeps and never uses randomness; the only
// call that waits is a block step (or demo:block), which waits for ctx.
type Provider struct {
	// Log, when set, receives one line per failed call of a script: an
	// unmet expectation or a call past the last turn (the CLI sets stderr).
	// Set it before the first call.
	Log io.Writer

	script *Script // nil for the demo
	model  engine.Model

	mu    sync.Mutex
	calls int // guarded by mu: Stream calls so far; call n replays turn n
}

var _ engine.Provider = (*Provider)(nil)

// New returns a provider that replays script. A nil script has no turns.
func New(script *Script) *Provider {
	if script == nil {
		script = &Script{name: "empty", base: "empty", model: defaultModel("empty")}
	}
	return &Provider{script: script, model: script.model}
}

// Model returns the model the provider stands for (a fresh copy each time).
func (p *Provider) Model() engine.Model {
	m := p.model
	m.Input = append([]string(nil), m.Input...)
	if m.Thinking != nil {
		t := *m.Thinking
		m.Thinking = &t
	}
	return m
}

// nextCall counts a call and returns its 1-based number.
func (p *Provider) nextCall() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return p.calls
}

// Stream implements engine.Provider. Every call consumes one turn (or one
// demo reply), even when it fails or is cancelled.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	n := p.nextCall()
	if req == nil {
		req = &engine.Request{}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e := &emitter{ctx: ctx, fn: fn}
	if p.script == nil {
		return p.demo(e, n, req)
	}
	return p.replay(e, n, req)
}

func (p *Provider) replay(e *emitter, n int, req *engine.Request) error {
	s := p.script
	if len(s.turns) == 0 || (!s.loop && n > len(s.turns)) {
		return p.fail(fmt.Sprintf("fake provider: script %s has no turn for call %d (it has %d)", s.base, n, len(s.turns)))
	}
	t := &s.turns[(n-1)%len(s.turns)]
	if t.expect != nil {
		if fails := t.expect.check(req); len(fails) > 0 {
			return p.fail(fmt.Sprintf("fake provider: expectation failed on call %d: %s", n, strings.Join(fails, "; ")))
		}
	}
	tools := 0
	for i := range t.steps {
		st := &t.steps[i]
		var err error
		switch st.kind {
		case kindText:
			err = e.block(engine.StreamTextStart, engine.StreamTextDelta, engine.StreamTextEnd, st.deltas, st.repeat, "")
		case kindThinking:
			err = e.block(engine.StreamThinkingStart, engine.StreamThinkingDelta, engine.StreamThinkingEnd, st.deltas, st.repeat, st.signature)
		case kindToolCall:
			tools++
			id := st.toolID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", n, tools)
			}
			err = e.toolCall(id, st.toolName, st.argDeltas, st.args)
		case kindUsage:
			err = e.emit(engine.StreamEvent{Kind: engine.StreamUsage, Usage: st.usage})
		case kindError:
			if err = e.ctx.Err(); err == nil {
				err = scriptError(st.status, st.message, st.retryAfterMs)
			}
		case kindBlock:
			err = e.wait()
		case kindEcho:
			err = e.whole(echoText(req, st.echo))
		}
		if err != nil {
			return err
		}
	}
	return e.emit(engine.StreamEvent{Kind: engine.StreamDone, StopReason: t.stopReason, ResponseID: t.responseID})
}

// fail reports a mismatch between the script and the engine's calls: it
// logs msg and returns it as a provider error.
func (p *Provider) fail(msg string) error {
	if p.Log != nil {
		fmt.Fprintln(p.Log, msg)
	}
	return &engine.ProviderError{Message: msg}
}

// emitter sends events to the engine's callback, checking for cancellation
// before each one.
type emitter struct {
	ctx   context.Context
	fn    func(engine.StreamEvent) error
	runes int // runes of all deltas sent, for the demo's usage
}

func (e *emitter) emit(ev engine.StreamEvent) error {
	if err := e.ctx.Err(); err != nil {
		return err
	}
	e.runes += utf8.RuneCountInString(ev.Delta)
	return e.fn(ev)
}

// block sends one text or thinking block: start, the deltas repeat times, end.
func (e *emitter) block(start, delta, end engine.StreamEventKind, deltas []string, repeat int, sig string) error {
	if err := e.emit(engine.StreamEvent{Kind: start}); err != nil {
		return err
	}
	for range repeat {
		for _, d := range deltas {
			if err := e.emit(engine.StreamEvent{Kind: delta, Delta: d}); err != nil {
				return err
			}
		}
	}
	return e.emit(engine.StreamEvent{Kind: end, Signature: sig})
}

// whole sends one text block as a single delta (an echoed system prompt
// in word chunks would repeat its growing partial in every update).
func (e *emitter) whole(s string) error {
	return e.block(engine.StreamTextStart, engine.StreamTextDelta, engine.StreamTextEnd, []string{s}, 1, "")
}

// toolCall sends one tool call. The arguments are copied so the engine may
// keep them while a looping script replays the same turn.
func (e *emitter) toolCall(id, name string, deltas []string, args []byte) error {
	if err := e.emit(engine.StreamEvent{Kind: engine.StreamToolCallStart, ToolCallID: id, ToolName: name}); err != nil {
		return err
	}
	for _, d := range deltas {
		if err := e.emit(engine.StreamEvent{Kind: engine.StreamToolCallDelta, ToolCallID: id, Delta: d}); err != nil {
			return err
		}
	}
	return e.emit(engine.StreamEvent{Kind: engine.StreamToolCallEnd, ToolCallID: id, ToolName: name,
		Arguments: append([]byte(nil), args...)})
}

// wait blocks until the call is cancelled: the one place the provider waits.
func (e *emitter) wait() error {
	<-e.ctx.Done()
	return e.ctx.Err()
}

// scriptError is a scripted failure, typed as a real adapter would type
// it from the status, so the engine's retry treats it the same way.
func scriptError(status int, message string, retryAfterMs int) *engine.ProviderError {
	return &engine.ProviderError{Kind: kindOf(status), Status: status, Message: message,
		RetryAfter: time.Duration(retryAfterMs) * time.Millisecond}
}

// kindOf classifies an HTTP status as the adapters do (docs/providers.md).
func kindOf(status int) engine.ErrorKind {
	switch {
	case status == 401 || status == 403:
		return engine.ErrorAuth
	case status == 429:
		return engine.ErrorRateLimit
	case status >= 500:
		return engine.ErrorOverloaded
	}
	return engine.ErrorOther
}
