package durable

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// The agent server's side of durable sessions (xcsh serve --temporal,
// docs/server.md): a Served session is the stdio front's core (front.go)
// whose events go to the server's session log instead of a stdout, and
// whose answers are returned to the server, which addresses them to the
// client that asked. It has the methods of rpc/serve's RemoteSession (this
// package does not import rpc: cmd/xcsh wires the two).

// ErrUnknownSession is the failure of attaching to a durable session that
// is not running.
var ErrUnknownSession = errors.New("no such durable session")

// Served is one durable session as one agent server serves it. Its seq is
// the workflow's: a client's cursor is good on every server and front of
// the session.
type Served struct {
	f     *front
	epoch string

	cancel context.CancelFunc
	stop   func() // the delta listener's
	wg     sync.WaitGroup

	// doMu: one command at a time, as the stdio front's reader handles
	// them (it owns f.held, a compact command's answer in progress).
	doMu sync.Mutex
	// to takes the answers of the command being handled; late takes the
	// answer of a compact command that answers after its Do returned (one
	// at a time: the next compact holds until it has); answered says
	// whether the current command has had its answer (guarded by f.mu).
	to, late func([]byte)
	answered bool
	// ready: the session's set-up is known (awaitSetup, before the first
	// command, as the stdio front waits before reading). (doMu)
	ready bool
}

// OpenServed opens durable session o.Session for a server and starts
// handing emit its events after the last one now, and the deltas of the
// message being streamed (seq 0), in order, never two calls at once,
// until Close. With create, a session that does not run is started (an
// empty o.Session: a new session with a fresh id); without, it must be
// running (ErrUnknownSession). The deltas come through the server's one
// endpoint (nil: none; o.Listen is not read).
func OpenServed(ctx context.Context, o FrontOptions, create bool, deltas *Deltas, emit func(seq int64, frame []byte)) (*Served, error) {
	o.Since = -1
	if o.Session == "" {
		if !create {
			return nil, fmt.Errorf("%w: no session id", ErrUnknownSession)
		}
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.Session = hex.EncodeToString(b[:])
	}
	var epoch string
	var err error
	if !create {
		if epoch, err = describe(ctx, o.Client, o.Session); err != nil {
			return nil, err
		}
	}
	f, err := openFront(ctx, o, create)
	if err != nil {
		return nil, err
	}
	if create {
		if epoch, err = describe(ctx, o.Client, o.Session); err != nil {
			return nil, err
		}
	}
	s := &Served{f: f, epoch: epoch}
	f.emit = emit
	f.answer = s.route
	// The session's life is the server's, not the opener's request.
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.stop = func() {}
	if deltas != nil {
		stop, err := deltas.add(lctx, f)
		if err != nil {
			cancel()
			return nil, err
		}
		s.stop = stop
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); f.pump(lctx) }()
	return s, nil
}

