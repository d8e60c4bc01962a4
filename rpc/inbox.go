package rpc

import "sync"

// inbox is the FIFO between the reader and the dispatcher. It lets the
// reader keep reading (aborts, replies to our requests) while the executor
// is busy or stdout is stalled. It is bounded by bytes, not lines: a host
// that floods commands while not reading its stdout is eventually stopped
// by backpressure, but never before the queued input exceeds twice the
// longest accepted line, so a reply always fits behind a full line.
type inbox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []inboxItem
	head   int
	bytes  int
	max    int
	closed bool
}

type inboxItem struct {
	size int
	pass bool // handled even behind an abort's barrier
	fn   func()
}

func (q *inbox) init(maxLine int) {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	q.max = 2 * maxLine
	q.cond = sync.NewCond(&q.mu)
}

// push queues fn, blocking while the queue holds more than its bound.
// Items of size 0 are the server's own (a finished bash command's answer,
// queued from the executor): they never wait, so the executor never
// blocks on the queue it feeds.
func (q *inbox) push(size int, pass bool, fn func()) {
	q.mu.Lock()
	for size > 0 && q.bytes > 0 && q.bytes+size > q.max {
		q.cond.Wait()
	}
	q.items = append(q.items, inboxItem{size, pass, fn})
	q.bytes += size
	q.mu.Unlock()
	q.cond.Broadcast()
}

// close ends the dispatcher: pop returns false once the queue is empty.
// The server closes it when Run ends, not at stdin EOF: work still running
// then queues its answers here.
func (q *inbox) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop waits for the next item; ok is false after close and the last item.
func (q *inbox) pop() (it inboxItem, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.closed {
		q.cond.Wait()
	}
	if q.head == len(q.items) {
		return inboxItem{}, false
	}
	it = q.items[q.head]
	q.items[q.head] = inboxItem{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	q.bytes -= it.size
	q.cond.Broadcast()
	return it, true
}
