package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// Attach (the agent server's ACP listeners, docs/server.md): a client may
// attach to a live session another ACP connection of the same process
// opened, as a controller (it prompts, cancels, sets options and answers
// permission requests) or an observer (it only receives), shaped like ACP
// RFD #533 under our extension prefix:
//
//	_xcsh/session/attach {sessionId, role?: "controller"|"observer", historyPolicy?: "full"|"none"}
//	_xcsh/session/detach {sessionId}
//
// With historyPolicy full (the default) the conversation so far is sent
// first, as session/load replays it, then the answer, then the live
// updates; nothing is missed or doubled, since all three are made on the
// session's executor. Every update of the session goes to its opener and
// to each attached client. A permission request goes to every controller:
// the first answer wins, the other controllers' requests are withdrawn
// ($/cancel_request), and every client is told _xcsh/session/permission_resolved.
// The opener's connection ending closes the session as before (after its
// turns); the attached clients are told _xcsh/session/closed.
//
// An attached client never slows the session: its frames go through a
// bounded queue its own goroutine writes; one that falls that far behind
// is detached with _xcsh/session/lagged and may attach again.

// Extension methods and notifications of attach.
const (
	methodAttach       = "_xcsh/session/attach"
	methodDetach       = "_xcsh/session/detach"
	notifyResolved     = "_xcsh/session/permission_resolved"
	notifyClosed       = "_xcsh/session/closed"
	notifyLagged       = "_xcsh/session/lagged"
	roleController     = "controller"
	roleObserver       = "observer"
	historyFull        = "full"
	historyNone        = "none"
	peerQueueFrames    = 8192
	peerBacklogAtQueue = peerQueueFrames / 4
)

// peer is a connection attached to a session it did not open. Its frames
// are closures run in order by its own goroutine (a frame to send, an
// answer, a request to put to it), so a peer that reads slowly holds up
// only itself.
type peer struct {
	srv  *Server
	ss   *session
	role string

	mu     sync.Mutex
	q      chan func()
	closed bool // guarded by mu: nothing more is queued
	lagged bool // guarded by mu: it fell behind (told once the queue drains)
	done   chan struct{}
}

func newPeer(srv *Server, ss *session, role string) *peer {
	p := &peer{srv: srv, ss: ss, role: role, q: make(chan func(), peerQueueFrames), done: make(chan struct{})}
	go p.run()
	return p
}

// run writes the peer's frames in order; after the last, a lagged peer is
// told so.
func (p *peer) run() {
	defer close(p.done)
	for fn := range p.q {
		fn()
	}
	p.mu.Lock()
	lagged := p.lagged
	p.mu.Unlock()
	if lagged {
		p.srv.c.notify(notifyLagged, sessionRef{p.ss.id})
	}
}

// do queues fn; false when the peer has gone, or has just fallen behind
// (then it is detached).
func (p *peer) do(fn func()) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	select {
	case p.q <- fn:
		p.mu.Unlock()
		return true
	default:
	}
	p.lagged = true
	p.closed = true
	close(p.q)
	p.mu.Unlock()
	go p.ss.dropPeer(p) // not on the caller's stack: it may hold the executor
	return false
}

// end stops the queue after what it holds.
func (p *peer) end() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.q)
	}
	p.mu.Unlock()
}

// backlogged: it holds a quarter of its queue (the session then merges
// deltas, as for a full stdout).
func (p *peer) backlogged() bool { return len(p.q) >= peerBacklogAtQueue }

// frame queues one encoded line, copied now (the caller's buffer is
// reused once it returns).
func (p *peer) frame(line []byte) {
	bp := p.srv.c.out.Buf()
	*bp = append((*bp)[:0], line...)
	p.do(func() { p.srv.c.out.Send(bp) })
}

// peersNow is a copy of the attached clients, for a fan-out.
func (ss *session) peersNow() []*peer {
	ss.pmu.Lock()
	defer ss.pmu.Unlock()
	if len(ss.peers) == 0 {
		return nil
	}
	return append([]*peer(nil), ss.peers...)
}

