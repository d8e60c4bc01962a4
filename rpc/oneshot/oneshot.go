// Package oneshot is the front of the one-shot modes: `xcsh -p "prompt"`
// (print mode: run the prompts, print the final answer's text, exit) and
// `xcsh --mode json "prompt"` (every event of the run as one JSON line,
// then exit), as the family's print mode does. It is a sibling of the RPC
// front: it prompts one live session of the session host (engine/sessions)
// and answers from each prompt's result, and is the session's Sink. It has no host to ask, so dialogs resolve to their
// defaults (the session has no HostLink).
package oneshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// Options configure a Front.
type Options struct {
	// JSON writes every event as a JSON line (json mode); otherwise only the
	// final answer's text is written, once the run is over (print mode).
	JSON bool
	// Lean drops the two snapshots from message_update lines
	// (--rpc-updates=delta), as the RPC front's lean mode does.
	Lean bool
	// Header, in JSON mode, is written first: the session header line
	// (without its newline), as the family's json mode starts.
	Header []byte
	Out    io.Writer // stdout
	Log    io.Writer // stderr: errors for the user
}

// Front is the Sink of a one-shot session.
type Front struct {
	opts Options
	mu   sync.Mutex // guards the writes (the executor writes events; Run the rest)
	buf  []byte
	werr error  // the first failed write: the reader has gone
	stop func() // aborts the session's work (set by Run)
}

// New returns a front writing to opts.Out.
func New(opts Options) *Front {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Front{opts: opts}
}

// Event implements engine.Sink: in JSON mode, one line per event.
func (f *Front) Event(ev engine.Event) {
	if !f.opts.JSON {
		return
	}
	if u, ok := ev.(engine.MessageUpdate); ok && f.opts.Lean {
		u.Lean = true
		ev = u
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(ev.AppendJSON(f.buf[:0]), '\n')
	f.write(f.buf)
}

// write writes one line; after a failure nothing more is written. (f.mu)
func (f *Front) write(b []byte) {
	if f.werr != nil {
		return
	}
	if _, err := f.opts.Out.Write(b); err != nil {
		f.werr = err
		if f.stop != nil {
			f.stop() // nobody reads the rest: stop the run
		}
	}
}

// SetHeader sets Options.Header (json mode's first line), before Run.
func (f *Front) SetHeader(h []byte) { f.opts.Header = h }

// ErrOutput is reported when stdout could not be written (the reader has
// gone): the run is aborted and Run fails.
var ErrOutput = errors.New("writing stdout failed")

// Run sends each prompt to the session in turn (each once the session has
// settled after the one before: its run, retries and compaction), and
// reports the outcome of the last: in print mode the final assistant
// message's text on stdout, or its error on stderr. It returns nil on
// success; an error the user has already been told about on stderr
// otherwise, or ctx's cause when ctx ended first (the run is aborted and
// has wound down). The session runs (Live.Start) before Run is called.
func (f *Front) Run(ctx context.Context, live *sessions.Live, prompts []string, images []engine.ContentBlock) error {
	f.mu.Lock()
	f.stop = func() { live.Engine().Cancel(engine.AllKinds...) }
	f.mu.Unlock()
	if f.opts.JSON && f.opts.Header != nil {
		f.mu.Lock()
		f.write(append(append([]byte(nil), f.opts.Header...), '\n'))
		f.mu.Unlock()
	}
	var res engine.TurnResult
	for i, text := range prompts {
		var imgs []engine.ContentBlock
		if i == 0 {
			imgs = images
		}
		var err error
		if res, err = live.Ask(ctx, text, imgs); err != nil {
			return err
		}
		if res.Stop == "" && res.Err != nil {
			fmt.Fprintln(f.opts.Log, res.Err)
			return res.Err
		}
		if err := f.outputErr(); err != nil {
			return err
		}
	}
	if f.opts.JSON {
		return f.outputErr()
	}
	last := res.Last
	if last == nil {
		return f.outputErr()
	}
	if last.StopReason == engine.StopError || last.StopReason == engine.StopAborted {
		msg := last.ErrorMessage
		if msg == "" {
			msg = "Request " + string(last.StopReason)
		}
		fmt.Fprintln(f.opts.Log, msg)
		return errors.New(msg)
	}
	f.mu.Lock()
	for _, b := range last.Content {
		if b.Type == engine.BlockText {
			f.write([]byte(b.Text + "\n"))
		}
	}
	f.mu.Unlock()
	return f.outputErr()
}

func (f *Front) outputErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.werr != nil {
		return fmt.Errorf("%w: %w", ErrOutput, f.werr)
	}
	return nil
}
