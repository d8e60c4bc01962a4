package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/lineio"
)

// Update modes for message_update frames.
const (
	UpdatesFull  = "full"  // the original's frames: delta plus two partial snapshots
	UpdatesDelta = "delta" // lean frames: the delta only
)

// DefaultMaxLineBytes is the cap on one input line when Options gives none
// (64 MiB); cmd/xcsh shows it as the --rpc-max-line-bytes default.
const DefaultMaxLineBytes = lineio.DefaultMaxLine

// Options configure a Server.
type Options struct {
	Version string
	// SchemaHash is the hash of the protocol's schema (rpc/schema's
	// SchemaHash), written in the ready frame so a host can tell the
	// protocol it was built against from this one.
	SchemaHash   string
	MaxLineBytes int    // 0: DefaultMaxLineBytes
	Updates      string // UpdatesFull (default) or UpdatesDelta
	Log          io.Writer
	// ShutdownGrace bounds how long a signal waits for the aborted run to
	// wind down before exiting anyway.
	ShutdownGrace time.Duration
	// EOFCompactionBound bounds a compaction after stdin EOF (0: the
	// default, DefaultEOFCompactionBound): the drain lets running work
	// finish, but one still compacting this long after EOF is aborted.
	EOFCompactionBound time.Duration
	// GrowOutput, if set, is called once before the first large frame (the
	// CLI enlarges the stdout pipe there).
	GrowOutput func()
	// Started, if set, is called once the ready frame is written and the
	// session runs, before the first command is handled: frames it makes
	// come right after ready (the extension host reports its load failures
	// there). Replies to the agent's requests are already read meanwhile.
	Started func()
	// OutputFull, if set, reports whether a frame of n bytes would have to
	// wait for the host to read (the CLI asks its stdout pipe how much is
	// unread). The server is then a Backlog Sink: while the host does not
	// keep up, the engine merges a reply's piled-up deltas into one frame.
	// Unset, nothing is ever merged.
	OutputFull func(n int) bool
	// Resolved, if set, hears of each request of ours a client answered
	// (a dialog, a host tool call), on that client's reader: the agent
	// server tells the other clients (served sessions).
	Resolved func(id string)
}

// Server is the RPC front of one session: it frames stdin, dispatches
// commands to the session actor and owns stdout through its writer. The
// agent server (rpc/serve) uses the same protocol core for each session
// it serves (NewSession): its input comes from every client's reader
// (Dispatch) and its frames go to the server's hub.
type Server struct {
	opts   Options
	out    *lineio.Writer // stdout; nil for a served session
	frames Frames         // where every frame goes: stdout, or the hub
	sess   *engine.Session
	lean   bool
	// served: the session is served to clients of the agent server (a
	// reply to a request that no longer waits is answered with an error).
	served bool

	// eofOnce guards the one transition to "input closed".
	eofOnce  sync.Once
	finished chan struct{}
	// bg counts background commands still running (for the EOF drain).
	bg sync.WaitGroup

	// pending holds our requests to the host; the reader resolves replies.
	pending pendingTable
	// in is the queue between the reader and the dispatcher goroutine.
	in inbox

	// outGone is closed when a stdout write fails (the host has gone);
	// outErr, the failure, is written before.
	outGone chan struct{}
	outErr  error
}

// preempt says which activities a frame cancels the moment the reader
// sees it, ahead of everything queued (DECISIONS: abort, abort_bash and
// abort_retry are never queued behind running work). The frame is then
// answered in order like any command.
var preempt = map[string][]engine.ActivityKind{
	"abort":            engine.AbortKinds,
	"abort_and_prompt": engine.AbortKinds,
	"abort_bash":       {engine.ActBash},
	"abort_retry":      {engine.ActRetry},
}

// holds says what of the input behind it a command holds until it has
// answered (see inbox): abort lets the passing frames through while its
// run winds down, and so does compact (an abort must reach it, and
// get_state shows isCompacting meanwhile); the verbs that switch, write
// or rename a session hold everything, so the commands after them see
// their result.
var holds = map[string]hold{
	"prompt":           holdPassing,
	"abort":            holdPassing,
	"abort_and_prompt": holdPassing,
	"compact":          holdPassing,
	"new_session":      holdAll,
	"switch_session":   holdAll,
	"branch":           holdAll,
	"fork":             holdAll,
	"clone":            holdAll,
	"export_html":      holdAll,
	"set_session_name": holdAll,
}

