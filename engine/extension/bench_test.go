package extension

import (
	"context"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// discard is a Sink that drops every event.
type discard struct{}

func (discard) Event(engine.Event) {}

// BenchmarkTapDeltaUnsubscribed: a message_update passing the tap of a host
// whose only extension subscribed to agent_end, against the bare sink: the
// tap must add no allocation and a few nanoseconds.
func BenchmarkTapDeltaUnsubscribed(b *testing.B) {
	h := New(Options{})
	h.exts = []*ext{{subs: bitAgentEnd}}
	h.resubscribe()
	p := &engine.Partial{}
	ev := engine.MessageUpdate{Kind: engine.UpdateTextDelta, Delta: "lorem ipsum ", Partial: p}
	for _, bc := range []struct {
		name string
		sink engine.Sink
	}{{"bare", discard{}}, {"tapped", h.Tap(discard{})}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				bc.sink.Event(ev)
			}
		})
	}
}

// BenchmarkHookRoundTrip: one tool_call hook answered by one extension
// process (a request written to its stdin, its answer read from its
// stdout, decoded and applied).
func BenchmarkHookRoundTrip(b *testing.B) {
	r := startBench(b, `{"name":"b","on":{"tool_call":[{"run":[{"return":null}]}]}}`, bitToolCall)
	call := engine.ToolCallHook{ID: "c1", Name: "bash", Input: []byte(`{"command":"ls"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := r.ToolCall(ctx, call); res.Block {
			b.Fatal("blocked")
		}
	}
}

// BenchmarkSession5000Deltas: a prompt whose reply streams 5,000 text
// deltas, through a session whose sink encodes every frame (as rpc's
// does): with no extension; with one subscribed to agent_end only whose
// lines are taken in this process (the agent's own cost: the tap on every
// delta, the agent_end notification encoded and queued); and with a real
// extension process subscribed to agent_end only (its reading and decoding
// of the 60 KB agent_end then competes for the same cores).
func BenchmarkSession5000Deltas(b *testing.B) {
	script, err := fakeprovider.Parse("stream.json", []byte(`{"loop":true,"turns":[{"steps":[{"text":["lorem ipsum "],"repeat":5000}]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"none", "agentEndQueued", "agentEndProcess"} {
		b.Run(mode, func(b *testing.B) {
			p := fakeprovider.New(script)
			m := p.Model()
			var sink engine.Sink = encoder{}
			var hooks engine.Hooks
			switch mode {
			case "agentEndQueued":
				h := New(Options{})
				e := newExt(h, Spec{})
				e.subs = bitAgentEnd
				drained := make(chan struct{})
				go func() {
					defer close(drained)
					for {
						if _, ok := e.out.take(); !ok {
							return
						}
					}
				}()
				defer func() { e.out.close(); <-drained }()
				h.exts = []*ext{e}
				h.resubscribe()
				sink, hooks = h.Tap(sink), h
			case "agentEndProcess":
				h := startBench(b, `{"name":"end","on":{"agent_end":[{"run":[]}]}}`, bitAgentEnd)
				sink, hooks = h.Tap(sink), h
			}
			sess := engine.New(engine.Config{Provider: p, Model: &m, Sink: sink, Hooks: hooks,
				Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}})
			done := make(chan struct{})
			go func() { sess.Loop(); close(done) }()
			defer func() { sess.Stop(); <-done; sess.Close() }()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sess.Call(func() { _ = sess.Prompt("go", engine.PromptOptions{}) })
				idle(sess)
			}
		})
	}
}

// encoder is a Sink that encodes every event, lean, as rpc's does.
type encoder struct{}

var frameBuf = make([]byte, 0, 1<<16)

func (encoder) Event(ev engine.Event) {
	if u, ok := ev.(engine.MessageUpdate); ok {
		u.Lean = true
		ev = u
	}
	frameBuf = ev.AppendJSON(frameBuf[:0])
}
