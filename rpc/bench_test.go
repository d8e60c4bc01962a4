package rpc

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// manyDeltas streams n text deltas of d.
type manyDeltas struct {
	n int
	d string
}

func (m manyDeltas) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	if err := fn(engine.StreamEvent{Kind: engine.StreamTextStart}); err != nil {
		return err
	}
	for i := 0; i < m.n; i++ {
		if err := fn(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: m.d}); err != nil {
			return err
		}
	}
	if err := fn(engine.StreamEvent{Kind: engine.StreamTextEnd}); err != nil {
		return err
	}
	return fn(engine.StreamEvent{Kind: engine.StreamDone, StopReason: engine.StopStop})
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkServerStream5000 measures the in-process cost of encoding and
// writing a 5,000-delta stream (no pipe), in both update modes.
func BenchmarkServerStream5000(b *testing.B) {
	for _, mode := range []string{UpdatesFull, UpdatesDelta} {
		b.Run(mode, func(b *testing.B) {
			var bytes int64
			for i := 0; i < b.N; i++ {
				out := &countingWriter{}
				srv := NewServer(out, Options{Updates: mode})
				m := &engine.Model{ID: "m", API: "fake", Provider: "fake"}
				srv.Attach(engine.New(engine.Config{Provider: manyDeltas{5000, "lorem ipsum "}, Model: m, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}, Sink: srv}))
				if err := srv.Run(context.Background(), strings.NewReader(`{"type":"prompt","message":"go"}`+"\n")); err != nil {
					b.Fatal(err)
				}
				bytes += out.n
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "stdout-bytes/op")
		})
	}
}

// BenchmarkDispatchGetState measures one get_state through the reader,
// actor and writer, in process.
func BenchmarkDispatchGetState(b *testing.B) {
	pr, pw := io.Pipe()
	out := &countingWriter{}
	srv := NewServer(out, Options{})
	m := &engine.Model{ID: "m", API: "fake", Provider: "fake"}
	sess := engine.New(engine.Config{Provider: manyDeltas{}, Model: m, Sink: srv})
	srv.Attach(sess)
	done := make(chan struct{})
	go func() { srv.Run(context.Background(), pr); close(done) }()
	line := []byte(`{"id":"s","type":"get_state"}` + "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pw.Write(line)
		sess.Call(func() {}) // the reply has been queued once the actor is past it
	}
	b.StopTimer()
	pw.Close()
	<-done
}