// passes reports whether a frame is handled even while an abort winds
// down (a holdPassing): the preemptive frames, the replies to our
// requests, and get_state, which only reads.
func passes(typ string) bool {
	_, isReply := replyFrames[typ]
	return preempt[typ] != nil || isReply || typ == "get_state"
}

// NewServer returns a server writing frames to out. Attach a session before
// Run; the server is the session's Sink.
func NewServer(out io.Writer, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 5 * time.Second
	}
	if opts.EOFCompactionBound <= 0 {
		opts.EOFCompactionBound = DefaultEOFCompactionBound
	}
	s := &Server{opts: opts, finished: make(chan struct{}), lean: opts.Updates == UpdatesDelta}
	s.outGone = make(chan struct{})
	// Called once, on the first failed write; Run then ends like a signal.
	s.out = lineio.New(out, func(err error) {
		fmt.Fprintf(opts.Log, "xcsh: stdout write failed: %v; exiting\n", err)
		s.outErr = err
		close(s.outGone)
	})
	s.out.Grow = opts.GrowOutput
	s.out.Full = opts.OutputFull
	s.frames = stdoutFrames{s.out}
	s.in.init(opts.MaxLineBytes)
	return s
}

// Frames is where a served session's frames go (the agent server's hub):
// the answers to a command are addressed to the client that sent it.
type Frames interface {
	// Buf returns an empty buffer to encode a frame into.
	Buf() *[]byte
	// Send delivers a frame (ending in a newline) and recycles its buffer.
	Send(bp *[]byte, to Client)
}

// Client is who sent a command, as the agent server knows it; nil on
// stdio.
type Client any

// stdoutFrames writes every frame to stdout, whoever it answers.
type stdoutFrames struct{ w *lineio.Writer }

func (o stdoutFrames) Buf() *[]byte              { return o.w.Buf() }
func (o stdoutFrames) Send(bp *[]byte, _ Client) { o.w.Send(bp) }

// NewSession returns the protocol core of one session served by the
// agent server: its frames go to frames, it is the session's HostLink
// (the first client that answers a request resolves it), and its input
// comes from Dispatch. Attach the session, then Serve.
func NewSession(frames Frames, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &Server{opts: opts, frames: frames, served: true, finished: make(chan struct{}), outGone: make(chan struct{}),
		lean: opts.Updates == UpdatesDelta}
	s.pending.resolved = opts.Resolved
	s.in.init(opts.MaxLineBytes)
	return s
}

// Serve starts handling the dispatched commands, in order, once the
// session's resources are read. (Served sessions only.)
func (s *Server) Serve() { go s.dispatchLoop() }

// Stop ends a served session's input: nothing queued is handled any
// more, and requests waiting for an answer fail (the session is closing).
func (s *Server) Stop() {
	s.pending.close()
	s.in.close()
}

// Dispatch takes one line from client from, on the client's reader:
// preemptive commands act at once, replies resolve the request they
// answer, everything else is handled in order. (Served sessions only.)
func (s *Server) Dispatch(line []byte, from Client) { s.dispatch(line, from) }

// EncodeEvent encodes ev as its frame (ending in a newline) into *bp, as
// the Sink does; lean drops message_update's snapshots.
func EncodeEvent(bp *[]byte, ev engine.Event, lean bool) {
	if u, ok := ev.(engine.MessageUpdate); ok {
		u.Lean = lean
		ev = u
		// Size the buffer once: growing a 100 KB frame by doubling costs more
		// copying than encoding it.
		if need := u.SizeHint() + 1; cap(*bp) < need {
			*bp = make([]byte, 0, need+need/4)
		}
	}
	*bp = append(ev.AppendJSON(*bp), '\n')
}

// Backlogged implements engine.Backlog: the last frame found stdout full,
// so the host is not keeping up. Safe from any goroutine.
func (s *Server) Backlogged() bool { return s.out.Backlogged() }

// Attach sets the session the server drives.
func (s *Server) Attach(sess *engine.Session) { s.sess = sess }

// Event implements engine.Sink: it encodes the event on the executor
// (so snapshots are taken at event time) and hands the bytes to the writer.
func (s *Server) Event(ev engine.Event) {
	bp := s.out.Buf()
	EncodeEvent(bp, ev, s.lean)
	s.out.Send(bp)
}

