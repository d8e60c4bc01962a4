package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Role is a client's role on a session by id: a controller drives it, an
// observer only reads (the server refuses its other commands).
type Role string

// The roles.
const (
	Controller Role = "controller"
	Observer   Role = "observer"
)

// Cursor is a place in a session's events: after event Seq of the server
// run Epoch (a restarted server has another epoch, and a cursor of the
// old one is too old).
type Cursor struct {
	Epoch string
	Seq   uint64
}

// OpenOptions are the optional fields of open_session.
type OpenOptions struct {
	// Cwd is the session's working directory, absolute; the server's
	// when empty.
	Cwd string
	// Updates is "full" (the default) or "delta": whether message_update
	// frames carry the message so far.
	Updates string
}

// AttachOptions are the optional fields of attach.
type AttachOptions struct {
	// After replays the events after this cursor (from Session.Cursor or
	// an Event's Seq); nil delivers the events from now on.
	After *Cursor
	// Role is Controller (the default) or Observer.
	Role Role
	// Updates is "full" (the default) or "delta".
	Updates string
	// UI and HostTools are the session's dialog and host tool handlers
	// from the start, so the requests of the replay that follows the
	// attach find them (Session.OnUI and Session.RegisterHostTools come
	// after Attach returns). HostTools only installs handlers: nothing is
	// sent (the session's tools were registered before, by this host or
	// another).
	UI        UIHandler
	HostTools []HostTool
}

// SessionInfo is a session get_sessions lists: a live one (with its last
// event's number and who watches it) or a stored one (Live false).
type SessionInfo struct {
	SessionID string          `json:"sessionId"`
	Cwd       string          `json:"cwd"`
	Title     string          `json:"title,omitempty"`
	Updated   time.Time       `json:"updated"`
	Live      bool            `json:"live"`
	Seq       uint64          `json:"seq"`
	Clients   []SessionClient `json:"clients"`
}

// SessionClient is a client watching a live session; Self marks the
// asking one.
type SessionClient struct {
	Client string `json:"client"`
	Role   Role   `json:"role"`
	Self   bool   `json:"self"`
}

// Session is a session by id on an agent server, which this client opened
// (OpenSession) or attached to (Attach). Its typed methods are the
// Client's, sent with the session's id; its events carry their number in
// the session (Event.Seq).
//
// The client keeps the session's cursor: the epoch of the server run and
// the number of the last event delivered. When the connection drops, or
// the server says the client lagged, the client attaches again after the
// cursor, and the subscribers see every event once, in order, with no gap
// and no duplicate. When the server no longer has those events, they get
// an EventCursorTooOld notice with the session's messages instead.
type Session struct {
	target

	done chan struct{} // closed when the session has ended for this client

	// Guarded by c.mu.
	id      string
	epoch   string
	role    Role
	updates string
	// seq is the cursor: the number of the last event delivered; set
	// (positioned) by AttachOptions.After or the first answer.
	seq        uint64
	positioned bool
	// replayEnd is the number of the last event before the latest
	// attach: the events up to it are a replay, whose requests (host tool
	// calls, dialogs) wait for its end, since a later event of the replay
	// may say they were answered.
	replayEnd uint64
	deferred  []pendingRequest
	// on is the connection the session is attached on (nil: not
	// attached); gen counts the attachments.
	on  *link
	gen int
	// holding: no Subscribe yet; the events are held for the first one.
	holding bool
	held    []Event
	ended   bool
	err     error
}

// pendingRequest is a request event of a replay, acted on at its end.
type pendingRequest struct {
	id, typ string
	line    []byte
}

func (c *Client) newSession(id string, role Role, updates string) *Session {
	s := &Session{done: make(chan struct{}), id: id, role: role, updates: updates, holding: true}
	s.target = newTarget(c, s)
	return s
}

// Sessions lists the server's sessions (get_sessions): the live ones and
// the stored ones, newest first; cwd, when not empty, keeps one directory's.
func (c *Client) Sessions(ctx context.Context, cwd string) ([]SessionInfo, error) {
	f, _, err := c.do(ctx, request{typ: "get_sessions", fields: struct {
		Cwd string `json:"cwd,omitempty"`
	}{cwd}})
	if err != nil {
		return nil, err
	}
	var out struct {
		Sessions []SessionInfo `json:"sessions"`
	}
	return out.Sessions, decodeData("get_sessions", f, &out)
}