// peerOf is srv's attachment to ss (nil: none).
func (ss *session) peerOf(srv *Server) *peer {
	ss.pmu.Lock()
	defer ss.pmu.Unlock()
	for _, p := range ss.peers {
		if p.srv == srv {
			return p
		}
	}
	return nil
}

// dropPeer detaches p.
func (ss *session) dropPeer(p *peer) {
	ss.pmu.Lock()
	for i, o := range ss.peers {
		if o == p {
			ss.peers = append(ss.peers[:i], ss.peers[i+1:]...)
			break
		}
	}
	ss.pmu.Unlock()
	p.end()
	p.srv.mu.Lock()
	delete(p.srv.attached, ss)
	p.srv.mu.Unlock()
}

// reply answers a request of from: at once on the opener's connection,
// through the queue on an attached one (after the updates before it).
func (ss *session) reply(from *Server, req *jsonrpc.Request, result any, e *jsonrpc.Error) {
	respond := func() {
		if e != nil {
			from.c.Respond(req, nil, e)
		} else {
			from.c.Respond(req, result, nil)
		}
	}
	if from == ss.srv {
		respond()
		return
	}
	if p := ss.peerOf(from); p == nil || !p.do(respond) {
		respond() // it detached meanwhile: its answer still reaches it
	}
}

// attachParams are _xcsh/session/attach's.
type attachParams struct {
	SessionID     string `json:"sessionId"`
	Role          string `json:"role,omitempty"`
	HistoryPolicy string `json:"historyPolicy,omitempty"`
}

type attachResult struct {
	SessionID     string                    `json:"sessionId"`
	Role          string                    `json:"role"`
	ConfigOptions []sdk.SessionConfigOption `json:"configOptions,omitempty"`
	Modes         *sdk.SessionModeState     `json:"modes,omitempty"`
}

// attach is _xcsh/session/attach, on the reader: routed behind a session
// being created, then done on the session's executor.
func (s *Server) attach(req *jsonrpc.Request) {
	var p attachParams
	if err := json.Unmarshal(orEmptyObject(req.Params), &p); err != nil {
		s.c.fail(req, errInvalidParams(err.Error()))
		return
	}
	if p.Role == "" {
		p.Role = roleController
	}
	if p.HistoryPolicy == "" {
		p.HistoryPolicy = historyFull
	}
	switch {
	case p.SessionID == "":
		s.c.fail(req, errInvalidParams("sessionId is required"))
		return
	case p.Role != roleController && p.Role != roleObserver:
		s.c.fail(req, errInvalidParams(fmt.Sprintf("unknown role %q: controller or observer", p.Role)))
		return
	case p.HistoryPolicy != historyFull && p.HistoryPolicy != historyNone:
		s.c.fail(req, errInvalidParams(fmt.Sprintf("unknown historyPolicy %q: full or none", p.HistoryPolicy)))
		return
	}
	s.opts.Host.Route(p.SessionID, func(l *sessions.Live) {
		if l == nil {
			s.c.fail(req, errInvalidParams(fmt.Sprintf("session %s is not live: open it with session/load", p.SessionID)))
			return
		}
		ss, ok := l.Value().(*session)
		switch {
		case !ok:
			s.c.fail(req, errInvalidParams(fmt.Sprintf("session %s is not an ACP session: attach to it with the RPC protocol", p.SessionID)))
			return
		case ss.srv == s:
			s.c.fail(req, errInvalidParams(fmt.Sprintf("session %s is this connection's own", p.SessionID)))
			return
		}
		if !ss.live.Enqueue(func() { ss.join(s, req, p) }) {
			s.c.fail(req, errSessionNotFound(p.SessionID))
		}
	})
}

