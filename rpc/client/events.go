package client

import (
	"context"
	"encoding/json"
	"sync"
)

// Event is a frame the agent wrote that is not the response to a pending
// request: run events (agent_start … agent_end), auto_retry_*, ready,
// host_tool_call / host_tool_cancel and extension_ui_request (also handled
// by the client), and responses nobody waits for (a late response after a
// timeout, an id-less failure that matched no request). Raw is the whole
// frame. A line that is not JSON (never written by xcsh) is delivered with
// Type "" and the line as Raw.
//
// An event of a session by id (Session.Subscribe) carries its SessionID
// and its number in the session, Seq (1, 2, 3, …: the same for every
// client of the session). One event is the client's own, not a frame:
// Type EventCursorTooOld, with CursorTooOld set (see Session.Subscribe).
type Event struct {
	Type      string
	SessionID string
	Seq       uint64
	Raw       json.RawMessage
	// CursorTooOld is set on the EventCursorTooOld notice only.
	CursorTooOld *CursorTooOld
}

// EventCursorTooOld is the Type of the notice a Session's subscribers get
// when the server no longer had the events after the session's cursor
// (its log moved on, or it restarted): the events in between are lost,
// and the notice carries the session's messages instead. Its Raw is the
// attach answer's data.
const EventCursorTooOld = "cursor_too_old"

// CursorTooOld is the notice of EventCursorTooOld: the session's messages
// as of event Seq of the server run Epoch; the events that follow are
// numbered from Seq+1.
type CursorTooOld struct {
	Epoch    string
	Seq      uint64
	Messages []Message
}

// Decode decodes the whole frame into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Raw, v) }

// Message is the "message" of a message_start/update/end or turn_end frame.
func (e Event) Message() (*Message, bool) {
	var f struct {
		Message *Message `json:"message"`
	}
	if json.Unmarshal(e.Raw, &f) != nil || f.Message == nil {
		return nil, false
	}
	return f.Message, true
}

// AssistantEvent is the assistantMessageEvent of a message_update frame:
// its type (text_delta, toolcall_end, …) and its delta ("" for kinds
// without one).
func (e Event) AssistantEvent() (kind, delta string, ok bool) {
	if e.Type != "message_update" {
		return "", "", false
	}
	var f struct {
		A *struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
		} `json:"assistantMessageEvent"`
	}
	if json.Unmarshal(e.Raw, &f) != nil || f.A == nil {
		return "", "", false
	}
	return f.A.Type, f.A.Delta, true
}

