package engine

import (
	"errors"
	"sync"
	"time"
)

// errCompactionDrained is the cancellation cause of a compaction still
// running when the bound LimitCompactions set has passed: to the host it
// is an aborted compaction (auto_compaction_end "aborted":true, or the
// compact command's "Compaction cancelled").
var errCompactionDrained = errors.New("compaction stopped: the host has gone and the drain bound passed")

// drainLimit makes LimitCompactions act once, and never after Close: its
// timer goroutine is added to the session's WaitGroup under mu, and Close
// sets closed under mu before it waits.
type drainLimit struct {
	mu     sync.Mutex
	set    bool // guarded by mu
	closed bool // guarded by mu
}

// close makes later LimitCompactions calls do nothing. (Close)
func (d *drainLimit) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// LimitCompactions bounds compaction from now on: a compaction still
// running d from now is cancelled then, and one that starts later is
// cancelled as it starts; each ends as an aborted compaction, the session
// unchanged (nothing is lost: the file keeps every entry, and the next
// start compacts again). The RPC front calls it at stdin EOF: its drain
// lets running work finish so a piped script gets its whole transcript,
// but the compaction of a very large session is minutes of model calls,
// and a host that has gone must not keep the process for them. Only the
// first call counts. The timer runs on the session's clock and ends with
// Close; after Close it does nothing. Safe from any goroutine.
func (s *Session) LimitCompactions(d time.Duration) {
	s.drain.mu.Lock()
	defer s.drain.mu.Unlock()
	if s.drain.set || s.drain.closed {
		return
	}
	s.drain.set = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if Sleep(s.timers, s.cfg.Clock, d) != nil {
			return // the session closed first
		}
		s.acts.expire(ActCompaction, errCompactionDrained)
	}()
}