// OpenSession starts a new session on the server (open_session) with this
// client as its controller.
func (c *Client) OpenSession(ctx context.Context, opts OpenOptions) (*Session, error) {
	s := c.newSession("", Controller, opts.Updates)
	_, _, err := c.do(ctx, request{typ: "open_session", fields: struct {
		Cwd     string `json:"cwd,omitempty"`
		Updates string `json:"updates,omitempty"`
	}{opts.Cwd, opts.Updates}, onAnswer: s.answered})
	if err != nil {
		s.abandon(err)
		return nil, err
	}
	return s, nil
}

type attachFields struct {
	SessionID string  `json:"sessionId"`
	After     *uint64 `json:"after,omitempty"`
	Epoch     string  `json:"epoch,omitempty"`
	Role      Role    `json:"role,omitempty"`
	Updates   string  `json:"updates,omitempty"`
}

// Attach attaches this client to a live or stored session of the server.
// With opts.After the events after that cursor follow (a replay), or, when
// the server no longer has them, an EventCursorTooOld notice with the
// session's messages; they are held for the Session's first subscriber.
// A client attaches to a session once: attach again after Detach.
func (c *Client) Attach(ctx context.Context, sessionID string, opts AttachOptions) (*Session, error) {
	if sessionID == "" {
		return nil, errors.New("xcsh attach: a session id is required (Sessions lists them)")
	}
	role := opts.Role
	if role == "" {
		role = Controller
	}
	s := c.newSession(sessionID, role, opts.Updates)
	s.ui = opts.UI
	if opts.HostTools != nil {
		s.tools = make(map[string]HostTool, len(opts.HostTools))
		for _, tool := range opts.HostTools {
			s.tools[tool.Name] = tool
		}
	}
	fields := attachFields{SessionID: sessionID, Role: role, Updates: opts.Updates}
	if a := opts.After; a != nil {
		s.seq, s.epoch, s.positioned = a.Seq, a.Epoch, true
		fields.After, fields.Epoch = &a.Seq, a.Epoch
	}
	c.mu.Lock()
	if c.sessions[sessionID] != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("xcsh attach: this client is already attached to session %s: use its Session, or Detach it first", sessionID)
	}
	// Entered now (gen 0: the supervisor leaves it alone) so that a second
	// Attach of the same id is refused.
	c.sessions[sessionID] = s
	c.mu.Unlock()
	if _, _, err := c.do(ctx, request{typ: "attach", fields: fields, onAnswer: s.answered}); err != nil {
		s.abandon(err)
		return nil, err
	}
	return s, nil
}

// reattach attaches the session again on l after its cursor (the
// supervisor's).
func (s *Session) reattach(l *link) error {
	c := s.c
	c.mu.Lock()
	after := s.seq
	fields := attachFields{SessionID: s.id, After: &after, Epoch: s.epoch, Role: s.role, Updates: s.updates}
	c.mu.Unlock()
	_, _, err := c.do(c.root, request{typ: "attach", fields: fields, on: l, onAnswer: s.answered})
	return err
}