// Run writes the ready frame, starts the session actor and serves in until
// EOF (then drains: the running work finishes, its events are written) or
// until ctx is cancelled (then the run is aborted and the output flushed).
// It returns nil after EOF and context.Cause(ctx) after a cancellation.
// A failed stdout write (EPIPE: the host closed its end) counts as a
// cancellation with the cause ErrOutputClosed wrapping the write error.
func (s *Server) Run(ctx context.Context, in io.Reader) error {
	ctx, stop := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-s.outGone:
			stop(fmt.Errorf("%w: %w", ErrOutputClosed, s.outErr))
		case <-ctx.Done():
		}
	}()
	defer func() { stop(nil); <-watched }()
	ready, _ := engine.MarshalJSON(struct {
		Type       string `json:"type"`
		Version    string `json:"version"`
		SchemaHash string `json:"schemaHash"`
	}{"ready", s.opts.Version, s.opts.SchemaHash})
	s.writeRaw(ready)
	actorDone := make(chan struct{})
	go func() { s.sess.Loop(); close(actorDone) }()
	go s.readLoop(in)
	if s.opts.Started != nil {
		s.opts.Started()
	}
	go s.dispatchLoop()

	var err error
	select {
	case <-s.finished:
	case <-ctx.Done():
		err = context.Cause(ctx)
		// Shutting down stops everything, RPC bash commands included (Run
		// waits for the session's goroutines before it returns).
		s.sess.Cancel(engine.AllKinds...)
		// The waiter is posted from its own goroutine because the executor
		// may be busy writing to a stalled stdout; Run owns it by waiting for
		// idle, and only the grace timeout below abandons it, on the way to
		// exiting the process.
		idle := make(chan struct{})
		go s.sess.Post(func() { s.sess.Interrupt(); s.sess.WhenIdle(func() { close(idle) }) })
		select {
		case <-idle:
		case <-time.After(s.opts.ShutdownGrace):
			fmt.Fprintln(s.opts.Log, "xcsh: run did not stop in time; exiting")
			s.out.Close()
			return err
		}
	}
	// Slash commands may wait for ever (on an extension); the drain never
	// waits for them, and neither may Close.
	s.sess.Cancel(engine.ActCommand)
	s.sess.Stop()
	<-actorDone
	s.sess.Close()
	s.in.close()
	s.out.Close()
	if err == nil {
		select {
		case <-s.outGone:
			// The host went away while the EOF drain ended: still a failure.
			err = fmt.Errorf("%w: %w", ErrOutputClosed, s.outErr)
		default:
		}
	}
	return err
}

func (s *Server) writeRaw(frame []byte) {
	bp := s.out.Buf()
	*bp = append(append(*bp, frame...), '\n')
	s.out.Send(bp)
}

// readLoop reads stdin concurrently with all work and never waits for the
// executor or stdout: preemptive commands (abort) cancel at once, replies
// to our requests resolve their waiters at once, and everything else goes
// to the inbox, which the dispatcher feeds to the executor in arrival
// order, so responses keep request order.
func (s *Server) readLoop(in io.Reader) {
	lr := lineio.NewReader(in, s.opts.MaxLineBytes)
	lr.SkipBOM = true
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err == lineio.ErrLineTooLong {
			msg := fmt.Sprintf("line exceeds the %d-byte limit", lr.Max())
			s.in.push(inboxItem{fn: func(func()) { s.parseError(msg, nil) }})
			continue
		}
		if err != nil {
			fmt.Fprintf(s.opts.Log, "xcsh: reading stdin: %v\n", err)
			break
		}
		s.dispatch(bytes.Clone(line), nil)
	}
	// The host has gone: requests waiting for it fail now, whatever is
	// queued; the queued commands are still handled, then the drain starts.
	s.pending.close()
	s.in.push(inboxItem{fn: func(func()) { s.onEOF() },
		// The drain begins once every command read before EOF has been
		// handed over, a compact that holds the input included: from
		// then on a compaction gets EOFCompactionBound.
		atFront: func() { s.sess.LimitCompactions(s.opts.EOFCompactionBound) }})
}

