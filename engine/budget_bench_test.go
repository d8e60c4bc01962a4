package engine

import (
	"context"
	"math"
	"testing"
)

// BenchmarkBudgetObserve5000Deltas is the budget meter's share of a
// 5,000-delta stream: one addition and one comparison per delta.
func BenchmarkBudgetObserve5000Deltas(b *testing.B) {
	ev := StreamEvent{Kind: StreamTextDelta, Delta: "lorem ipsum "}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m := &budgetMeter{limits: Budget{MaxCost: 1e9, MaxTokens: math.MaxInt64 / 8}, price: ModelCost{Output: 15}}
		m.crossAt = m.threshold()
		for range 5000 {
			if m.observe(ev) != nil {
				b.Fatal("reached")
			}
		}
	}
}

// BenchmarkStream5000DeltasBudget streams a 5,000-delta reply through a
// session, without a budget and with cost and token limits it never
// reaches: the difference is what the check costs a whole stream.
func BenchmarkStream5000DeltasBudget(b *testing.B) {
	deltas := make([]StreamEvent, 0, 5003)
	deltas = append(deltas, StreamEvent{Kind: StreamTextStart})
	for range 5000 {
		deltas = append(deltas, StreamEvent{Kind: StreamTextDelta, Delta: "lorem ipsum "})
	}
	deltas = append(deltas, StreamEvent{Kind: StreamTextEnd}, StreamEvent{Kind: StreamDone, StopReason: StopStop})
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		for _, ev := range deltas {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	})
	for _, c := range []struct {
		name   string
		budget Budget
	}{{"off", Budget{}}, {"on", Budget{MaxCost: 1e9, MaxTokens: 1 << 50}}} {
		b.Run(c.name, func(b *testing.B) {
			m := &Model{ID: "m", Cost: ModelCost{Input: 3, Output: 15}}
			s := New(Config{Provider: p, Model: m, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Sink: discard{}, Budget: c.budget})
			go s.Loop()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Call(func() {
					if err := s.Prompt("go", PromptOptions{}); err != nil {
						b.Fatal(err)
					}
				})
				waitIdle(s)
			}
			b.StopTimer()
			s.Stop()
		})
	}
}

// discard is a Sink that encodes nothing.
type discard struct{}

func (discard) Event(Event) {}
