package engine

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Clock gives the time in Unix milliseconds.
type Clock interface {
	NowMillis() int64
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
