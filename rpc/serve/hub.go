package serve

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/rpc"
)

// hub is one served session's log and its subscribers. It is the engine
// session's Sink: each event is numbered (seq, one more than the last),
// encoded once as its RPC frame, kept in a bounded log and delivered to
// every attached subscriber by its connection's writer, which reads the
// log from its own cursor. The protocol core's answers to a command pass
// through the log too, addressed to the client that sent it, so a client
// reads a session's answers and events in the order the session made
// them. The session never waits for a client: a subscriber that falls
// out of the log is dropped with a lagged notice (one that blocks instead,
// a client's own session, is the exception: the session waits for it as
// --mode rpc waits for its stdout).
type hub struct {
	srv  *Server
	id   string
	live *sessions.Live
	core *rpc.Server
	// remote, when set, is a remote session's link (remote.go): then
	// live and core are nil, the events' numbers are the remote session's,
	// and the server's own frames carry none.
	remote *remote

	mu   sync.Mutex
	cond *sync.Cond // a blocking subscriber read something, or left
	// log holds the entries at positions base .. base+len(log)-1; next is
	// the position of the next entry.
	log   []*entry
	base  uint64
	bytes int
	seq   uint64 // the number of the last event
	subs  []*sub
	// idleSince is when the last subscriber left (zero while one is
	// attached): eviction's clock.
	idleSince int64
	// closed: the session has ended; each subscriber leaves once it has
	// read the rest of the log, and drained is closed when the last has.
	closed      bool
	closeReason string
	drained     chan struct{}
}

// entry is one frame of the log.
type entry struct {
	seq   uint64  // an event's number; 0 for an answer
	to    *client // an answer's client; nil for an event
	frame []byte  // the RPC frame, ending in a newline
	// ev is the event without its transient parts (a message_update's
	// snapshot), to encode it again for a lean subscriber; nil for an
	// answer and for the hub's own frames.
	ev engine.Event
	// own marks the server's own frames (resolved, clients_changed), which
	// a bare subscriber (--mode rpc's protocol) never sees.
	own bool
	// delta marks a remote session's message_update, which a lean
	// subscriber reads without its snapshots (leanDelta).
	delta bool
	// dec and leanDec are the frame decorated with the session id and seq
	// (full, and lean for a message_update), made by the first subscriber
	// that needs them and shared by the others: ten clients of a session
	// cost one encoding, not ten (guarded by h.mu). They are not counted
	// in the log's byte bound, which they at most double.
	dec, leanDec []byte
}

// sub is one client's attachment to a session.
type sub struct {
	h   *hub
	c   *client
	pos uint64 // the next position to deliver (guarded by h.mu)
	// live is the position of the first frame made after the attach: the
	// answers before it were for an earlier attachment of the client (it
	// had them, or they are lost with it); a replay is events only.
	live uint64
	// waiting: its answer is not written yet; nothing of the log goes
	// before it (guarded by h.mu).
	waiting bool
	role    role
	// bare: frames go out as --mode rpc writes them, without sessionId and
	// seq (a connection's own session in the compatible mode).
	bare bool
	lean bool // message_update without its snapshots
	// blocking: the session waits for this subscriber rather than drop it
	// (a client's own session: --mode rpc's backpressure).
	blocking bool
	gone     bool // detached (guarded by h.mu)
	// sent is the number of the last event delivered to it: its cursor
	// (guarded by h.mu).
	sent uint64
	// lagged: it fell out of the log and was detached; its writer has yet
	// to tell it so (guarded by h.mu).
	lagged bool
	// floor: the events up to it reached the client another way (a remote
	// session's replay from its own log): the log's are skipped.
	floor uint64
}

type role int

const (
	controller role = iota
	observer
)

func (r role) String() string {
	if r == observer {
		return "observer"
	}
	return "controller"
}

func newHub(srv *Server, seq uint64) *hub {
	h := &hub{srv: srv, seq: seq, base: 1, drained: make(chan struct{})}
	h.cond = sync.NewCond(&h.mu)
	return h
}