// join attaches s to ss, replaying the conversation first if asked. (actor)
func (ss *session) join(s *Server, req *jsonrpc.Request, p attachParams) {
	old := ss.peerOf(s)
	if old != nil {
		ss.dropPeer(old)
	}
	np := newPeer(s, ss, p.Role)
	ss.pmu.Lock()
	ss.peers = append(ss.peers, np)
	ss.pmu.Unlock()
	s.mu.Lock()
	s.attached[ss] = np
	s.mu.Unlock()
	if p.HistoryPolicy == historyFull {
		ss.only = np
		ss.replay()
		ss.only = nil
	}
	res := attachResult{SessionID: ss.id, Role: p.Role, ConfigOptions: ss.configOptions(), Modes: ss.modes()}
	ss.reply(s, req, res, nil)
	// The slash commands, as its opener got them once the resources were
	// read (they are: the input pump waits for them).
	ss.only = np
	ss.sendCommands()
	ss.only = nil
}

// detach is _xcsh/session/detach.
func (s *Server) detach(req *jsonrpc.Request) {
	var p sessionRef
	if err := json.Unmarshal(orEmptyObject(req.Params), &p); err != nil {
		s.c.fail(req, errInvalidParams(err.Error()))
		return
	}
	l := s.opts.Host.Get(p.SessionID)
	var ss *session
	if l != nil {
		ss, _ = l.Value().(*session)
	}
	var np *peer
	if ss != nil {
		np = ss.peerOf(s)
	}
	if np == nil {
		s.c.fail(req, errInvalidParams(fmt.Sprintf("not attached to session %s", p.SessionID)))
		return
	}
	ss.dropPeer(np)
	<-np.done // what it was sent comes first
	s.c.respond(req, struct{}{})
}

// detachAll ends this connection's attachments (it has gone).
func (s *Server) detachAll() {
	s.mu.Lock()
	var ps []*peer
	for _, p := range s.attached {
		ps = append(ps, p)
	}
	s.mu.Unlock()
	for _, p := range ps {
		p.ss.dropPeer(p)
	}
}

// closePeers tells every attached client the session has ended, after
// what it was sent, and detaches them.
func (ss *session) closePeers() {
	for _, p := range ss.peersNow() {
		p.do(func() {
			p.srv.c.notify(notifyClosed, sessionRef{ss.id})
		})
		ss.dropPeer(p)
	}
}

// controllerOf reports whether from may drive ss: its opener, or a client
// attached as a controller.
func (ss *session) controllerOf(from *Server) (ok, attached bool) {
	if from == ss.srv {
		return true, false
	}
	p := ss.peerOf(from)
	if p == nil {
		return false, false
	}
	return p.role == roleController, true
}

func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// controllerPeers are the attached controllers.
func (ss *session) controllerPeers() []*peer {
	var out []*peer
	for _, p := range ss.peersNow() {
		if p.role == roleController {
			out = append(out, p)
		}
	}
	return out
}

// askResult is one controller's answer to a dialog.
type askResult[R any] struct {
	r   *R
	cl  *jsonrpc.Call
	err error
}

// askedCall is a request put to one controller.
type askedCall struct {
	srv *Server
	cl  *jsonrpc.Call
}

// askAll puts dialog d to the opener and every attached controller (each
// in its own order): the first answer wins, the other requests are
// withdrawn ($/cancel_request) and every client is told it was resolved.
// A controller that fails the request or has gone leaves it to the
// others; when all have, the dialog is cancelled. (actor)
func askAll[R any](ss *session, ps []*peer, d *dialog, method string, params any, convert func(*R) engine.DialogReply) {
	ctx, stop := context.WithCancel(d.ctx)
	var mu sync.Mutex
	var asked []askedCall // guarded by mu
	decided := false      // guarded by mu
	results := make(chan askResult[R], 1+len(ps))
	put := func(srv *Server) {
		mu.Lock()
		if decided {
			mu.Unlock()
			results <- askResult[R]{err: context.Canceled}
			return
		}
		cl, err := srv.c.Call(method, params)
		if err == nil {
			asked = append(asked, askedCall{srv, cl})
		}
		mu.Unlock()
		if err != nil {
			results <- askResult[R]{err: err}
			return
		}
		go func() {
			var r R
			err := await(ctx, cl, &r)
			results <- askResult[R]{r: &r, cl: cl, err: err}
		}()
	}
	put(ss.srv)
	n := 1
	for _, p := range ps {
		if p.do(func() { put(p.srv) }) {
			n++
		}
	}
	callID := ""
	if pr, ok := params.(permissionRequest); ok {
		callID = pr.ToolCall.ToolCallID
	}
	ss.wg.Add(1)
	go func() {
		defer ss.wg.Done()
		var win *askResult[R]
		for i := 0; i < n; i++ {
			res := <-results
			if res.err == nil {
				win = &res
				break
			}
			if d.ctx.Err() != nil {
				break
			}
		}
		mu.Lock()
		decided = true
		losers := asked
		mu.Unlock()
		stop()
		for _, a := range losers {
			if win != nil && a.cl == win.cl {
				continue
			}
			ss.withdrawFrom(a.srv, a.cl.ID())
		}
		if win == nil {
			d.reply <- engine.DialogReply{Cancelled: true}
			return
		}
		ss.resolvedToAll(callID)
		d.reply <- convert(win.r)
	}()
}