// answered takes an open_session or attach answer (reader goroutine,
// before the frames that follow it): the session is attached on l, its
// cursor set, and a cursor too old is told to the subscribers.
func (s *Session) answered(l *link, f *frame) {
	var d struct {
		SessionID    string          `json:"sessionId"`
		Epoch        string          `json:"epoch"`
		Seq          uint64          `json:"seq"`
		Role         Role            `json:"role"`
		CursorTooOld bool            `json:"cursorTooOld"`
		Messages     json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(f.Data, &d)
	c := s.c
	c.mu.Lock()
	if s.ended {
		c.mu.Unlock()
		return
	}
	if s.id == "" {
		s.id = d.SessionID
	}
	c.sessions[s.id] = s
	s.epoch, s.on = d.Epoch, l
	s.gen++
	if d.Role != "" {
		s.role = d.Role
	}
	switch {
	case d.CursorTooOld:
		var msgs []Message
		_ = json.Unmarshal(d.Messages, &msgs)
		s.seq = d.Seq
		// What was pending before the gap may have been answered in it.
		s.deferred = nil
		s.pushLocked(Event{Type: EventCursorTooOld, SessionID: s.id, Raw: f.Data,
			CursorTooOld: &CursorTooOld{Epoch: d.Epoch, Seq: d.Seq, Messages: msgs}})
	case !s.positioned || s.seq > d.Seq:
		// A cursor ahead of the server's last event has nothing to replay.
		s.seq = d.Seq
	}
	s.positioned = true
	s.replayEnd = d.Seq
	var run []pendingRequest
	if s.seq >= s.replayEnd {
		run, s.deferred = s.deferred, nil
	}
	c.broadcastLocked()
	c.mu.Unlock()
	for _, r := range run {
		s.target.hostRequest(r.typ, r.line)
	}
}

// pushLocked delivers ev to the session's subscribers, and holds it for
// the first one while there is none. (c.mu)
func (s *Session) pushLocked(ev Event) {
	if s.holding {
		s.held = append(s.held, ev)
	}
	s.c.publishLocked(s, ev)
}

// route takes a frame of the session from l's reader: events in order,
// once each; the client's own notices (lagged, session_closed) acted on.
func (s *Session) route(l *link, f *frame, line []byte) {
	c := s.c
	ev := Event{Type: f.Type, SessionID: f.SessionID, Seq: f.Seq, Raw: json.RawMessage(line)}
	var ids struct {
		ID       string `json:"id"`
		Method   string `json:"method"`
		TargetID string `json:"targetId"`
	}
	_ = json.Unmarshal(line, &ids)
	c.mu.Lock()
	switch {
	case s.ended:
		c.mu.Unlock()
		return
	case f.Type == "lagged":
		// The server detached the session: attach again from the cursor.
		if s.on == l {
			s.on = nil
			c.broadcastLocked()
		}
		c.mu.Unlock()
		c.poke()
		return
	case f.Type == "session_closed" && f.Reason == "shutdown":
		// The server is stopping, not the session: the connection ends
		// next, and the session is attached again from its cursor once a
		// server answers.
		if s.on == l {
			s.on = nil
			c.broadcastLocked()
		}
		c.mu.Unlock()
		return
	case f.Type == "session_closed":
		s.pushLocked(ev)
		c.mu.Unlock()
		s.end(ErrSessionClosed)
		return
	case f.Seq == 0:
		// Not an event (a response nobody waits for): passed on.
		s.pushLocked(ev)
		c.mu.Unlock()
		return
	case s.on != l || f.Seq <= s.seq:
		// Of an attachment the client has left, or delivered already (a
		// replay overlapping what was seen).
		c.mu.Unlock()
		return
	case f.Seq != s.seq+1:
		// A gap, which a correct server never makes: attach again from
		// the cursor rather than skip events.
		s.on = nil
		c.broadcastLocked()
		c.mu.Unlock()
		c.poke()
		return
	}
	s.seq = f.Seq
	s.pushLocked(ev)
	replaying := f.Seq <= s.replayEnd
	var run []pendingRequest
	var resolved string
	this := pendingRequest{id: ids.ID, typ: f.Type, line: line}
	switch f.Type {
	case "agent_start", "agent_end":
		c.settleLocked(s.id)
	case "host_tool_call":
		if replaying {
			s.deferred = append(s.deferred, this)
		} else {
			run = append(run, this)
		}
	case "extension_ui_request":
		switch {
		case ids.Method == "cancel":
			s.dropDeferredLocked(ids.TargetID)
			run = append(run, this)
		case replaying && (UIRequest{Method: ids.Method}).IsDialog():
			s.deferred = append(s.deferred, this)
		default:
			run = append(run, this)
		}
	case "host_tool_cancel":
		s.dropDeferredLocked(ids.TargetID)
		run = append(run, this)
	case "resolved":
		s.dropDeferredLocked(ids.ID)
		resolved = ids.ID
	}
	if f.Seq == s.replayEnd {
		run, s.deferred = append(run, s.deferred...), nil
	}
	c.mu.Unlock()
	if resolved != "" {
		s.cancelCall(resolved, errResolved)
	}
	for _, r := range run {
		s.target.hostRequest(r.typ, r.line)
	}
}

// dropDeferredLocked forgets a replayed request that was answered or
// withdrawn later in the replay. (c.mu)
func (s *Session) dropDeferredLocked(id string) {
	for i, r := range s.deferred {
		if r.id == id {
			s.deferred = append(s.deferred[:i], s.deferred[i+1:]...)
			return
		}
	}
}

// end ends the session for this client: its pending requests fail with
// cause (but detach and close_session, which are answered), its handlers
// are cancelled, its subscriptions close after their queued events.
func (s *Session) end(cause error) {
	c := s.c
	c.mu.Lock()
	if s.ended {
		c.mu.Unlock()
		return
	}
	s.ended, s.err = true, cause
	if c.sessions[s.id] == s {
		delete(c.sessions, s.id)
	}
	s.on, s.deferred = nil, nil
	pending := map[string]*call{}
	for id, cl := range c.pending {
		if cl.session == s.id && s.id != "" && cl.typ != "detach" && cl.typ != "close_session" {
			pending[id] = cl
			delete(c.pending, id)
		}
	}
	cancels := s.target.cancelsLocked()
	c.finishLocked(s)
	c.broadcastLocked()
	c.mu.Unlock()
	failCalls(pending, cause)
	for _, cancel := range cancels {
		cancel(cause)
	}
	close(s.done)
}

// abandon ends a session whose open or attach failed; if the answer came
// after all (the caller's ctx ended as it arrived), the server is told to
// detach it.
func (s *Session) abandon(cause error) {
	c := s.c
	c.mu.Lock()
	attached := s.gen > 0 && !s.ended && !c.ended
	id := s.id
	if attached {
		c.handlers.Add(1) // under c.mu, before end: Close waits for it
	}
	c.mu.Unlock()
	s.end(cause)
	if !attached {
		return
	}
	go func() {
		defer c.handlers.Done()
		_, _, _ = c.do(c.root, request{typ: "detach", fields: struct {
			SessionID string `json:"sessionId"`
		}{id}})
	}()
}

// notAttachedSince reports whether err is the server's "Not attached"
// refusal of a command sent under attachment gen while the session was
// being attached again (after a lagged notice): the command was not
// carried out and may go again.
func (s *Session) notAttachedSince(err error, gen int) bool {
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, "Not attached to session ") {
		return false
	}
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return !s.ended && (s.gen != gen || s.on == nil)
}

