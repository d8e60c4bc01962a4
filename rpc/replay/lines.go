package replay

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// What both modes share: a process's output split into lines on its own
// goroutine, the end of its stderr, and how a child is stopped.

// lineReader reads lines from r on its own goroutine, so a wait for the
// next one can be bounded. Its queue has no bound: a child that writes a
// lot while the replay writes to it must not block on us, or the two
// would wait on each other's pipes.
type lineReader struct {
	mu      sync.Mutex    // guards the fields below
	queue   [][]byte      // lines read, not yet taken; each without its "\n"
	ended   bool          // the stream has ended; nothing more will come
	changed chan struct{} // closed and replaced when queue or ended changes
	done    chan struct{} // closed when the reading goroutine has returned
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{changed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(lr.done)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lr.push(bytes.TrimSuffix(line, []byte("\n")))
			}
			if err != nil {
				// EOF or a read error: either way, nothing more.
				lr.end()
				return
			}
		}
	}()
	return lr
}

func (lr *lineReader) push(line []byte) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.queue = append(lr.queue, line)
	close(lr.changed)
	lr.changed = make(chan struct{})
}

func (lr *lineReader) end() {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.ended = true
	close(lr.changed)
	lr.changed = make(chan struct{})
}

// next returns the next line, or ok false at the end of the stream;
// timedOut is true when nothing came within d.
func (lr *lineReader) next(d time.Duration) (line []byte, ok, timedOut bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		lr.mu.Lock()
		if len(lr.queue) > 0 {
			line = lr.queue[0]
			lr.queue = lr.queue[1:]
			lr.mu.Unlock()
			return line, true, false
		}
		if lr.ended {
			lr.mu.Unlock()
			return nil, false, false
		}
		changed := lr.changed
		lr.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return nil, false, true
		}
	}
}

// tailBuffer keeps the last max bytes written to it: a child's stderr for
// a report. It is written by exec's copying goroutine.
type tailBuffer struct {
	mu  sync.Mutex // guards b
	b   []byte
	max int
	tee io.Writer // also written, when not nil
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tee != nil {
		t.tee.Write(p)
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// stopGrace is how long an interrupted child has before it is killed, and
// how long Wait keeps copying its output after it exits (a grandchild may
// hold the pipes).
const stopGrace = 3 * time.Second

// prepare makes cmd interruptible through its context: the context's end
// interrupts the child, and it is killed stopGrace later.
func prepare(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = stopGrace
}

// exitCode returns a finished command's exit code; -1 when a signal ended
// it or it did not run.
func exitCode(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}

// waitExit waits up to d for the command to exit, then kills it and waits.
// It returns whether it exited by itself. The command's Wait runs on its
// own goroutine and its result is in errc.
func waitExit(cmd *exec.Cmd, errc <-chan error, d time.Duration) (exited bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-errc:
		return true
	case <-timer.C:
		cmd.Process.Kill()
		<-errc
		return false
	}
}
