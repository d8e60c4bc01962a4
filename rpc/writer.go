package rpc

import (
	"io"
	"sync"
)

// writer is the single owner of stdout: every frame is one Write of one
// line, in the order frames were sent. Senders block when the host stops
// reading (backpressure); nothing is ever dropped while the host reads.
type writer struct {
	out  io.Writer
	ch   chan *[]byte
	done chan struct{}
	pool sync.Pool
	// failed is set (by the writer goroutine only) after a write error; the
	// host has gone, so later frames are discarded instead of blocking.
	failed bool
	onErr  func(error)
}

func newWriter(out io.Writer, onErr func(error)) *writer {
	w := &writer{out: out, ch: make(chan *[]byte, 128), done: make(chan struct{}), onErr: onErr}
	w.pool.New = func() any { b := make([]byte, 0, 512); return &b }
	go w.loop()
	return w
}

func (w *writer) loop() {
	defer close(w.done)
	for bp := range w.ch {
		if !w.failed {
			if _, err := w.out.Write(*bp); err != nil {
				w.failed = true
				if w.onErr != nil {
					w.onErr(err)
				}
			}
		}
		// Keep big buffers out of the pool once a long stream is over.
		if cap(*bp) <= 4<<20 {
			*bp = (*bp)[:0]
			w.pool.Put(bp)
		}
	}
}

// buf returns an empty buffer to encode a frame into.
func (w *writer) buf() *[]byte { return w.pool.Get().(*[]byte) }

// send queues a frame (which must end with '\n'); ownership passes to the
// writer.
func (w *writer) send(bp *[]byte) { w.ch <- bp }

// close flushes the queued frames and stops the writer.
func (w *writer) close() {
	close(w.ch)
	<-w.done
}