// ID is the session's id.
func (s *Session) ID() string {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.id
}

// Cursor is where the session's events stand for this client: the server
// run and the number of the last event delivered to subscribers. Keep it
// to attach again later (AttachOptions.After), from another client too.
func (s *Session) Cursor() Cursor {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return Cursor{Epoch: s.epoch, Seq: s.seq}
}

// Role is the client's role on the session, as the server last answered.
func (s *Session) Role() Role {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.role
}

// Done is closed when the session has ended for this client: Detach, its
// close (by any client), a failed re-attach, or the client's end.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err says why the session ended (nil while it has not): ErrDetached,
// ErrSessionClosed, or the client's end (ErrClosed).
func (s *Session) Err() error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.err
}

// Detach stops receiving the session's frames (the session goes on); the
// Session ends with ErrDetached.
func (s *Session) Detach(ctx context.Context) error {
	if s.Err() != nil {
		return nil
	}
	_, _, err := s.c.do(ctx, request{typ: "detach", t: &s.target})
	s.end(ErrDetached)
	return err
}

// CloseSession ends the session on the server (as a controller): its run
// is aborted, it is saved, and every other client is told; the Session
// ends with ErrSessionClosed.
func (s *Session) CloseSession(ctx context.Context) error {
	_, _, err := s.c.do(ctx, request{typ: "close_session", t: &s.target})
	if err == nil {
		s.end(ErrSessionClosed)
	}
	return err
}

// Subscribe delivers the session's events to the returned channel, in
// order, once each, across reconnections, until cancel is called or the
// session ends (the channel is then closed after the queued events). The
// first Subscribe receives every event since the attach, the replay that
// follows it included, so nothing is missed between Attach and
// Subscribe; a later one receives the events from its call on. A session
// nobody subscribes to holds its events for the first subscriber.
//
// Besides the session's numbered events (Event.Seq), a subscriber may see
// an EventCursorTooOld notice (the events after the cursor were lost; it
// carries the messages), session_closed, and responses nobody waits for.
// The policy is Client.Subscribe's: an unbounded queue per subscription.
func (s *Session) Subscribe(buffer int) (<-chan Event, func()) {
	return s.c.subscribe(s, buffer, true)
}

// Watch starts watching the session's events for the first one match
// accepts, from this call on (see Client.Watch).
func (s *Session) Watch(match func(Event) bool) *Watch {
	ch, cancel := s.c.subscribe(s, 16, false)
	return &Watch{ch: ch, cancel: cancel, match: match}
}

// WaitFor waits for the first event of the session from now on that match
// accepts.
func (s *Session) WaitFor(ctx context.Context, match func(Event) bool) (Event, error) {
	return s.Watch(match).Wait(ctx)
}