// Event implements engine.Sink: on the executor, in order.
func (h *hub) Event(ev engine.Event) {
	var b []byte
	rpc.EncodeEvent(&b, ev, false)
	if u, ok := ev.(engine.MessageUpdate); ok {
		u.Partial = nil // valid during this call only
		ev = u
	}
	h.mu.Lock()
	h.seq++
	h.appendLocked(&entry{seq: h.seq, frame: b, ev: ev})
}

// Buf implements rpc.Frames.
func (h *hub) Buf() *[]byte { b := make([]byte, 0, 256); return &b }

// Send implements rpc.Frames: an answer for the client that asked (an
// event when to is nil, which the core never sends).
func (h *hub) Send(bp *[]byte, to rpc.Client) {
	c, _ := to.(*client)
	h.mu.Lock()
	if c == nil {
		h.seq++
		h.appendLocked(&entry{seq: h.seq, frame: *bp})
		return
	}
	if !h.attachedLocked(c) {
		// It detached, or fell out of the log, since it asked: the answer
		// still reaches it.
		h.mu.Unlock()
		c.sendDirect(decorate(*bp, h.id, 0))
		return
	}
	h.appendLocked(&entry{to: c, frame: *bp})
}

// attachedLocked reports whether c reads the session's log. (h.mu)
func (h *hub) attachedLocked(c *client) bool {
	for _, s := range h.subs {
		if s.c == c {
			return true
		}
	}
	return false
}

// notice logs a frame of the server's own (resolved, clients) as an event
// of the session, for the subscribers that are not bare.
func (h *hub) notice(frame []byte) {
	h.mu.Lock()
	h.appendLocked(&entry{seq: h.ownSeqLocked(), frame: frame, own: true})
}

// ownSeqLocked numbers a frame of the server's own: the next event number
// of an engine session; none on a remote session, whose numbers are its
// own and the same on every server. (h.mu)
func (h *hub) ownSeqLocked() uint64 {
	if h.remote != nil {
		return 0
	}
	h.seq++
	return h.seq
}

// appendLocked adds e at the end of the log, trims the log to its bounds
// and wakes the subscribers' writers. Called with h.mu held; returns with
// it released.
func (h *hub) appendLocked(e *entry) {
	var wake []*client
	h.pushLocked(e, &wake)
	h.releaseLocked(wake)
}

// pushLocked adds e at the end of the log and trims the log to its
// bounds; the clients to wake besides the subscribers are added to wake.
// (h.mu)
func (h *hub) pushLocked(e *entry, wake *[]*client) {
	for e != nil {
		h.log = append(h.log, e)
		h.bytes += len(e.frame)
		e = nil
		lagged := h.trimLocked(wake)
		if lagged && !h.closed {
			// Who watches has changed: the others are told, as of any
			// departure.
			e = &entry{seq: h.ownSeqLocked(), frame: h.clientsChangedLocked(nil), own: true}
		}
	}
	if cap(h.log) > 1024 && len(h.log) < cap(h.log)/4 {
		h.log = append([]*entry(nil), h.log...)
	}
}

// releaseLocked releases h.mu and wakes the writers of the subscribers
// and of wake.
func (h *hub) releaseLocked(wake []*client) {
	for _, s := range h.subs {
		wake = append(wake, s.c)
	}
	h.mu.Unlock()
	for _, c := range wake {
		c.kick()
	}
}