// Field decodes one top-level key of the frame into v and reports whether
// the key was present.
func (e Event) Field(key string, v any) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(e.Raw, &m) != nil {
		return false
	}
	raw, ok := m[key]
	if !ok {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

// Subscribe delivers every Event from now on to the returned channel, in
// the order the agent wrote them, until cancel is called or the client
// ends (the channel is then closed after the queued events have been
// received; Close discards what is still queued). These are the frames of
// the connection's own session and of the connection; the frames of a
// session by id go to its Session's subscribers.
//
// Policy: the reader never blocks on a subscriber and never drops an
// event. Each subscription has its own unbounded queue, fed by the reader
// and emptied into the channel (capacity buffer) by the subscription's own
// goroutine. A subscriber that stops reading without cancelling therefore
// costs memory, not other subscribers' events nor responses.
func (c *Client) Subscribe(buffer int) (<-chan Event, func()) {
	return c.subscribe(nil, buffer, false)
}

// subscribe registers a subscription to the events of sess (nil: the
// client's own). takeHeld: it is a Session's Subscribe, which takes the
// events held since the attach.
func (c *Client) subscribe(sess *Session, buffer int, takeHeld bool) (<-chan Event, func()) {
	if buffer < 0 {
		buffer = 0
	}
	s := &subscription{
		sess:   sess,
		out:    make(chan Event, buffer),
		notify: make(chan struct{}, 1),
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	s.drained = func() {
		c.mu.Lock()
		delete(c.subs, s)
		c.mu.Unlock()
	}
	c.mu.Lock()
	ended := c.ended
	if sess != nil {
		if takeHeld && sess.holding {
			s.queue, sess.held, sess.holding = sess.held, nil, false
		}
		ended = ended || sess.ended
	}
	if !ended {
		c.subs[s] = struct{}{}
	}
	c.mu.Unlock()
	go s.pump()
	if ended {
		s.finish()
	}
	cancel := func() {
		c.mu.Lock()
		delete(c.subs, s)
		c.mu.Unlock()
		s.halt()
	}
	return s.out, cancel
}

// publish appends ev to the queue of every subscriber of the client's own
// events; it never blocks.
func (c *Client) publish(ev Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publishLocked(nil, ev)
}

// publishLocked appends ev to the queue of every subscriber of sess (nil:
// the client's own). (c.mu)
func (c *Client) publishLocked(sess *Session, ev Event) {
	for s := range c.subs {
		if s.sess == sess {
			s.push(ev)
		}
	}
}

// finishLocked ends the subscriptions of sess: each closes once its queue
// is empty, and then leaves c.subs (until then Close halts one nobody
// drains). (c.mu)
func (c *Client) finishLocked(sess *Session) {
	for s := range c.subs {
		if s.sess == sess {
			s.finish()
		}
	}
}

// haltAll stops every subscription at once (Close).
func (c *Client) haltAll() {
	c.mu.Lock()
	subs := c.subs
	c.subs = map[*subscription]struct{}{}
	c.mu.Unlock()
	for s := range subs {
		s.halt()
	}
}

type subscription struct {
	sess *Session // whose events; nil for the client's own
	// drained unregisters it once its queue is empty after finish.
	drained func()
	out     chan Event
	notify  chan struct{} // capacity 1: "the queue changed"
	stop    chan struct{} // closed by halt
	exited  chan struct{} // closed when pump returns

	mu       sync.Mutex // guards queue and finished
	queue    []Event
	finished bool // no more events will be pushed
	stopOnce sync.Once
}

func (s *subscription) push(ev Event) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.poke()
}

func (s *subscription) poke() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// finish marks the end of the stream: pump closes out once the queue is
// empty.
func (s *subscription) finish() {
	s.mu.Lock()
	s.finished = true
	s.mu.Unlock()
	s.poke()
}

// halt stops the pump now and waits for it.
func (s *subscription) halt() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.exited
}

func (s *subscription) pump() {
	defer close(s.exited)
	defer close(s.out)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			finished := s.finished
			s.mu.Unlock()
			if finished {
				if s.drained != nil {
					s.drained()
				}
				return
			}
			select {
			case <-s.notify:
				continue
			case <-s.stop:
				return
			}
		}
		ev := s.queue[0]
		s.queue[0] = Event{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		select {
		case s.out <- ev:
		case <-s.stop:
			return
		}
	}
}

// Watch starts watching for the first Event for which match returns true;
// events are seen from this call on, so call it before the command that
// causes the event. match runs in Wait, on the caller's goroutine.
func (c *Client) Watch(match func(Event) bool) *Watch {
	ch, cancel := c.subscribe(nil, 16, false)
	return &Watch{ch: ch, cancel: cancel, match: match}
}

// Watch waits for an Event matching a condition (Client.Watch).
type Watch struct {
	ch     <-chan Event
	cancel func()
	match  func(Event) bool
}

// Wait returns the first matching event. It fails with ctx's error, or
// ErrClosed when the connection ends first. The watch ends either way.
func (w *Watch) Wait(ctx context.Context) (Event, error) {
	defer w.cancel()
	for {
		select {
		case ev, ok := <-w.ch:
			if !ok {
				return Event{}, ErrClosed
			}
			if w.match(ev) {
				return ev, nil
			}
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Stop ends the watch without waiting.
func (w *Watch) Stop() { w.cancel() }

// WaitFor waits for the first Event from now on for which match returns
// true (see Watch to start watching before sending a command).
func (c *Client) WaitFor(ctx context.Context, match func(Event) bool) (Event, error) {
	return c.Watch(match).Wait(ctx)
}

// IsType returns a match for WaitFor and Watch: an event of type typ.
func IsType(typ string) func(Event) bool {
	return func(e Event) bool { return e.Type == typ }
}
