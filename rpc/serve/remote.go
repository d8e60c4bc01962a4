package serve

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// Remote sessions: sessions that run outside this process (durable
// sessions on Temporal, engine/durable; cmd/xcsh wires them when serve has
// --temporal). The server serves one with the same protocol as its own
// sessions: the same hub, log, cursors, roles and lagging, but the events
// and their numbers are the remote session's own, so a cursor is good on
// any server (or stdio front) of the session; the server's own frames
// (clients_changed) carry no seq on such a session. Commands are relayed
// in arrival order by one goroutine per session (they wait on the
// network; no client's reader does).

// RemoteSessions opens remote sessions. Its methods use basic types only,
// so that an implementation need not import this package.
type RemoteSessions interface {
	// Open opens session id and starts handing emit its events after the
	// last one now (seq from the session's numbering) and its best-effort
	// frames (message_update deltas: seq 0), in order, never two calls at
	// once, until the session's Close. With create, a session that does
	// not exist is started (id "": a new one); without, an unknown id
	// fails with ErrUnknownRemote.
	Open(ctx context.Context, id string, create bool, emit func(seq int64, frame []byte)) (RemoteSession, error)
	// List lists the remote sessions that exist, newest first.
	List(ctx context.Context) ([]RemoteInfo, error)
}

// ErrUnknownRemote is RemoteSessions.Open's failure for an unknown id.
var ErrUnknownRemote = errors.New("no such remote session")

// RemoteInfo is a remote session as RemoteSessions.List finds it.
type RemoteInfo struct {
	ID      string
	Updated time.Time
}

// RemoteSession is one remote session as this server serves it.
type RemoteSession interface {
	ID() string
	// Epoch names the session's numbering: a cursor of another epoch is
	// too old.
	Epoch() string
	// Last is the seq of the last event handed to emit (at Open: the
	// session's last event then).
	Last() int64
	// Sync hands emit what the session has done so far, before it
	// returns.
	Sync(ctx context.Context) error
	// Settle returns once the session is idle and Sync'd.
	Settle(ctx context.Context)
	// Do handles one command line of the RPC protocol and hands answer
	// its answer frame, without a newline (never, for a command that has
	// none), at most once: during Do, or after it has returned for a
	// command that answers when its work is over (compact). Events the
	// command makes before its answer are handed to emit first.
	Do(ctx context.Context, line []byte, answer func(frame []byte))
	// Events hands fn the events after `after` that the session still
	// keeps (not to emit: a replay for one client); lost: some events
	// after it are no longer kept.
	Events(ctx context.Context, after int64, fn func(seq int64, frame []byte)) (lost bool, err error)
	// Messages are the session's messages (a JSON array) and the seq of
	// the last event they reflect.
	Messages(ctx context.Context) (seq int64, messages []byte, err error)
	// Close stops handing events; the session goes on.
	Close()
}

// remote is a hub's link to its remote session: the session, and the
// queue of commands its relay goroutine sends in arrival order.
type remote struct {
	rs     RemoteSession
	ctx    context.Context // the link's: cancelled by stop
	cancel context.CancelFunc

	mu      sync.Mutex
	queue   []remoteCmd // guarded by mu
	stopped bool        // guarded by mu
	wake    chan struct{}
	done    chan struct{}
}

// remoteCmd is a command to relay, or (run set) work to do in the
// commands' order (a drain's wait).
type remoteCmd struct {
	line []byte
	from *client
	run  func()
}

// errNoRemote refuses a durable session on a server without them.
var errNoRemote = errors.New("this server has no durable sessions: start it with --temporal ADDRESS (docs/durable.md)")

// remoteTimeout bounds the server's own calls to a remote session (an
// attach's replay and snapshot).
const remoteTimeout = time.Minute

// remoteEvent is the remote session's emit: an event (seq > 0) is logged
// under its own number; a delta (seq 0) is logged unnumbered.
func (h *hub) remoteEvent(seq int64, frame []byte) {
	b := make([]byte, 0, len(frame)+1)
	b = append(append(b, frame...), '\n')
	h.mu.Lock()
	if seq > 0 {
		h.seq = uint64(seq)
	}
	h.appendLocked(&entry{seq: uint64(max(seq, 0)), frame: b, delta: seq <= 0})
}

// leanDelta is a full message_update frame without its two snapshots, as
// --rpc-updates delta writes it: the frame ends in
// `,"partial":P},"message":P}` (engine.MessageUpdate's encoding, the same
// P twice), which is found from the end, so no text inside can be taken
// for it. Another frame is returned as it is.
func leanDelta(frame []byte) []byte {
	body := bytes.TrimSuffix(frame, []byte("\n"))
	m := bytes.LastIndex(body, []byte(`},"message":`))
	if m < 0 || len(body) < 2 || body[len(body)-1] != '}' {
		return frame
	}
	p := body[m+len(`},"message":`) : len(body)-1]
	start := m - len(p) - len(`,"partial":`)
	if start < 0 || string(body[start:m-len(p)]) != `,"partial":` || !bytes.Equal(body[m-len(p):m], p) {
		return frame
	}
	out := make([]byte, 0, start+3)
	out = append(out, body[:start]...)
	return append(out, '}', '}', '\n')
}