// trimLocked drops the oldest entries beyond the log's bounds. A blocking
// subscriber that has not read one yet holds it (the session waits); any
// other subscriber that has not read an event it would see falls out of
// the log: it is detached, and its writer tells it so (lagged); an answer
// for it goes to it directly. The clients to wake are added to wake; it
// reports whether some subscriber fell out. (h.mu)
func (h *hub) trimLocked(wake *[]*client) (lagged bool) {
	lim := h.srv.opts.Keep
	for len(h.log) > 1 && (len(h.log) > lim.Entries || h.bytes > lim.Bytes) {
		if !h.closed && h.blockedLocked() {
			h.cond.Wait()
			continue
		}
		e := h.log[0]
		var out []*sub
		for _, s := range h.subs {
			if s.pos != h.base {
				continue // it has read e
			}
			switch {
			case !s.sees(e, h.base) || s.blocking: // (blocking: the session is closing)
				s.pos++
			case e.to != nil:
				s.c.queueDirect(directItem{frame: s.render(e)})
				s.pos++
			default:
				out = append(out, s)
			}
		}
		for _, s := range out {
			// The answers for it still in the log go to it directly: they
			// would wait there for a reader that has gone.
			for p := h.base + 1; p < h.nextLocked(); p++ {
				if e := h.log[p-h.base]; e.to == s.c && s.sees(e, p) {
					s.c.queueDirect(directItem{frame: s.render(e)})
				}
			}
			s.detachLocked()
			s.lagged = true
			*wake = append(*wake, s.c)
			lagged = true
		}
		h.bytes -= len(e.frame)
		e.dec, e.leanDec = nil, nil // a writer may still hold them: not reused
		h.log[0] = nil
		h.log = h.log[1:]
		h.base++
	}
	return lagged
}

// blockedLocked reports whether trimming the oldest entry would drop one
// a blocking subscriber has not read yet. (h.mu)
func (h *hub) blockedLocked() bool {
	for _, s := range h.subs {
		if s.blocking && s.pos <= h.base && !s.gone {
			return true
		}
	}
	return false
}

// next is the position after the last entry. (h.mu)
func (h *hub) nextLocked() uint64 { return h.base + uint64(len(h.log)) }

// backlogThreshold is how many entries behind a subscriber may be before
// the session merges its piled-up deltas (engine.Backlog).
const backlogThreshold = 64

// Backlogged implements engine.Backlog: some subscriber is behind, so the
// engine merges the deltas that pile up meanwhile into fewer frames, for
// every subscriber, as on a full stdout pipe.
func (h *hub) Backlogged() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := h.nextLocked()
	for _, s := range h.subs {
		if next-s.pos > backlogThreshold {
			return true
		}
	}
	return false
}

// maxBatch bounds the frames one take hands a writer.
const maxBatch = 256

// take returns the next frames for s, in order, decorated for it: the log
// from its cursor (the events, and the answers to its own client). gone is
// set when s leaves: it fell out of the log (the frames end with the
// lagged notice), or its session has closed and s has read all of it (then
// with session_closed).
func (s *sub) take(buf [][]byte) (frames [][]byte, gone bool) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	frames = buf
	if s.lagged {
		s.lagged = false
		return append(frames, laggedFrame(h.id, s.sent)), true
	}
	if s.gone || s.waiting {
		return frames, false
	}
	next := h.nextLocked()
	for n := 0; s.pos < next && n < maxBatch; s.pos++ {
		e := h.log[s.pos-h.base]
		if !s.sees(e, s.pos) {
			continue
		}
		frames = append(frames, s.render(e))
		if e.seq != 0 {
			s.sent = e.seq
		}
		n++
	}
	if s.blocking {
		h.cond.Broadcast()
	}
	if h.closed && s.pos == next {
		if !s.bare {
			frames = append(frames, closedFrame(h.id, h.closeReason))
		}
		s.detachLocked()
		return frames, true
	}
	return frames, false
}

// sees reports whether s delivers e, the entry at position pos: every
// event (but the server's own frames on a bare subscriber), and the
// answers to its client made since it attached. (h.mu)
func (s *sub) sees(e *entry, pos uint64) bool {
	if e.to != nil {
		return e.to == s.c && pos >= s.live
	}
	if e.seq != 0 && e.seq <= s.floor {
		return false
	}
	return !(s.bare && e.own)
}

