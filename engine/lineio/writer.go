package lineio

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Writer is the one writer of a protocol front's stdout (RPC and ACP):
// one Write per line, on the producing goroutine, backpressure instead of
// drops, and the word on whether the host keeps up.
//
// Every frame is one Write of one line. Frames are produced inside the
// session's serial executor (one function at a time), so they are already
// ordered; the writer writes each one at once on the producing goroutine,
// without a hand-off to another goroutine, which would cost more than an
// idle get_state's whole answer. The mutex only guards the rare frame
// written outside the executor (ready). A blocked write blocks its
// producer: backpressure, never a dropped frame.
type Writer struct {
	mu     sync.Mutex
	out    io.Writer
	failed bool // guarded by mu: after a write error the host has gone; frames are discarded
	closed bool // guarded by mu: Run has returned; frames are discarded
	onErr  func(error)
	pool   sync.Pool
	// Grow, if set, is called once, before the first frame of bigFrame
	// bytes or more: the host's pipe is enlarged only for sessions that
	// stream big frames, because a bigger pipe makes every small round
	// trip slower (measured: 19 µs vs 29 µs for get_state).
	// Grow and Full are set before the first Send.
	Grow func()
	// Full, if set, says whether a frame of n bytes would wait for the
	// host (the front's Options.OutputFull); backlog is its answer for the last frame,
	// set before the frame is written and kept until the next one, so it
	// is true for as long as a write is blocked on the host and just after.
	Full    func(n int) bool
	backlog atomic.Bool
}

const bigFrame = 64 << 10

// New returns a writer to out; onErr hears of the first failed write,
// after which everything is discarded.
func New(out io.Writer, onErr func(error)) *Writer {
	w := &Writer{out: out, onErr: onErr}
	w.pool.New = func() any { b := make([]byte, 0, 512); return &b }
	return w
}

// Buf returns an empty buffer to encode a frame into.
func (w *Writer) Buf() *[]byte { return w.pool.Get().(*[]byte) }

// Send writes a frame (which must end with '\n') and recycles its buffer.
func (w *Writer) Send(bp *[]byte) {
	w.mu.Lock()
	if w.Grow != nil && len(*bp) >= bigFrame {
		w.Grow()
		w.Grow = nil
	}
	if w.Full != nil {
		w.backlog.Store(w.Full(len(*bp)))
	}
	if !w.failed && !w.closed {
		if _, err := w.out.Write(*bp); err != nil {
			w.failed = true
			if w.onErr != nil {
				w.onErr(err)
			}
		}
	}
	w.mu.Unlock()
	// Keep big buffers out of the pool once a long stream is over.
	if cap(*bp) <= 4<<20 {
		*bp = (*bp)[:0]
		w.pool.Put(bp)
	}
}

// closeWait bounds how long close waits for a frame being written.
const closeWait = time.Second

// Close discards every frame sent from now on, so that what is still
// running while the process exits (a run past the shutdown grace) cannot
// leave half a frame on stdout. It waits for a frame being written to
// finish, but not beyond closeWait: a host that stopped reading can hold a
// write forever, and then the process exits regardless (the goroutine
// left waiting for the lock ends with it).
func (w *Writer) Close() {
	done := make(chan struct{})
	go func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

// Backlogged reports whether the last frame found the output full
// (Full), for an engine.Backlog Sink.
func (w *Writer) Backlogged() bool { return w.backlog.Load() }
