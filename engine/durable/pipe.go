package durable

import "io"

// pipeWriter feeds a streamed request body without ever blocking its
// writer: lines queue (bounded) and a front that does not keep up loses
// the newest, which are deltas only.
type pipeWriter struct {
	lines chan []byte
	pw    *io.PipeWriter
	fed   chan struct{}
}

// newPipe returns the body to send and its writer.
func newPipe() (*io.PipeReader, *pipeWriter) {
	pr, pw := io.Pipe()
	w := &pipeWriter{lines: make(chan []byte, 1024), pw: pw, fed: make(chan struct{})}
	go func() {
		defer close(w.fed)
		for l := range w.lines {
			if _, err := pw.Write(l); err != nil {
				for range w.lines { // the front is gone: drain
				}
				return
			}
		}
		pw.Close()
	}()
	return pr, w
}

func (w *pipeWriter) write(line []byte) {
	select {
	case w.lines <- line:
	default:
	}
}

func (w *pipeWriter) close() { close(w.lines); <-w.fed }