// render is e's frame as s delivers it. (h.mu)
func (s *sub) render(e *entry) []byte {
	if s.bare {
		return s.encode(e)
	}
	if _, ok := e.ev.(engine.MessageUpdate); ok && s.lean {
		if e.leanDec == nil {
			e.leanDec = decorate(s.encode(e), s.h.id, e.seq)
		}
		return e.leanDec
	}
	if e.delta && s.lean {
		if e.leanDec == nil {
			e.leanDec = decorate(leanDelta(e.frame), s.h.id, 0)
		}
		return e.leanDec
	}
	if e.dec == nil {
		e.dec = decorate(e.frame, s.h.id, e.seq)
	}
	return e.dec
}

// encode is e's frame as s reads it (lean or full).
func (s *sub) encode(e *entry) []byte {
	if u, ok := e.ev.(engine.MessageUpdate); ok && s.lean {
		var b []byte
		rpc.EncodeEvent(&b, u, true)
		return b
	}
	return e.frame
}

// activate lets the log follow the answer its client has written.
func (s *sub) activate() {
	s.h.mu.Lock()
	s.waiting = false
	s.h.mu.Unlock()
}

// detachLocked removes s from its session. (h.mu)
func (s *sub) detachLocked() {
	h := s.h
	if s.gone {
		return
	}
	s.gone = true
	for i, o := range h.subs {
		if o == s {
			h.subs = append(h.subs[:i], h.subs[i+1:]...)
			break
		}
	}
	if len(h.subs) == 0 {
		h.idleSince = h.srv.now()
		if h.closed {
			close(h.drained)
		}
	}
	h.cond.Broadcast()
}