// serveRemote returns the served remote session id, opening it when this
// server does not serve it yet (create: starting it when it does not
// exist; id "": a new one).
func (s *Server) serveRemote(id string, create bool) (*hub, error) {
	if s.opts.Remote == nil {
		return nil, errNoRemote
	}
	if id != "" {
		h, release, err := s.openOnce(id)
		if h != nil || err != nil {
			return h, err
		}
		defer release()
	}
	if s.isClosing() {
		return nil, errClosing
	}
	// The hub is whole before Open: the session emits into it at once.
	// Nothing reads h.remote.rs until the hub is registered (s.mu).
	h := newHub(s, 0)
	lctx, lcancel := context.WithCancel(context.Background())
	h.remote = &remote{ctx: lctx, cancel: lcancel, wake: make(chan struct{}, 1), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	rs, err := s.opts.Remote.Open(ctx, id, create, h.remoteEvent)
	if err != nil {
		lcancel()
		return nil, err
	}
	h.remote.rs = rs
	h.mu.Lock()
	h.id = rs.ID()
	h.seq = max(h.seq, uint64(max(rs.Last(), 0)))
	h.idleSince = s.now()
	h.mu.Unlock()
	s.mu.Lock()
	if s.closing || s.hubs[h.id] != nil {
		other := s.hubs[h.id]
		s.mu.Unlock()
		close(h.remote.done) // no relay ran
		h.remote.stop()
		if other != nil {
			return other, nil
		}
		return nil, errClosing
	}
	s.hubs[h.id] = h
	s.mu.Unlock()
	go h.remote.relay(h)
	return h, nil
}

// openOnce makes the opening of session id one at a time: it returns the
// session when it is served, else release, which the opener calls once
// the session is served (or failed to open).
func (s *Server) openOnce(id string) (h *hub, release func(), err error) {
	for {
		if h := s.hub(id); h != nil {
			return h, nil, nil
		}
		s.mu.Lock()
		if wait, busy := s.opening[id]; busy {
			s.mu.Unlock()
			<-wait
			continue
		}
		done := make(chan any)
		s.opening[id] = done
		s.mu.Unlock()
		return nil, func() {
			s.mu.Lock()
			delete(s.opening, id)
			s.mu.Unlock()
			close(done)
		}, nil
	}
}

// dispatch hands a client's command to the session: the protocol core of
// an engine session, or the relay of a remote one.
func (h *hub) dispatch(line []byte, c *client) {
	if h.remote == nil {
		h.core.Dispatch(line, c)
		return
	}
	h.remote.push(remoteCmd{line: line, from: c})
}

// drainThen calls done once the session has handled what was sent to it
// and its work is over.
func (h *hub) drainThen(done func()) {
	if h.remote == nil {
		h.core.Drain(done)
		return
	}
	r := h.remote
	r.push(remoteCmd{run: func() {
		r.rs.Settle(r.ctx)
		done()
	}})
}

func (r *remote) push(cmd remoteCmd) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		if cmd.run != nil {
			cmd.run()
		} else {
			cmd.from.sendDirect(answer(commandOf(cmd.line), "", nil, errClosedSession))
		}
		return
	}
	r.queue = append(r.queue, cmd)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// relay sends the commands in arrival order; each answer goes through the
// session's log to the client that asked, after the events the command
// made before it.
func (r *remote) relay(h *hub) {
	defer close(r.done)
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			stopped := r.stopped
			r.mu.Unlock()
			if stopped {
				return
			}
			select {
			case <-r.wake:
			case <-r.ctx.Done():
			}
			continue
		}
		cmd := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		if cmd.run != nil {
			cmd.run()
			continue
		}
		if r.ctx.Err() != nil {
			cmd.from.sendDirect(answer(commandOf(cmd.line), h.id, nil, errClosedSession))
			continue
		}
		from := cmd.from
		r.rs.Do(r.ctx, cmd.line, func(b []byte) {
			frame := append(b, '\n')
			h.Send(&frame, from)
		})
	}
}

// stop ends the relay (the commands still queued are answered as failed)
// and stops following the session, which goes on.
func (r *remote) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	r.cancel()
	<-r.done
	r.rs.Close()
}

