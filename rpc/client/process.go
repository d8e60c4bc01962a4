package client

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// termGrace is how long Close waits after SIGTERM before SIGKILL; the agent
// itself gives an aborted run 5 s after a signal, and its flush is quick.
const termGrace = 6 * time.Second

// process is the agent started by Start.
type process struct {
	cmd    *exec.Cmd
	stdout *os.File // our read end: closed last, to unblock the reader
	tail   *tailBuffer
	exited chan struct{} // closed when Wait has returned
	err    error         // Wait's error, valid once exited is closed
}

// Start runs the agent (Options.Path with "--mode rpc" and Options.Args)
// and waits for its ready frame, bounded by ctx or, without a deadline, by
// Options.Timeout. ctx only bounds the start: the process lives until
// Close. A failure to start carries the tail of the agent's stderr.
func Start(ctx context.Context, opts Options) (*Client, error) {
	path := opts.Path
	if path == "" {
		path = "xcsh"
	}
	cmd := exec.Command(path, append([]string{"--mode", "rpc"}, opts.Args...)...)
	cmd.Dir = opts.Dir
	if opts.Env != nil {
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	tail := &tailBuffer{max: 32 << 10}
	cmd.Stderr = tail
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(opts.Stderr, tail)
	}
	// Bounds Wait's stderr copy when a grandchild keeps stderr open.
	cmd.WaitDelay = 2 * time.Second

	// Our own pipes rather than StdoutPipe: Wait closes a StdoutPipe when
	// the process exits, which could cut frames still in the pipe; with a
	// plain pipe the reader drains to EOF.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("xcsh client: starting %s: %w", path, err)
	}
	inR.Close()
	outW.Close()

	p := &process{cmd: cmd, stdout: outR, tail: tail, exited: make(chan struct{})}
	// Owned by the Client: Close waits for exited.
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	c := New(outR, inW, opts)
	c.proc = p
	if err := c.WaitReady(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w (%s); stderr: %s", err, p.status(), tail.String())
	}
	return c, nil
}

func (p *process) status() string {
	select {
	case <-p.exited:
		if p.err == nil {
			return "exit status 0"
		}
		return p.err.Error()
	default:
		return "still running"
	}
}

// Stderr returns the last 32 KiB the agent wrote to stderr ("" for New).
func (c *Client) Stderr() string {
	if c.proc == nil {
		return ""
	}
	return c.proc.tail.String()
}

// Close ends the client: it closes the agent's stdin (a server
// connection's sending side), lets the agent finish its running work for
// Options.CloseGrace, then stops it (SIGTERM, then SIGKILL) and waits for
// it, or drops the connection. A reconnection under way stops. Requests
// still pending fail with ErrClosed, host tool and dialog handlers are
// cancelled and waited for, sessions end, and every subscription channel
// is closed (events still queued are dropped). Close returns the
// process's exit error, if any (nil for an exit status 0 within the
// grace), and is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown() })
	return c.closeErr
}

func (c *Client) shutdown() error {
	c.stop() // a reconnection under way stops
	c.mu.Lock()
	c.closed = true
	l := c.link
	c.broadcastLocked() // requests waiting to be sent fail
	c.mu.Unlock()
	if l != nil && l.half != nil {
		l.half()
	}
	grace := time.NewTimer(c.opts.grace())
	defer grace.Stop()

	var err error
	if p := c.proc; p != nil {
		select {
		case <-p.exited:
		case <-grace.C:
			// The client stops waiting now: what the agent writes while it
			// is being stopped answers nobody.
			c.end(fmt.Errorf("%w: the agent did not exit within %v of stdin closing", ErrClosed, c.opts.grace()))
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(termGrace):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
			if p.err != nil {
				err = fmt.Errorf("xcsh client: the agent did not exit within %v of closing stdin and was stopped: %w", c.opts.grace(), p.err)
			}
		}
		if err == nil && p.err != nil {
			err = fmt.Errorf("xcsh client: agent: %w", p.err)
		}
		// A child of the agent may still hold its stdout; the process is
		// gone, so nothing more can come.
		select {
		case <-l.readDone:
		case <-time.After(time.Second):
			p.stdout.Close()
			<-l.readDone
		}
	} else if l != nil {
		select {
		case <-l.readDone:
		case <-grace.C:
			c.end(fmt.Errorf("%w: the stream did not end within %v of closing the writer", ErrClosed, c.opts.grace()))
			if l.hard != nil {
				l.hard()
				<-l.readDone
			}
			// Otherwise the reader returns whenever r does.
		}
	}
	c.end(ErrClosed)
	<-c.superviz
	c.handlers.Wait()
	c.haltAll()
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