// decorate adds the session id and, for an event, its number at the end
// of a frame's object.
func decorate(frame []byte, id string, seq uint64) []byte {
	body := bytes.TrimSuffix(frame, []byte("\n"))
	if len(body) < 2 || body[len(body)-1] != '}' {
		return frame
	}
	out := make([]byte, 0, len(frame)+len(id)+40)
	out = append(out, body[:len(body)-1]...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"sessionId":`...)
	out = engine.AppendJSONString(out, id)
	if seq != 0 {
		out = append(out, `,"seq":`...)
		out = strconv.AppendUint(out, seq, 10)
	}
	return append(out, '}', '\n')
}

func laggedFrame(id string, lastSeq uint64) []byte {
	b := []byte(`{"type":"lagged","sessionId":`)
	b = engine.AppendJSONString(b, id)
	b = append(b, `,"lastSeq":`...)
	b = strconv.AppendUint(b, lastSeq, 10)
	return append(b, '}', '\n')
}

var (
	_ engine.Sink    = (*hub)(nil)
	_ engine.Backlog = (*hub)(nil)
	_ rpc.Frames     = (*hub)(nil)
)

// resolved tells every client that a request of the session was answered
// (rpc.Options.Resolved), on the answering client's reader.
func (h *hub) resolved(id string) {
	b := append([]byte(`{"type":"resolved","id":`), engine.AppendJSONString(nil, id)...)
	h.notice(append(b, '}', '\n'))
}

// clientsChangedLocked is the frame that tells every client who watches
// the session now (with arriving, about to be attached): the last
// controller leaving is an event, not a failure. (h.mu)
func (h *hub) clientsChangedLocked(arriving *sub) []byte {
	var ctl, obs int
	subs := h.subs
	if arriving != nil {
		subs = append(subs[:len(subs):len(subs)], arriving)
	}
	for _, s := range subs {
		if s.role == observer {
			obs++
		} else {
			ctl++
		}
	}
	b := []byte(`{"type":"clients_changed","controllers":`)
	b = strconv.AppendInt(b, int64(ctl), 10)
	b = append(b, `,"observers":`...)
	b = strconv.AppendInt(b, int64(obs), 10)
	return append(b, '}', '\n')
}

// closedFrame tells a client its session has ended: reason is "closed"
// (close_session) or "shutdown" (the server is stopping; the session goes
// on from its file after a restart).
func closedFrame(id, reason string) []byte {
	b := append([]byte(`{"type":"session_closed","sessionId":`), engine.AppendJSONString(nil, id)...)
	b = append(b, `,"reason":`...)
	b = engine.AppendJSONString(b, reason)
	return append(b, '}', '\n')
}

// cursor is where an attach starts: after the event numbered after, of
// the server run epoch ("" for this one).
type cursor struct {
	after uint64
	epoch string
}

// attachInfo is what an attach answer says of the log.
type attachInfo struct {
	seq uint64 // the last event before the attach
	// tooOld: the events after the cursor are no longer all kept; messages
	// are the session's messages, and events follow from seq on.
	tooOld   bool
	messages []engine.Message
	// remoteMessages are a remote session's messages, encoded.
	remoteMessages []byte
}

// epoch names the numbering of the session's events: this run of the
// server's, or a remote session's own.
func (h *hub) epoch() string {
	if h.remote != nil {
		return h.remote.rs.Epoch()
	}
	return h.srv.epoch
}

// attach adds sb to the session, delivering from the cursor (nil: from
// now on), after answer(info), which its client writes first. It runs on
// the session's executor, where the events are made: the messages of a
// cursor too old and the position events resume from are one moment.
// Every subscriber is told who watches now.
func (h *hub) attach(sb *sub, from *cursor, answer func(attachInfo) []byte) error {
	if h.remote != nil {
		return h.attachRemote(sb, from, answer)
	}
	var err error
	eng := h.live.Engine()
	eng.Call(func() { err = h.join(sb, from, answer, eng.Messages) })
	return err
}

// join is attach's work, on the executor; messages are the session's.
func (h *hub) join(sb *sub, from *cursor, answer func(attachInfo) []byte, messages func() []engine.Message) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return errClosedSession
	}
	sb.h = h
	info := attachInfo{seq: h.seq}
	// Its arrival first, which may trim the log: what the replay finds
	// kept is then still kept when it reads it.
	var wake []*client
	live := h.nextLocked()
	if !sb.bare {
		h.seq++
		h.pushLocked(&entry{seq: h.seq, frame: h.clientsChangedLocked(sb), own: true}, &wake)
		live = max(live, h.base)
	}
	sb.pos, sb.live, sb.sent = live, live, info.seq
	if from != nil {
		first := uint64(0)
		for _, e := range h.log {
			if e.seq != 0 && e.seq <= info.seq {
				first = e.seq
				break
			}
		}
		// A cursor past the last event was numbered by another run of
		// the server (one that had numbered further: a client that sends
		// no epoch, or the fixed epoch of deterministic mode).
		stale := from.epoch != "" && from.epoch != h.srv.epoch || from.after > info.seq
		switch {
		case !stale && from.after == info.seq:
			// Nothing missed.
		case !stale && first != 0 && from.after+1 >= first:
			for p := h.base; p < live; p++ {
				if e := h.log[p-h.base]; e.seq > from.after {
					sb.pos, sb.sent = p, from.after
					break
				}
			}
		default:
			info.tooOld = true
			info.messages = messages()
		}
	}
	if answer != nil {
		sb.waiting = true
		sb.c.queueDirect(directItem{frame: answer(info), activate: sb})
	}
	h.subs = append(h.subs, sb)
	h.idleSince = 0
	h.releaseLocked(wake)
	return nil
}

// detach removes sb; the others are told who watches now.
func (h *hub) detach(sb *sub) {
	h.mu.Lock()
	if sb.gone {
		h.mu.Unlock()
		return
	}
	sb.detachLocked()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.appendLocked(&entry{seq: h.ownSeqLocked(), frame: h.clientsChangedLocked(nil), own: true})
}

// watchers describes who watches the session, for get_sessions.
func (h *hub) watchers(self *client) []watcher {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]watcher, 0, len(h.subs))
	for _, s := range h.subs {
		out = append(out, watcher{Client: s.c.name, Role: s.role.String(), Self: s.c == self})
	}
	return out
}

type watcher struct {
	Client string `json:"client"`
	Role   string `json:"role"`
	Self   bool   `json:"self,omitempty"`
}

// lastSeq is the number of the session's last event.
func (h *hub) lastSeq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}
