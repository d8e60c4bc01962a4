package engine

import (
	"strings"
	"sync"
	"sync/atomic"
)

// A model call's events reach the executor through a streamQueue, not one
// posted function each: the provider's goroutine appends and goes back to
// its connection, and the executor applies what has arrived
// (drainStream). So the provider never waits while the Sink is blocked on
// a host that reads slowly: its connection keeps being read, and the idle
// watchdog measures only the provider's silence (issue 15, L6).
//
// When the host does not keep up, the events pile up behind a blocked
// Sink, and full-mode message_update frames, each carrying the whole
// message so far, would make the output quadratic in the reply's size.
// Then, and only then, consecutive deltas of one block are merged into one
// event, so one frame carries them all: output stays linear. "Then" is
// the Sink's own word (Backlog): with a host that keeps up, nothing is
// ever merged, whatever the timing, and transcripts stay byte-for-byte the
// same. The merged delta is the concatenation of the deltas, so the
// message and its final frames are the same either way.

// Backlog is implemented by a Sink that knows when the host is not keeping
// up with it: Backlogged reports whether the last frame found the output
// full (the write had to wait for the host to read). rpc.Server implements
// it over its stdout pipe. It is called from any goroutine.
type Backlog interface {
	Backlogged() bool
}

// streamQueueMax bounds the events waiting for the executor: beyond it
// the provider waits (backpressure), which the watchdog does not count as
// silence. Merged deltas take no room, so a backlogged host never gets
// here on a stream of deltas.
const streamQueueMax = 1024

// streamQueue holds the events of one model call that the executor has
// not applied yet. The provider's goroutine pushes; the executor pops.
type streamQueue struct {
	backlogged func() bool // the Sink's Backlogged; nil: never merge

	mu      sync.Mutex // guards the fields below
	space   *sync.Cond // signalled when events are popped or the call ends
	evs     []pendingEvent
	head    int  // evs[head:] are waiting
	posted  bool // a drain is queued and has not started
	closed  bool // the call is over: pushes are refused, waits end
	waiting atomic.Bool
}

// pendingEvent is an event waiting for the executor; more holds the
// deltas merged into it after its own (appended, to stay linear).
type pendingEvent struct {
	ev   StreamEvent
	more []byte
}

func newStreamQueue(sink Sink) *streamQueue {
	q := &streamQueue{}
	q.space = sync.NewCond(&q.mu)
	if b, ok := sink.(Backlog); ok {
		q.backlogged = b.Backlogged
	}
	return q
}

// mergeable reports whether b continues a's delta: the same kind of delta
// with nothing between them, so the same block (blocks never interleave),
// and no response id riding on b.
func mergeable(a, b *StreamEvent) bool {
	switch a.Kind {
	case StreamTextDelta, StreamThinkingDelta, StreamToolCallDelta:
	default:
		return false
	}
	return b.Kind == a.Kind && b.ToolCallID == a.ToolCallID && b.ResponseID == ""
}

// merge appends b's delta to p, sanitised as applyStream would have
// sanitised it alone, so merging never changes the text.
func (p *pendingEvent) merge(b *StreamEvent) {
	if p.more == nil && p.ev.Kind != StreamToolCallDelta {
		p.ev.Delta = strings.ToValidUTF8(p.ev.Delta, "\uFFFD")
	}
	d := b.Delta
	if b.Kind != StreamToolCallDelta {
		d = strings.ToValidUTF8(d, "\uFFFD")
	}
	p.more = append(p.more, d...)
}

func (p *pendingEvent) event() StreamEvent {
	if len(p.more) > 0 {
		p.ev.Delta += string(p.more)
		p.more = nil
	}
	return p.ev
}

// push adds ev; it reports whether a drain must be posted (none is
// pending) and false for ok once the call is over.
func (q *streamQueue) push(ev StreamEvent) (post, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.closed {
			return false, false
		}
		if n := len(q.evs); n > q.head && q.backlogged != nil && mergeable(&q.evs[n-1].ev, &ev) && q.backlogged() {
			q.evs[n-1].merge(&ev)
			break
		}
		if len(q.evs)-q.head < streamQueueMax {
			q.evs = append(q.evs, pendingEvent{ev: ev})
			break
		}
		q.waiting.Store(true)
		q.space.Wait()
		q.waiting.Store(false)
	}
	post = !q.posted
	q.posted = true
	return post, true
}

// take starts a drain: it returns how many events are waiting now, and
// lets the next push post a new drain.
func (q *streamQueue) take() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.posted = false
	return len(q.evs) - q.head
}

// pop removes the first waiting event; while the host is backlogged, the
// deltas that continue it are merged into it first.
func (q *streamQueue) pop() (StreamEvent, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.evs) {
		return StreamEvent{}, false
	}
	first := &q.evs[q.head]
	q.head++
	if q.backlogged != nil && q.head < len(q.evs) && mergeable(&first.ev, &q.evs[q.head].ev) && q.backlogged() {
		for q.head < len(q.evs) && mergeable(&first.ev, &q.evs[q.head].ev) {
			next := q.evs[q.head].event()
			first.merge(&next)
			q.evs[q.head] = pendingEvent{}
			q.head++
		}
	}
	ev := first.event()
	*first = pendingEvent{}
	if q.head == len(q.evs) {
		q.evs, q.head = q.evs[:0], 0
	} else if q.head > len(q.evs)/2 && q.head > 64 {
		n := copy(q.evs, q.evs[q.head:])
		clear(q.evs[n:])
		q.evs, q.head = q.evs[:n], 0
	}
	q.space.Signal()
	return ev, true
}

// close ends the call's queue: a waiting push returns, later ones are
// refused. Events already queued are still applied.
func (q *streamQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.space.Broadcast()
	q.mu.Unlock()
}

// queueStream hands one provider event to the executor, from the
// provider's goroutine. It returns false when the call is over.
func (s *Session) queueStream(r *run, q *streamQueue, ev StreamEvent) bool {
	post, ok := q.push(ev)
	if post {
		// later, not Post: the drain must run on the executor's own
		// goroutine even when it is free, so that a Sink write blocked on
		// the host never blocks the provider. At most one drain per call
		// is pending, so the unbounded queue stays small.
		s.exec.later(func() { s.drainStream(r, q, q.take()) })
	}
	return ok
}

// drainStream applies up to n waiting events (all of them when n < 0).
// A drain takes only what was there when it started: the executor serves
// whatever else is queued between drains. (actor)
func (s *Session) drainStream(r *run, q *streamQueue, n int) {
	for ; n != 0; n-- {
		ev, ok := q.pop()
		if !ok {
			return
		}
		s.applyStream(r, ev)
	}
}