// describe returns the session's epoch: the id of its workflow's first
// run, which names its numbering (continue-as-new keeps both; a session
// started again under the same id after it ended numbers anew, and has
// another). It fails with ErrUnknownSession when the session does not run.
func describe(ctx context.Context, c client.Client, session string) (string, error) {
	d, err := c.DescribeWorkflowExecution(ctx, WorkflowID(session), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "", fmt.Errorf("%w: %s", ErrUnknownSession, session)
	}
	if err != nil {
		return "", fmt.Errorf("durable session %s: %w", session, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if st := info.GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", fmt.Errorf("%w: %s has ended (%s)", ErrUnknownSession, session, st)
	}
	if first := info.GetFirstRunId(); first != "" {
		return first, nil
	}
	return info.GetExecution().GetRunId(), nil
}

// ID is the session's id (--session of a stdio front).
func (s *Served) ID() string { return s.f.o.Session }

// Epoch names the session's numbering: the same on every server.
func (s *Served) Epoch() string { return s.epoch }

// Last is the seq of the last event handed to emit (at the open: the last
// event then).
func (s *Served) Last() int64 { return s.f.cursorNow() }

// Sync hands emit the events the log has now, before it returns.
func (s *Served) Sync(ctx context.Context) error {
	_, err := s.f.catchUp(ctx)
	return err
}

// Settle returns once the session is idle and its events are handed to
// emit, and a compact command's answer is given (a draining client's work
// is over).
func (s *Served) Settle(ctx context.Context) {
	s.doMu.Lock()
	s.f.unhold()
	s.doMu.Unlock()
	s.f.settle(ctx)
}

// Do handles one command line as the stdio front does and hands its
// answer to answer (never, for a command that has none: a
// host_tool_result, an extension_ui_response). Events it causes before
// its answer (an abort's closing events) are handed to emit first. A
// compact command answers once its compaction is over, after Do has
// returned; the commands after it wait for that answer, as RPC's do,
// but those that pass it (abort, get_state, the host's replies).
func (s *Served) Do(ctx context.Context, line []byte, answer func(frame []byte)) {
	s.doMu.Lock()
	defer s.doMu.Unlock()
	if !s.ready {
		// A failure (the server stopping) is the command's own to report.
		s.ready = s.f.awaitSetup(ctx) == nil
	}
	s.f.mu.Lock()
	s.to, s.answered = answer, false
	s.f.mu.Unlock()
	s.f.handle(ctx, line)
	s.f.mu.Lock()
	if !s.answered && s.f.held != nil && s.late == nil {
		s.late = answer
	}
	s.to = nil
	s.f.mu.Unlock()
}

// route gives an answer to the command it is for: a compact command's
// that came after its Do, or the current command's. (f.mu)
func (s *Served) route(b []byte) {
	if s.late != nil && bytes.Contains(b, []byte(`"command":"compact"`)) {
		late := s.late
		s.late = nil
		late(append([]byte(nil), b...))
		return
	}
	if s.to != nil {
		s.answered = true
		s.to(append([]byte(nil), b...))
	}
}

// Events hands fn the events after `after` the session still keeps,
// without moving the cursor of emit (a client's replay from a cursor older
// than the server's log); lost: some after it are no longer kept.
func (s *Served) Events(ctx context.Context, after int64, fn func(seq int64, frame []byte)) (lost bool, err error) {
	res, err := s.f.runEvents(ctx, "", after)
	if err != nil {
		return false, err
	}
	for _, fr := range res.Frames {
		fn(fr.Seq, fr.Data)
	}
	return res.Lost, nil
}

// Messages returns the session's messages (a JSON array, as get_messages
// has them) and the seq of the last event they reflect: read between two
// reads of the last seq that agree, so the two are one moment.
func (s *Served) Messages(ctx context.Context) (seq int64, messages []byte, err error) {
	for range 5 {
		before, err := s.f.runEvents(ctx, "", math.MaxInt64)
		if err != nil {
			return 0, nil, err
		}
		msgs, err := s.f.query(ctx, QueryMessages)
		if err != nil {
			return 0, nil, err
		}
		after, err := s.f.runEvents(ctx, "", math.MaxInt64)
		if err != nil {
			return 0, nil, err
		}
		if before.Last == after.Last {
			return after.Last, msgs, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, nil, fmt.Errorf("durable session %s: its messages kept changing while read", s.ID())
}

// Close stops handing events and deltas; the session goes on.
func (s *Served) Close() {
	s.cancel()
	s.stop()
	s.wg.Wait()
}

// Deltas is a server's one endpoint for the deltas of every durable
// session it serves: each session's are pushed to its own path, the same
// every time the server serves it again (the workflow keeps each endpoint
// once), and one address serves them all (a fleet's --temporal-listen).
type Deltas struct {
	ln   net.Listener
	srv  *http.Server
	base string
	done chan struct{}

	mu     sync.Mutex
	fronts map[string]*front // by session id (guarded by mu)
}

// ListenDeltas listens on addr ("": 127.0.0.1:0).
func ListenDeltas(addr string) (*Deltas, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for deltas on %s: %w", addr, err)
	}
	d := &Deltas{ln: ln, base: "http://" + ln.Addr().String() + "/deltas/", fronts: map[string]*front{}, done: make(chan struct{})}
	d.srv = &http.Server{Handler: d}
	go func() { defer close(d.done); d.srv.Serve(ln) }()
	return d, nil
}

// ServeHTTP hands a model call's pushed deltas to the session's front; a
// session no longer served here drops them.
func (d *Deltas) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/deltas/"))
	if err != nil {
		return
	}
	d.mu.Lock()
	f := d.fronts[id]
	d.mu.Unlock()
	if f != nil {
		f.deltas(w, r)
	}
}

// add routes f's session's deltas to f and attaches the endpoint to the
// session.
func (d *Deltas) add(ctx context.Context, f *front) (remove func(), err error) {
	id := f.o.Session
	d.mu.Lock()
	d.fronts[id] = f
	d.mu.Unlock()
	remove = func() {
		d.mu.Lock()
		if d.fronts[id] == f {
			delete(d.fronts, id)
		}
		d.mu.Unlock()
	}
	if err := f.update(ctx, UpdateAttach, client.WorkflowUpdateStageCompleted, d.base+url.PathEscape(id)); err != nil {
		remove()
		return nil, fmt.Errorf("attach to session %s: %w", id, err)
	}
	return remove, nil
}

// Close stops the endpoint.
func (d *Deltas) Close() {
	d.srv.Close()
	<-d.done
}

// SessionInfo is a running durable session, as ListSessions finds it.
type SessionInfo struct {
	ID      string
	Started time.Time // its current run's start
}

// ListSessions lists the running durable sessions of the namespace,
// newest first (Temporal's visibility store).
func ListSessions(ctx context.Context, c client.Client) ([]SessionInfo, error) {
	var out []SessionInfo
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", WorkflowName),
			NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list durable sessions: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			id, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), WorkflowID(""))
			if !ok || id == "" {
				continue
			}
			out = append(out, SessionInfo{ID: id, Started: e.GetStartTime().AsTime()})
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}
