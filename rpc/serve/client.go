package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/lineio"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/rpc"
)

// client is one connection. Its reader routes each line to a session's
// protocol core or to the server's own commands, and never waits for a
// session; its writer sends the frames of every session it watches, each
// from its own cursor in the session's log, and the server's direct
// answers.
type client struct {
	srv  *Server
	name string // "client 3", for get_sessions
	w    io.Writer
	// closeConn ends the connection (the reader sees its end).
	closeConn func()
	// lean: its own session's message_update frames carry no snapshots
	// (--rpc-updates delta).
	lean bool
	// stream: frames may be joined into one Write (a byte stream: stdio,
	// a Unix socket); a WebSocket sends each frame as its own message.
	stream bool
	joined []byte // the writer's buffer for a stream's joined frames

	wake chan struct{} // cap 1: something to write
	done chan struct{} // closed when the writer has returned

	mu     sync.Mutex
	direct []directItem    // frames in no session's order, in the order made (guarded by mu)
	subs   map[string]*sub // its attachments, by session id (guarded by mu)
	mine   *hub            // its own session, once opened (guarded by mu)
	gone   bool            // the connection is closed (guarded by mu)
	// flushing: write what is queued, then close (guarded by mu).
	flushing bool
}

func (s *Server) newClient(w io.Writer, closeConn func(), lean, stream bool) (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, errClosing
	}
	s.nextID++
	c := &client{srv: s, name: "client " + strconv.Itoa(s.nextID), w: w, closeConn: closeConn, lean: lean, stream: stream,
		wake: make(chan struct{}, 1), done: make(chan struct{}), subs: map[string]*sub{}}
	s.clients[c] = true
	return c, nil
}

// kick wakes the writer.
func (c *client) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// directItem is a frame in no session's order; activate, if set, is the
// attachment whose frames may follow once it is written (its answer).
type directItem struct {
	frame    []byte
	activate *sub
}

// sendDirect queues a frame outside any session's order.
func (c *client) sendDirect(frame []byte) { c.queueDirect(directItem{frame: frame}) }

func (c *client) queueDirect(it directItem) {
	c.mu.Lock()
	if !c.gone {
		c.direct = append(c.direct, it)
	}
	c.mu.Unlock()
	c.kick()
}

// writeLoop writes until the connection fails or the client is shut down
// (then what is queued is written first).
func (c *client) writeLoop() {
	defer close(c.done)
	var batch [][]byte
	var direct []directItem
	for {
		c.mu.Lock()
		direct = append(direct[:0], c.direct...)
		c.direct = c.direct[:0]
		flushing, gone := c.flushing, c.gone
		c.mu.Unlock()
		if gone {
			return
		}
		batch = batch[:0]
		for _, it := range direct {
			batch = append(batch, it.frame)
			if it.activate != nil {
				it.activate.activate()
			}
		}
		c.mu.Lock()
		subs := make([]*sub, 0, len(c.subs))
		for _, sb := range c.subs {
			subs = append(subs, sb)
		}
		c.mu.Unlock()
		for _, sb := range subs {
			var gone bool
			batch, gone = sb.take(batch)
			if gone {
				c.forget(sb.h)
			}
		}
		if len(batch) > 0 {
			if err := c.write(batch); err != nil {
				c.disconnect()
				return
			}
			continue // more may be waiting: look again before sleeping
		}
		if flushing {
			c.disconnect()
			return
		}
		<-c.wake
	}
}

// maxJoin bounds one Write of joined frames on a stream.
const maxJoin = 256 << 10