// dispatchLoop hands queued input to the executor, one item at a time, in
// the order the inbox decides (holds included). It is the goroutine that
// may block (a full executor queue, a stalled stdout), so the reader never
// does.
func (s *Server) dispatchLoop() {
	// The first command waits for the session's resources (templates,
	// skills, context files), read in the background after ready was
	// written: a prompt sent at once still finds its template. Preemptive
	// frames and replies act on the reader meanwhile.
	<-s.sess.Ready()
	for {
		it, release, ok := s.in.pop()
		if !ok {
			return
		}
		s.sess.Post(func() { it.fn(release) })
	}
}

// DefaultEOFCompactionBound is how long a compaction may still run after
// stdin EOF: enough for the compaction of an ordinary session, far less
// than the minutes of model calls a very large one takes.
const DefaultEOFCompactionBound = time.Minute

// onEOF starts the drain: pending work finishes, then Run returns (a
// compaction only within EOFCompactionBound: see readLoop). (actor)
func (s *Server) onEOF() {
	s.whenDrained(func() { s.eofOnce.Do(func() { close(s.finished) }) })
}

// whenDrained calls done once the session is idle and no background
// command runs. (actor)
func (s *Server) whenDrained(done func()) {
	s.sess.WhenIdle(func() {
		go func() {
			s.bg.Wait()
			// Background work posts its results; wait for the actor to be
			// idle again after them.
			s.sess.Post(func() { s.sess.WhenIdle(done) })
		}()
	})
}

// Drain calls done, on the executor, once everything dispatched so far has
// been handled and the session is idle again, background commands
// included: what --mode rpc does at stdin EOF. (Served sessions only.)
func (s *Server) Drain(done func()) {
	s.in.push(inboxItem{fn: func(func()) { s.whenDrained(done) }})
}

// CheckLine says why a line is not a command ("" when it is a JSON
// object), in the words of the parse frame.
func CheckLine(line []byte) string {
	if !utf8.Valid(line) {
		return "invalid UTF-8 in input line"
	}
	if !json.Valid(line) {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return err.Error()
		}
		return "invalid JSON"
	}
	if first := line[skipSpace(line, 0)]; first != '{' {
		return "expected a JSON object, got " + jsonKind(first)
	}
	return ""
}

// ParseErrorFrame is the uncorrelated parse frame for msg (CheckLine's).
func ParseErrorFrame(msg string) []byte {
	b := append([]byte(`{"type":"response","command":"parse","success":false,"error":`), engine.AppendJSONString(nil, "Failed to parse command: "+msg)...)
	return append(b, '}', '\n')
}

// Field returns the raw JSON value of the last top-level member name of a
// command line (CheckLine's), by the protocol's reading rule: the name
// matches exactly, the last duplicate wins; nil when absent.
func Field(line []byte, name string) []byte {
	var v []byte
	members(line, func(key, _, val []byte) {
		if string(key) == name {
			v = val
		}
	})
	return v
}

// dispatch classifies one line from client from and queues its handling
// on the actor.
func (s *Server) dispatch(line []byte, from Client) {
	if msg := CheckLine(line); msg != "" {
		s.in.push(inboxItem{size: len(line), fn: func(func()) { s.parseError(msg, from) }})
		return
	}
	// The envelope is read by the rule every field is (jsonread.go): exact
	// names, the last duplicate wins.
	typ, id := envelope(line)
	cmd := &command{line: line, id: compactRawValue(id), from: from}
	if typ != nil {
		cmd.typeRaw = compactRawValue(typ)
		cmd.typeIsString = typ[0] == '"'
		if cmd.typeIsString {
			cmd.typ = commandName(typ)
		}
	}
	it := inboxItem{size: len(line), fn: func(release func()) { s.handle(cmd, release) }}
	if cmd.typeIsString {
		if kinds := preempt[cmd.typ]; kinds != nil {
			s.sess.Cancel(kinds...) // now; the answer comes in order
		}
		if s.pending.resolve(cmd) {
			return
		}
		if s.served && s.lateReply(cmd) {
			return
		}
		it.pass, it.hold = passes(cmd.typ), holds[cmd.typ]
	}
	s.in.push(it)
}

// jsonKind names the kind of a JSON value that is not an object, by its
// first byte.
func jsonKind(first byte) string {
	switch first {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '[':
		return "array"
	}
	return "number"
}

