package engine

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
)

// serial is the session's executor: it runs functions one at a time, in
// the order they were posted, so whoever runs a function owns the state.
// That is the actor model with a fast path: when nothing is running or
// queued, the poster runs its function itself instead of waking the actor
// goroutine. An idle get_state is then answered on the reader goroutine
// with no hand-off (a goroutine hop costs more than the whole answer), and
// under contention functions queue for the actor goroutine (loop), which
// drains them; a poster never drains work that others queued, so the
// reader is never stuck writing someone else's stream.
type serial struct {
	mu    sync.Mutex
	space *sync.Cond // signalled when the queue shrinks (bounded: backpressure)
	busy  bool       // a function is running
	queue []func()
	max   int
	wake  chan struct{} // cap 1: "the queue may have work"
	owner int64         // goroutine running a function, tracked only under checkReentry
}

// checkReentry makes post panic when called from a function running on
// the executor: such a post waits on itself once the queue is full (a
// deadlock that needs a full inbox to show). Tracking the running
// goroutine costs a stack read per function, so only tests turn it on.
var checkReentry bool

// CheckReentry turns the re-entry check on or off for the whole process.
// It is for tests: the engine's own turn it on in TestMain, and so do the
// tests of the fronts (rpc) and the end-to-end scenarios, which call the
// session's methods from their handlers. Call it before any session
// starts.
func CheckReentry(on bool) { checkReentry = on }

func goroutineID() int64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	b := bytes.TrimPrefix(buf[:n], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseInt(string(b), 10, 64)
	return id
}

func newSerial(max int) *serial {
	e := &serial{max: max, wake: make(chan struct{}, 1)}
	e.space = sync.NewCond(&e.mu)
	return e
}

// post runs fn now, on the caller's goroutine, if nothing else is running
// or waiting; otherwise it queues fn (blocking while the queue is full).
func (e *serial) post(fn func()) {
	e.mu.Lock()
	if checkReentry && e.busy && e.owner == goroutineID() {
		e.mu.Unlock()
		panic("engine: Post or Call from a function running on the executor (use Session.later)")
	}
	if !e.busy && len(e.queue) == 0 {
		e.busy = true
		e.mu.Unlock()
		e.run(fn)
		return
	}
	for len(e.queue) >= e.max {
		e.space.Wait()
	}
	e.queue = append(e.queue, fn)
	e.mu.Unlock()
	e.kick()
}

// later queues fn behind everything queued, without the bound: it is for
// functions already running on the executor, which must never wait for
// the queue to drain (they are what drains it).
func (e *serial) later(fn func()) {
	e.mu.Lock()
	e.queue = append(e.queue, fn)
	e.mu.Unlock()
	e.kick()
}

func (e *serial) run(fn func()) {
	defer e.release() // a panicking function must not wedge the executor
	if checkReentry {
		e.mu.Lock()
		e.owner = goroutineID()
		e.mu.Unlock()
	}
	fn()
}

func (e *serial) release() {
	e.mu.Lock()
	e.owner = 0
	e.busy = false
	more := len(e.queue) > 0
	e.mu.Unlock()
	if more {
		e.kick()
	}
}

func (e *serial) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// next pops the first queued function unless one is running.
func (e *serial) next() func() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy || len(e.queue) == 0 {
		return nil
	}
	fn := e.queue[0]
	e.queue[0] = nil
	e.queue = e.queue[1:]
	e.busy = true
	e.space.Broadcast()
	return fn
}

// loop is the actor goroutine: it drains queued functions until stop is
// closed, then drains what is left and returns.
func (e *serial) loop(stop <-chan struct{}) {
	for {
		select {
		case <-e.wake:
		case <-stop:
			for fn := e.next(); fn != nil; fn = e.next() {
				e.run(fn)
			}
			return
		}
		for fn := e.next(); fn != nil; fn = e.next() {
			e.run(fn)
		}
	}
}
