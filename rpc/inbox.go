package rpc

import "sync"

// inbox is the one queue of input between the reader and the dispatcher,
// and the one place that decides the order in which input is handled. It
// lets the reader keep reading (aborts, replies to our requests) while the
// executor is busy or stdout is stalled. It is bounded by bytes, not
// lines: a host that floods commands while not reading its stdout is
// eventually stopped by backpressure, but never before the queued input
// exceeds twice the longest accepted line, so a reply always fits behind a
// full line.
//
// Holds. A command that answers once some work is over can hold the input
// behind it until it has answered (the original handles its commands one
// at a time): abort holds what arrives while its run winds down, so a
// piped "abort, prompt" starts the prompt on an idle session, but lets the
// frames that pass through (preemptive ones, get_state) be handled
// meanwhile; a verb that switches or writes a session holds everything,
// so the commands after it see its result. The hold is taken when the
// dispatcher pops the command, before anything behind it can be popped,
// and released by the command when it has answered.
type inbox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []inboxItem // items[head:] are queued
	head   int
	bytes  int
	max    int
	closed bool
	// holdAll and holdPassing count the holds taken and not yet released,
	// of each kind (hold).
	holdAll, holdPassing int
}

// hold is what a command holds of the input behind it until it answers.
type hold int

const (
	holdNone    hold = iota
	holdPassing      // everything but the frames that pass (abort winding down)
	holdAll          // everything (a session switched, exported or renamed)
)

type inboxItem struct {
	size int
	pass bool // handled even while a holdPassing is taken
	hold hold // taken when the item is popped
	fn   func(release func())
	// atFront, if set, is called once when every item queued before this
	// one has been popped (handed to the executor), even if a hold keeps
	// this one from being popped itself: the EOF drain's start. It is
	// over before this item is popped, and must not use the inbox.
	atFront func()
}

func (q *inbox) init(maxLine int) {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	q.max = 2 * maxLine
	q.cond = sync.NewCond(&q.mu)
}

// push queues an item, blocking while the queue holds more than its bound.
// Items of size 0 are the server's own (a finished bash command's answer,
// queued from the executor): they never wait, so the executor never
// blocks on the queue it feeds.
func (q *inbox) push(it inboxItem) {
	q.mu.Lock()
	for it.size > 0 && q.bytes > 0 && q.bytes+it.size > q.max {
		q.cond.Wait()
	}
	if q.head == len(q.items) && it.atFront != nil {
		// Nothing before it: at the front now. Called under the lock, so
		// it is over before the item can be popped (the drain it starts
		// must not outrun it).
		it.atFront()
		it.atFront = nil
	}
	q.items = append(q.items, it)
	q.bytes += it.size
	q.mu.Unlock()
	q.cond.Broadcast()
}

// close ends the dispatcher: pop returns false once nothing more can be
// handled. The server closes it when Run ends, not at stdin EOF: work
// still running then queues its answers here.
func (q *inbox) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// next returns the index of the item to handle now, or -1: the oldest,
// or while a holdPassing is taken the oldest that passes, or none while a
// holdAll is. (q.mu held)
func (q *inbox) next() int {
	switch {
	case q.holdAll > 0:
		return -1
	case q.holdPassing > 0:
		for i := q.head; i < len(q.items); i++ {
			if q.items[i].pass {
				return i
			}
		}
		return -1
	case q.head < len(q.items):
		return q.head
	}
	return -1
}

// pop waits for the next item to handle and takes its hold; release ends
// the hold (the item's handler calls it once, when it has answered). ok
// is false once the inbox is closed and nothing can be handled.
func (q *inbox) pop() (it inboxItem, release func(), ok bool) {
	var front func() // called after the unlock
	defer func() {
		if front != nil {
			front()
		}
	}()
	q.mu.Lock()
	defer q.mu.Unlock()
	i := q.next()
	for i < 0 && !q.closed {
		q.cond.Wait()
		i = q.next()
	}
	if i < 0 {
		return inboxItem{}, nil, false
	}
	it = q.items[i]
	if i == q.head {
		q.items[i] = inboxItem{}
		q.head++
	} else { // a passing item taken from behind held ones
		copy(q.items[i:], q.items[i+1:])
		q.items[len(q.items)-1] = inboxItem{}
		q.items = q.items[:len(q.items)-1]
	}
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if f := q.items[q.head].atFront; f != nil {
		q.items[q.head].atFront, front = nil, f
	}
	q.bytes -= it.size
	q.cond.Broadcast()
	switch it.hold {
	case holdAll:
		q.holdAll++
	case holdPassing:
		q.holdPassing++
	default:
		return it, func() {}, true
	}
	var once sync.Once
	return it, func() { once.Do(func() { q.release(it.hold) }) }, true
}

func (q *inbox) release(h hold) {
	q.mu.Lock()
	if h == holdAll {
		q.holdAll--
	} else {
		q.holdPassing--
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}
