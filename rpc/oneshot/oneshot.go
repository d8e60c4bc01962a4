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
	"strings"
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
	// OutputSchema, if set, is the JSON Schema the last prompt's final
	// answer must match (--output-schema): print mode then prints that
	// JSON, and nothing else.
	OutputSchema []byte
}

// Front is the Sink of a one-shot session.
type Front struct {
	opts Options
	mu   sync.Mutex // guards the writes (the executor writes events; Run the rest)
	buf  []byte
	werr error  // the first failed write: the reader has gone
	stop func() // aborts the session's work (set by Run)
	// why is what the session said about the current prompt's context:
	// an automatic compaction that was skipped or failed (guarded by mu).
	why string
}

// New returns a front writing to opts.Out.
func New(opts Options) *Front {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Front{opts: opts}
}

// Event implements engine.Sink: in JSON mode, one line per event. In
// print mode an extension's error is a line on stderr (it has no other
// way to the user), and both modes note why a compaction could not make
// room, for a run that ends with no answer.
func (f *Front) Event(ev engine.Event) {
	switch e := ev.(type) {
	case engine.AutoCompactionEnd:
		why := ""
		switch {
		case e.Skipped:
			why = "the conversation does not fit the model's context window and there was nothing to compact"
		case e.ErrorMessage != "":
			why = "compaction failed: " + e.ErrorMessage
		}
		if why != "" {
			f.mu.Lock()
			f.why = why
			f.mu.Unlock()
		}
	case engine.ExtensionError:
		if !f.opts.JSON {
			fmt.Fprintf(f.opts.Log, "xcsh: extension %s (%s): %s\n", e.ExtensionPath, e.Event, e.Error)
		}
	}
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
// message's text on stdout (with an output schema, the JSON it matched).
// A run that ends without a final answer (it failed, was aborted, reached
// a budget, never matched its output schema, or the model said nothing)
// has the reason on stderr, in both modes. Run returns nil on success; an
// error the user has already been told about on stderr otherwise (an
// *engine.BudgetError or *engine.OutputSchemaError for those), or ctx's
// cause when ctx ended first (the run is aborted and has wound down). The
// session runs (Live.Start) before Run is called.
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
		f.mu.Lock()
		f.why = ""
		f.mu.Unlock()
		turn := sessions.Turn{Text: text, Images: imgs}
		if i == len(prompts)-1 {
			turn.OutputSchema = f.opts.OutputSchema
		}
		var err error
		if res, err = live.AskTurn(ctx, turn); err != nil {
			return err
		}
		if res.Stop == "" && res.Err != nil {
			fmt.Fprintln(f.opts.Log, res.Err)
			return res.Err
		}
		if err := f.outputErr(); err != nil {
			return err
		}
		if res.Budget != nil {
			// The run stopped on its budget: no answer, and the prompts
			// after it are not sent.
			fmt.Fprintln(f.opts.Log, res.Budget)
			return res.Budget
		}
	}
	var oe *engine.OutputSchemaError
	if errors.As(res.Err, &oe) {
		fmt.Fprintln(f.opts.Log, oe)
		return oe
	}
	if why := f.noAnswer(res); why != "" {
		fmt.Fprintln(f.opts.Log, why)
		return errors.New(why)
	}
	if f.opts.JSON || res.Last == nil {
		return f.outputErr()
	}
	f.mu.Lock()
	if res.Output != nil {
		f.write(append(append([]byte(nil), res.Output...), '\n'))
	} else {
		for _, b := range res.Last.Content {
			if b.Type == engine.BlockText {
				f.write([]byte(b.Text + "\n"))
			}
		}
	}
	f.mu.Unlock()
	return f.outputErr()
}

// noAnswer says why the last prompt's turn has no final answer, "" when it
// has one (or ran no model: an extension command or an input step took
// the prompt).
func (f *Front) noAnswer(res engine.TurnResult) string {
	last := res.Last
	switch {
	case last == nil && res.Stop == engine.StopAborted:
		return engine.AbortedMessage
	case last == nil:
		return ""
	case last.StopReason == engine.StopError || last.StopReason == engine.StopAborted:
		if last.ErrorMessage != "" {
			return last.ErrorMessage
		}
		return "Request " + string(last.StopReason)
	}
	for _, b := range last.Content {
		if b.Type == engine.BlockText && strings.TrimSpace(b.Text) != "" {
			return ""
		}
	}
	why := "The model gave no answer"
	f.mu.Lock()
	if f.why != "" {
		why += ": " + f.why
	}
	f.mu.Unlock()
	return why
}

func (f *Front) outputErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.werr != nil {
		return fmt.Errorf("%w: %w", ErrOutput, f.werr)
	}
	return nil
}
