package sessions

import (
	"fmt"
	"sync"
	"testing"
)

// The requests that waited for a session/new are routed in order, and one
// the reader reads while they are being routed waits behind them (a
// session/cancel must not overtake the prompt it follows:
// TestTurnsAndCancel saw the queued prompt end as end_turn under load).
func TestDeferredRequestsKeepTheirOrder(t *testing.T) {
	t.Parallel()
	m := New(Options{})
	created := m.Creating()
	var mu sync.Mutex
	var order []string
	note := func(x string) {
		mu.Lock()
		order = append(order, x)
		mu.Unlock()
	}
	started, release := make(chan struct{}), make(chan struct{})
	m.Route("x", func(*Live) { note("prompt"); close(started); <-release })
	done := make(chan struct{})
	go func() { created(); close(done) }()
	<-started
	m.Route("x", func(*Live) { note("cancel") }) // read while "prompt" is routed
	mu.Lock()
	early := len(order) != 1
	mu.Unlock()
	if early {
		t.Fatal("the later request ran before the earlier one was routed")
	}
	close(release)
	<-done
	if fmt.Sprint(order) != "[prompt cancel]" {
		t.Errorf("order %v", order)
	}
	m.Route("x", func(*Live) { note("after") }) // nothing waits: at once
	if fmt.Sprint(order) != "[prompt cancel after]" {
		t.Errorf("order %v", order)
	}
}