// withdrawFrom tells srv its request id is no longer wanted, after what
// it was sent.
func (ss *session) withdrawFrom(srv *Server, id int64) {
	if srv == ss.srv {
		srv.c.cancelRequest(id)
		return
	}
	if p := ss.peerOf(srv); p != nil {
		p.do(func() { srv.c.cancelRequest(id) })
	}
}

type resolvedParams struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// resolvedToAll tells every client of the session that a question was
// answered.
func (ss *session) resolvedToAll(callID string) {
	n := resolvedParams{SessionID: ss.id, ToolCallID: callID}
	ss.srv.c.notify(notifyResolved, n)
	line := notificationLine(notifyResolved, n)
	for _, p := range ss.peersNow() {
		p.frame(line)
	}
}

// driven is the session of l this connection may drive: one it opened or
// is attached to as a controller; an observer's attachment is refused with
// its error.
func (s *Server) driven(l *sessions.Live) (*session, *jsonrpc.Error) {
	if ss := s.sessionOf(l); ss != nil {
		return ss, nil
	}
	if l == nil {
		return nil, nil
	}
	ss, ok := l.Value().(*session)
	if !ok {
		return nil, nil
	}
	switch ctl, attached := ss.controllerOf(s); {
	case ctl:
		return ss, nil
	case attached:
		return nil, errInvalidRequest(fmt.Sprintf("session %s: an observer only receives (attach as a controller to drive it)", ss.id))
	}
	return nil, nil
}

// echoPrompt shows a prompt's text to the session's other clients (its
// sender wrote it): with several clients, each sees what the others ask.
// Alone, nothing is sent, as ACP has it. (actor)
func (ss *session) echoPrompt(from *Server, blocks []sdk.ContentBlock) {
	ps := ss.peersNow()
	if len(ps) == 0 {
		return
	}
	id := ss.newMessageID()
	for _, b := range blocks {
		if b.Text == nil {
			continue
		}
		n := notification{SessionID: ss.id, Update: chunkUpdate{SessionUpdate: updateUserMessage,
			Content: textBlock{Type: "text", Text: b.Text.Text}, MessageID: id}}
		line := notificationLine(sdk.ClientMethodSessionUpdate, n)
		if from != ss.srv {
			ss.srv.c.notify(sdk.ClientMethodSessionUpdate, n)
		}
		for _, p := range ps {
			if p.srv != from {
				p.frame(line)
			}
		}
	}
}

// liveMeta is session/list's word on a live session (_meta.xcsh): open in
// this process, and who drives and watches it (an ACP session's opener
// and attached clients).
func (s *Server) liveMeta(id string) LiveMeta {
	m := LiveMeta{Live: true}
	if l := s.opts.Host.Get(id); l != nil {
		if ss, ok := l.Value().(*session); ok {
			ctl, obs := 1, 0
			for _, p := range ss.peersNow() {
				if p.role == roleController {
					ctl++
				} else {
					obs++
				}
			}
			m.Controllers, m.Observers = &ctl, &obs
		}
	}
	return m
}
