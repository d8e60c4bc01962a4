package subproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// ErrHelper is the Err of every failure a helper reports or causes: its
// adapter's errors cross as their kind, status, message and wait, not as
// Go values.
var ErrHelper = errors.New("subproc: helper process")

// Options configures a Provider.
type Options struct {
	// Name is the helper program (xcsh-bedrock), looked up beside the
	// agent's executable, then on $PATH.
	Name string
	// Hint follows the error of a call whose helper cannot be started: how
	// to install it.
	Hint string
	// APIKey returns the key for a model's provider, sent with each call;
	// nil means none.
	APIKey func(m engine.Model) string
	// Start starts the helper and returns its stdin, its stdout and a
	// wait for its end; nil runs Name. Tests connect Serve through pipes.
	Start func() (stdin io.WriteCloser, stdout io.Reader, wait func() error, err error)
}

// Provider is an engine.Provider whose calls a helper process serves. It
// starts the helper on its first call, and again on the call after the
// helper exited. It is safe for concurrent use.
type Provider struct {
	opts Options

	mu   sync.Mutex // guards h and next
	h    *helper    // the running helper; nil before the first call and after it ended
	next int64      // the last call id
}

// New returns a Provider. It starts nothing.
func New(o Options) *Provider {
	if o.Start == nil {
		name := o.Name
		o.Start = func() (io.WriteCloser, io.Reader, func() error, error) { return execHelper(name) }
	}
	return &Provider{opts: o}
}

var _ engine.Provider = (*Provider)(nil)

// helper is one running helper process. Its reader goroutine (read) owns
// its stdout; it ends when the helper exits, which the agent's exit
// causes (the helper reads the end of its stdin), and Close waits for it.
type helper struct {
	stdin io.WriteCloser
	wmu   sync.Mutex // one line per write to stdin

	mu    sync.Mutex // guards calls and dead
	calls map[int64]*call
	dead  error         // why the helper ended; nil while it runs
	ended chan struct{} // closed when read returns
}

// call is one Stream waiting for its lines. The reader sends on ch until
// the call is gone (the Stream returned), and closes ch when the helper
// ends.
type call struct {
	ch   chan replyFrame
	gone chan struct{}
}

// Stream implements engine.Provider.
func (p *Provider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	wr, err := encodeRequest(req)
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther, Message: err.Error(), Err: err}
	}
	var key string
	if p.opts.APIKey != nil {
		key = p.opts.APIKey(req.Model)
	}
	h, id, err := p.helper()
	if err != nil {
		return &engine.ProviderError{Kind: engine.ErrorOther,
			Message: fmt.Sprintf("could not start %s, the helper that serves %s: %v. %s", p.opts.Name, req.Model.API, err, p.opts.Hint), Err: err}
	}
	c := h.register(id)
	if c == nil {
		return h.deadError(p.opts.Name)
	}
	defer h.unregister(id)
	if err := h.send(callFrame{ID: id, APIKey: key, Request: wr}); err != nil {
		return h.deadError(p.opts.Name)
	}
	for {
		select {
		case <-ctx.Done():
			h.send(callFrame{ID: id, Cancel: true})
			return fmt.Errorf("subproc: %w", ctx.Err())
		case f, ok := <-c.ch:
			switch {
			case !ok:
				return h.deadError(p.opts.Name)
			case f.Event != nil:
				if err := fn(f.Event.decode()); err != nil {
					h.send(callFrame{ID: id, Cancel: true})
					return err
				}
			case f.Error != nil:
				if f.Error.Canceled && ctx.Err() != nil {
					return fmt.Errorf("subproc: %w", ctx.Err())
				}
				return f.Error.decode()
			case f.End:
				return nil
			}
		}
	}
}

// Close ends the helper, if one runs, and waits for it.
func (p *Provider) Close() error {
	p.mu.Lock()
	h := p.h
	p.mu.Unlock()
	if h == nil {
		return nil
	}
	err := h.stdin.Close()
	<-h.ended
	return err
}

// helper returns the running helper, starting one if none runs, and the
// id of a new call.
func (p *Provider) helper() (*helper, int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	if p.h != nil {
		return p.h, p.next, nil
	}
	stdin, stdout, wait, err := p.opts.Start()
	if err != nil {
		return nil, 0, err
	}
	h := &helper{stdin: stdin, calls: map[int64]*call{}, ended: make(chan struct{})}
	p.h = h
	go func() {
		h.read(stdout, wait)
		p.mu.Lock()
		if p.h == h {
			p.h = nil // the next call starts another
		}
		p.mu.Unlock()
	}()
	return h, p.next, nil
}

func (h *helper) register(id int64) *call {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dead != nil {
		return nil
	}
	c := &call{ch: make(chan replyFrame, 64), gone: make(chan struct{})}
	h.calls[id] = c
	return c
}

func (h *helper) unregister(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.calls[id]; c != nil {
		close(c.gone)
		delete(h.calls, id)
	}
}

func (h *helper) send(f callFrame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, err = h.stdin.Write(append(b, '\n'))
	return err
}

// read hands each line of the helper's stdout to its call, until the
// helper ends; then every call still waiting learns it.
func (h *helper) read(stdout io.Reader, wait func() error) {
	defer close(h.ended)
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var f replyFrame
			if json.Unmarshal(line, &f) == nil {
				h.mu.Lock()
				c := h.calls[f.ID]
				h.mu.Unlock()
				if c != nil {
					select {
					case c.ch <- f:
					case <-c.gone: // the call returned (cancelled): its lines are dropped
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	err := wait()
	if err == nil {
		err = errors.New("it exited")
	}
	h.mu.Lock()
	h.dead = err
	for id, c := range h.calls {
		close(c.ch)
		delete(h.calls, id)
	}
	h.mu.Unlock()
}

// deadError is the failure of a call whose helper ended under it: a
// transport failure, which the engine retries with a new helper.
func (h *helper) deadError(name string) error {
	<-h.ended
	h.mu.Lock()
	defer h.mu.Unlock()
	return &engine.ProviderError{Kind: engine.ErrorTransport,
		Message: fmt.Sprintf("Connection error: the helper %s ended: %v", name, h.dead), Err: ErrHelper}
}

// execHelper runs the helper program: beside the agent's executable (a
// release ships them together), else on $PATH. Its environment is the
// agent's whole (AWS's credential variables included: the helper is the
// agent's own, not a command a model runs). stderr keeps its last
// kilobytes for the error that says why it ended.
func execHelper(name string) (io.WriteCloser, io.Reader, func() error, error) {
	path := ""
	if exe, err := os.Executable(); err == nil {
		if c := filepath.Join(filepath.Dir(exe), name); isFile(c) {
			path = c
		}
	}
	if path == "" {
		var err error
		if path, err = exec.LookPath(name); err != nil {
			return nil, nil, nil, fmt.Errorf("%s is neither beside %s nor on $PATH", name, "xcsh")
		}
	}
	cmd := exec.Command(path)
	cmd.Env = os.Environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	tail := &tailBuffer{}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	wait := func() error {
		err := cmd.Wait()
		if s := bytes.TrimSpace(tail.bytes()); len(s) > 0 {
			return fmt.Errorf("%v: %s", err, s)
		}
		return err
	}
	return stdin, stdout, wait, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

const tailMax = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}