// write writes frames: on a stream as few Writes as the frames fit in (a
// 10,000-event replay is tens of writes, not 10,000 system calls), else
// each in one Write (a WebSocket message each).
func (c *client) write(frames [][]byte) error {
	if c.stream {
		buf := c.joined[:0]
		for i, f := range frames {
			buf = append(buf, f...)
			if len(buf) >= maxJoin || i == len(frames)-1 {
				if _, err := c.w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		if cap(buf) <= maxJoin*2 {
			c.joined = buf
		}
		return nil
	}
	for _, f := range frames {
		if _, err := c.w.Write(f); err != nil {
			return err
		}
	}
	return nil
}

// forget drops the attachment to h (it lagged, or h closed).
func (c *client) forget(h *hub) {
	c.mu.Lock()
	if sb := c.subs[h.id]; sb != nil && sb.h == h {
		delete(c.subs, h.id)
	}
	if c.mine == h {
		c.mine = nil
	}
	c.mu.Unlock()
}

// disconnect ends the client: its attachments go (the sessions keep
// running, and wait on their dialogs as long as their timeouts say), the
// connection closes.
func (c *client) disconnect() {
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return
	}
	c.gone = true
	subs := make([]*sub, 0, len(c.subs))
	for _, sb := range c.subs {
		subs = append(subs, sb)
	}
	c.subs = map[string]*sub{}
	c.mu.Unlock()
	for _, sb := range subs {
		sb.h.detach(sb)
	}
	c.kick()
	c.closeConn()
	c.srv.mu.Lock()
	delete(c.srv.clients, c)
	c.srv.mu.Unlock()
}

// shutdown writes what is queued for the client, then closes it.
func (c *client) shutdown() {
	c.mu.Lock()
	c.flushing = true
	c.mu.Unlock()
	c.kick()
	<-c.done
}

// readLoop reads the client's lines until its input ends or it asks to
// drain (then it reports true).
func (c *client) readLoop(r io.Reader) (drain bool) {
	lr := lineio.NewReader(r, c.srv.opts.MaxLineBytes)
	lr.SkipBOM = true // as --mode rpc's stdin
	for {
		line, err := lr.Next()
		if err == io.EOF {
			return false
		}
		if err == lineio.ErrLineTooLong {
			c.answerBroken("line exceeds the " + strconv.Itoa(lr.Max()) + "-byte limit")
			continue
		}
		if err != nil {
			return false
		}
		if c.handle(bytes.Clone(line)) {
			return true
		}
	}
}

// answerBroken answers a line that is not a command: in the order of the
// client's own session when it has one (as --mode rpc does), else at once.
func (c *client) answerBroken(msg string) {
	c.mu.Lock()
	h := c.mine
	c.mu.Unlock()
	frame := rpc.ParseErrorFrame(msg)
	if h != nil {
		h.Send(&frame, c)
		return
	}
	c.sendDirect(frame)
}

// handle routes one line; true when it asks to drain.
func (c *client) handle(line []byte) bool {
	if msg := rpc.CheckLine(line); msg != "" {
		c.mu.Lock()
		h := c.mine
		c.mu.Unlock()
		if h != nil {
			h.core.Dispatch(line, c) // the core answers it in order
			return false
		}
		c.sendDirect(rpc.ParseErrorFrame(msg))
		return false
	}
	cmd := commandOf(line)
	if cmd.typ == "drain" && cmd.sessionRaw == nil {
		return true
	}
	if run := serverCommands[cmd.typ]; run != nil {
		run(c, cmd)
		return false
	}
	if cmd.sessionRaw != nil {
		c.toSession(cmd)
		return false
	}
	h, err := c.ownSession()
	if err != nil {
		c.fail(cmd, err)
		return false
	}
	h.core.Dispatch(line, c)
	return false
}

// toSession hands a command to the session it names, which the client must
// be attached to; an observer only reads.
func (c *client) toSession(cmd *command) {
	if cmd.sessionID == "" {
		c.fail(cmd, errors.New("sessionId must be a non-empty string"))
		return
	}
	c.mu.Lock()
	sb := c.subs[cmd.sessionID]
	c.mu.Unlock()
	switch {
	case sb == nil:
		c.fail(cmd, &notAttachedError{cmd.sessionID})
	case sb.role == observer && !readOnly[cmd.typ]:
		c.fail(cmd, &observerError{cmd.sessionID, cmd.typ})
	case keepsRecord[cmd.typ]:
		c.fail(cmd, &recordError{cmd.typ})
	default:
		sb.h.dispatch(cmd.line, c)
	}
}

// ownSession is the client's own session, opened on its first command
// without a sessionId: the frames of it are --mode rpc's.
func (c *client) ownSession() (*hub, error) {
	c.mu.Lock()
	h := c.mine
	c.mu.Unlock()
	if h != nil {
		return h, nil
	}
	h, err := c.srv.serve(sessions.Request{Cwd: c.srv.opts.Cwd, HostUI: c.srv.opts.HostUI})
	if err != nil {
		return nil, err
	}
	// Its own session waits for it rather than drop it from the log: a
	// host of --mode rpc's protocol has no lagged or attach, and its
	// stdout backpressure is --mode rpc's, whatever the transport.
	sb := &sub{c: c, role: controller, bare: true, lean: c.lean, blocking: true}
	if err := h.attach(sb, nil, nil); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		h.detach(sb)
		return nil, errGone
	}
	c.mine = h
	c.subs[h.id] = sb
	c.mu.Unlock()
	return h, nil
}

// errGone is the failure of work for a client that has gone.
var errGone = errors.New("the client has gone")

// command is a line as the server reads it.
type command struct {
	line       []byte
	id         []byte // raw, nil when absent
	typ        string
	typeRaw    []byte
	sessionRaw []byte
	sessionID  string
}

func commandOf(line []byte) *command {
	c := &command{line: line, id: rpc.Field(line, "id"), typeRaw: rpc.Field(line, "type"), sessionRaw: rpc.Field(line, "sessionId")}
	var t string
	if json.Unmarshal(c.typeRaw, &t) == nil {
		c.typ = t
	}
	if c.sessionRaw != nil {
		var id string
		if json.Unmarshal(c.sessionRaw, &id) == nil {
			c.sessionID = id
		}
	}
	return c
}

// answer encodes a response to cmd, as the protocol core does.
func answer(cmd *command, sessionID string, data []byte, err error) []byte {
	b := []byte{'{'}
	if cmd.id != nil {
		b = append(append(append(b, `"id":`...), compact(cmd.id)...), ',')
	}
	b = append(b, `"type":"response"`...)
	if cmd.typeRaw != nil {
		b = append(append(b, `,"command":`...), compact(cmd.typeRaw)...)
	}
	if err != nil {
		b = append(b, `,"success":false,"error":`...)
		b = engine.AppendJSONString(b, errorText(err))
	} else {
		b = append(b, `,"success":true`...)
		if data != nil {
			b = append(append(b, `,"data":`...), data...)
		}
	}
	if sessionID != "" {
		b = append(b, `,"sessionId":`...)
		b = engine.AppendJSONString(b, sessionID)
	}
	return append(b, '}', '\n')
}

// compact is a raw JSON value without insignificant spaces.
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// fail answers cmd's failure at once.
func (c *client) fail(cmd *command, err error) {
	c.sendDirect(answer(cmd, cmd.sessionID, nil, err))
}