// command is one parsed input frame.
type command struct {
	from         Client // who sent it (the agent server's client; nil on stdio)
	line         []byte
	id           []byte // raw JSON of the last "id", compacted; nil when absent
	typ          string
	typeRaw      []byte // raw JSON of the last "type", nil when absent
	typeIsString bool
	// release ends the command's hold on the input behind it (see inbox);
	// handle calls it when the handler returns, unless the handler took it
	// (later) to call once it has answered.
	release func()
	kept    bool
}

// later hands the release of the command's hold to a handler that answers
// after it returns: it must call the result once, when it has answered.
// (actor)
func (c *command) later() func() {
	c.kept = true
	return c.release
}

// response encodes {"id"?,"type":"response","command"?,"success",...},
// for client to.
func (s *Server) response(to Client, id, commandRaw []byte, success bool, data []byte, errText string) {
	var appendData func([]byte) []byte
	if data != nil {
		appendData = func(b []byte) []byte { return append(b, data...) }
	}
	s.responseWith(to, id, commandRaw, success, appendData, errText)
}

// responseWith is response with the data encoded straight into the frame
// buffer by appendData (nil: no data key).
func (s *Server) responseWith(to Client, id, commandRaw []byte, success bool, appendData func([]byte) []byte, errText string) {
	bp := s.frames.Buf()
	b := append(*bp, '{')
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"type":"response"`...)
	if commandRaw != nil {
		b = append(b, `,"command":`...)
		b = append(b, commandRaw...)
	}
	b = append(b, `,"success":`...)
	b = strconv.AppendBool(b, success)
	if success {
		if appendData != nil {
			b = appendData(append(b, `,"data":`...))
		}
	} else {
		b = append(b, `,"error":`...)
		b = engine.AppendJSONString(b, errText)
	}
	b = append(b, '}', '\n')
	*bp = b
	s.frames.Send(bp, to)
}

func quote(s string) []byte { return engine.AppendJSONString(nil, s) }

// ok answers a command successfully; data nil means no data key.
func (s *Server) ok(c *command, data []byte) { s.response(c.from, c.id, quote(c.typ), true, data, "") }

// fail answers a known command's failure, correlated by its id.
func (s *Server) fail(c *command, err error) {
	code := wireCode(err)
	if code == "" {
		s.response(c.from, c.id, quote(c.typ), false, nil, wireError(c.typ, err))
		return
	}
	// A machine-readable code beside the text (omp's get_messages_page:
	// "session_busy").
	bp := s.frames.Buf()
	b := append(*bp, '{')
	if c.id != nil {
		b = append(append(append(b, `"id":`...), c.id...), ',')
	}
	b = append(b, `"type":"response","command":`...)
	b = append(b, quote(c.typ)...)
	b = append(b, `,"success":false,"error":`...)
	b = engine.AppendJSONString(b, wireError(c.typ, err))
	b = append(b, `,"code":`...)
	b = engine.AppendJSONString(b, code)
	*bp = append(b, '}', '\n')
	s.frames.Send(bp, c.from)
}

// parseError is the uncorrelated failure frame for unusable input from
// client to.
func (s *Server) parseError(msg string, to Client) {
	bp := s.frames.Buf()
	*bp = append(*bp, ParseErrorFrame(msg)...)
	s.frames.Send(bp, to)
}

// handle runs a command on the actor. A panic in a handler becomes the
// uncorrelated parse frame, as the reference describes for handler
// exceptions, and the server keeps serving.
func (s *Server) handle(c *command, release func()) {
	c.release = release
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(s.opts.Log, "xcsh: internal error handling %q: %v\n", c.typ, r)
			s.parseError(fmt.Sprint(r), c.from)
			c.kept = false
		}
		if !c.kept {
			c.release()
		}
	}()
	if !c.typeIsString {
		s.unknown(c)
		return
	}
	h, ok := handlers[c.typ]
	if !ok {
		s.unknown(c)
		return
	}
	h(s, c)
}

// unknown answers an unknown type without the id, as the reference
// documents (hosts depend on it); a missing type also drops "command".
func (s *Server) unknown(c *command) {
	name := "undefined"
	if c.typeRaw != nil {
		if c.typeIsString {
			name = c.typ
		} else {
			name = string(c.typeRaw)
		}
	}
	s.response(c.from, nil, c.typeRaw, false, nil, "Unknown command: "+name)
}

// logf writes a diagnostic line to the log (stderr), never to stdout.
func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, format+"\n", args...)
}

var _ engine.Sink = (*Server)(nil)
