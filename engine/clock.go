package engine

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Clock gives the time in Unix milliseconds and timers. cmd/xcsh injects
// one clock that serves the engine, the tools and every wait (retry
// backoff, dialog timeouts), so a test can advance a ManualClock instead
// of sleeping.
type Clock interface {
	NowMillis() int64
	// After returns a channel that is closed once d has passed, and a stop
	// function that releases the timer early (safe to call more than once).
	After(d time.Duration) (<-chan struct{}, func())
}

// IDSource mints opaque ids. Kind names the family ("ui", "host",
// "host_cancel", "session", "entry", "call").
type IDSource interface {
	NewID(kind string) string
}

// SystemClock is the wall clock.
type SystemClock struct{}

// NowMillis implements Clock.
func (SystemClock) NowMillis() int64 { return time.Now().UnixMilli() }

// FixedClock always answers the same instant, so a test run is
// byte-deterministic whatever the goroutine interleaving.
type FixedClock int64

// NowMillis implements Clock.
func (c FixedClock) NowMillis() int64 { return int64(c) }

// DeterministicEpoch is the instant of the test clock: 2026-01-01T00:00:00Z.
const DeterministicEpoch FixedClock = 1767225600000

// SequentialIDs mints "<kind>_<n>" with one counter per kind, matching the
// reference's examples (host_1, host_cancel_1, ui_1). Session ids (16 hex)
// and entry ids (8 hex) keep their real shape.
type SequentialIDs struct {
	mu   sync.Mutex
	next map[string]int
}

// NewID implements IDSource.
func (s *SequentialIDs) NewID(kind string) string {
	s.mu.Lock()
	if s.next == nil {
		s.next = map[string]int{}
	}
	s.next[kind]++
	n := s.next[kind]
	s.mu.Unlock()
	switch kind {
	case "session":
		return hexID(uint64(n), 16)
	case "entry":
		return hexID(uint64(n), 8)
	}
	return kind + "_" + strconv.Itoa(n)
}

func hexID(v uint64, width int) string {
	s := strconv.FormatUint(v, 16)
	for len(s) < width {
		s = "0" + s
	}
	return s[len(s)-width:]
}

// snowflakeEpoch is the original's epoch for time-ordered ids (2015-01-01).
const snowflakeEpoch = 1420070400000

// RandomIDs mints time-ordered 16-hex snowflakes (ms since 2015 in the high
// bits, a 22-bit sequence in the low ones), the original's id shape.
type RandomIDs struct {
	Clock Clock
	seq   atomic.Uint64
	entry atomic.Uint64
	salt  uint64
	once  sync.Once
}

// NewID implements IDSource.
func (r *RandomIDs) NewID(kind string) string {
	r.once.Do(func() { r.salt = uint64(time.Now().UnixNano()) })
	if kind == "entry" {
		n := r.entry.Add(1)
		return hexID((r.salt*0x9E3779B97F4A7C15)^(n*0xBF58476D1CE4E5B9), 8)
	}
	ms := uint64(r.Clock.NowMillis() - snowflakeEpoch)
	seq := (r.seq.Add(1) + r.salt) & (1<<22 - 1)
	return hexID(ms<<22|seq, 16)
}

// Sleep waits for d on the clock, or until ctx is done; it returns
// context.Cause(ctx) then.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if err := context.Cause(ctx); err != nil || d <= 0 {
		return err
	}
	ch, stop := c.After(d)
	defer stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// After implements Clock with a wall-clock timer.
func (SystemClock) After(d time.Duration) (<-chan struct{}, func()) { return wallAfter(d) }

// After implements Clock. The fixed clock's time never moves, but its
// timers run on the wall clock: a deterministic run still waits out a
// retry delay, it only reports the same instant throughout.
func (FixedClock) After(d time.Duration) (<-chan struct{}, func()) { return wallAfter(d) }

func wallAfter(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	t := time.AfterFunc(d, func() { close(ch) })
	return ch, func() { t.Stop() }
}

// ManualClock is a clock for tests: time moves only when Advance is
// called, and timers fire when it passes their deadline.
type ManualClock struct {
	mu     sync.Mutex
	now    int64 // Unix milliseconds
	timers []*manualTimer
}

type manualTimer struct {
	at   int64
	ch   chan struct{}
	done bool
}

// NewManualClock returns a manual clock set to the given Unix milliseconds.
func NewManualClock(ms int64) *ManualClock { return &ManualClock{now: ms} }

// NowMillis implements Clock.
func (c *ManualClock) NowMillis() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements Clock.
func (c *ManualClock) After(d time.Duration) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{at: c.now + d.Milliseconds(), ch: make(chan struct{})}
	if d.Milliseconds() <= 0 {
		t.done = true
		close(t.ch)
		return t.ch, func() {}
	}
	c.timers = append(c.timers, t)
	return t.ch, func() {
		c.mu.Lock()
		t.done = true
		c.mu.Unlock()
	}
}

// Waiters reports how many timers are pending: a test advances the clock
// once the code under test is known to be waiting.
func (c *ManualClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

// Advance moves the clock forward and fires every timer that is due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += d.Milliseconds()
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case t.at <= c.now:
			t.done = true
			close(t.ch)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
}