// attachRemote is attach for a remote session: the hub is brought up to
// the session's last event, then the client is joined from its cursor.
// A cursor older than the hub's log is replayed from the session's own
// log (it keeps more, from before this server served it); one of another
// epoch, or older than the session keeps, is too old: the answer carries
// the session's messages and the events follow from their seq.
func (h *hub) attachRemote(sb *sub, from *cursor, answerFn func(attachInfo) []byte) error {
	rs := h.remote.rs
	ctx, cancel := context.WithTimeout(h.remote.ctx, remoteTimeout)
	defer cancel()
	if err := rs.Sync(ctx); err != nil {
		return err
	}
	for range 3 {
		p := remotePlan{after: h.lastSeq()}
		if from != nil && (from.epoch == "" || from.epoch == rs.Epoch()) && from.after <= p.after {
			p.after = from.after
			if !h.keeps(from.after) {
				lost, err := rs.Events(ctx, int64(from.after), func(seq int64, frame []byte) {
					p.backfill = append(p.backfill, &entry{seq: uint64(seq), frame: append(append([]byte(nil), frame...), '\n')})
				})
				if err != nil {
					return err
				}
				if lost {
					p.tooOld = true
				}
			}
		} else if from != nil {
			p.tooOld = true
		}
		if p.tooOld {
			seq, msgs, err := rs.Messages(ctx)
			if err != nil {
				return err
			}
			p.after, p.messages, p.backfill = uint64(max(seq, 0)), msgs, nil
		}
		joined, err := h.joinRemote(sb, p, answerFn)
		if joined || err != nil {
			return err
		}
	}
	return errors.New("the session moved on faster than this attach could read it: attach again")
}

// remotePlan is where a remote attach starts: after the event numbered
// after, with the events backfill (from the session's own log) first.
type remotePlan struct {
	after    uint64
	backfill []*entry
	tooOld   bool
	messages []byte
}

// keeps reports whether the hub's log holds every event after `after`.
func (h *hub) keeps(after uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return after >= h.seq || h.firstEventLocked() != 0 && after+1 >= h.firstEventLocked()
}

// firstEventLocked is the seq of the oldest event the log keeps (0:
// none). (h.mu)
func (h *hub) firstEventLocked() uint64 {
	for _, e := range h.log {
		if e.seq != 0 {
			return e.seq
		}
	}
	return 0
}

// joinRemote joins sb by plan p; false when the log has moved past the
// plan's events meanwhile (there would be a gap: plan again).
func (h *hub) joinRemote(sb *sub, p remotePlan, answerFn func(attachInfo) []byte) (bool, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false, errClosedSession
	}
	last := p.after
	if n := len(p.backfill); n > 0 {
		last = max(last, p.backfill[n-1].seq)
	}
	if first := h.firstEventLocked(); h.seq > last && (first == 0 || first > last+1) {
		h.mu.Unlock()
		return false, nil
	}
	sb.h = h
	info := attachInfo{seq: max(h.seq, last)}
	if p.tooOld {
		info.seq = p.after
	}
	var wake []*client
	live := h.nextLocked()
	h.pushLocked(&entry{frame: h.clientsChangedLocked(sb), own: true}, &wake)
	live = max(live, h.base)
	// The log from its first event after the last the client has (or
	// reads in the backfill); the floor skips any the log gets later.
	pos := live
	for q := h.base; q < live; q++ {
		if e := h.log[q-h.base]; e.seq > last {
			pos = q
			break
		}
	}
	sb.pos, sb.live, sb.sent, sb.floor = pos, live, last, last
	if answerFn != nil {
		sb.waiting = true
		info.tooOld, info.remoteMessages = p.tooOld, p.messages
		sb.c.queueDirect(directItem{frame: answerFn(info), activate: sb})
		for _, e := range p.backfill {
			sb.c.queueDirect(directItem{frame: sb.render(e)})
		}
	}
	h.subs = append(h.subs, sb)
	h.idleSince = 0
	h.releaseLocked(wake)
	return true, nil
}

// listRemote lists the durable sessions, those served here first (a new
// one may not be listed by the remote store yet), as get_sessions shows
// them.
func (s *Server) listRemote() ([]sessionInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	infos, err := s.opts.Remote.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []sessionInfo
	seen := map[string]bool{}
	s.mu.Lock()
	for id, h := range s.hubs {
		if h.remote != nil {
			out = append(out, sessionInfo{SessionID: id, Live: true, Durable: true, Clients: []watcher{}})
			seen[id] = true
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b sessionInfo) int { return strings.Compare(a.SessionID, b.SessionID) })
	for _, in := range infos {
		if seen[in.ID] {
			continue
		}
		si := sessionInfo{SessionID: in.ID, Durable: true, Clients: []watcher{}}
		if !in.Updated.IsZero() {
			si.Updated = in.Updated.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, si)
	}
	return out, nil
}
