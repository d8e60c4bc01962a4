// Package serve is the agent server (`xcsh serve`): one process that
// serves many sessions (the session host's, engine/sessions) to many
// clients, over stdio, a Unix socket or WebSocket. docs/server.md is its
// description for users and hosts.
//
// # Model
//
// A client speaks the RPC protocol of --mode rpc. A command without a
// sessionId goes to the client's own session, opened on its first such
// command, and the frames of that session are exactly --mode rpc's: a
// host that knows nothing of the server works unchanged. A command with
// a sessionId goes to that session, which the client opened
// (open_session) or attached to (attach); every frame of such a session
// carries its sessionId, and every event its seq.
//
// Each served session has a hub (hub.go): the engine session's Sink,
// which numbers the events, keeps them in a bounded log and hands them to
// the connections' writers, each reading from its own cursor; and a
// protocol core (rpc.Server, NewSession) that handles the commands of
// every client in arrival order and is the session's HostLink (a dialog
// or host tool call goes to every client; the first answer wins, the
// others are told, a late answer is refused). Attaching replays the log
// after a cursor; a cursor older than the log is said to be so, with the
// session's messages. A client never slows a session or another client:
// one that falls behind the log is dropped with a lagged notice and
// attaches again from its cursor.
//
// A remote session (remote.go: a durable session on Temporal, when
// Options.Remote is set) has a hub too, with the same log, subscribers
// and cursors, but no engine session and no protocol core: its events
// come numbered by the session itself (so a cursor is good on any server
// of it), and a relay goroutine sends the clients' commands to it in
// arrival order. The port (RemoteSessions, RemoteSession) is defined here
// with basic types; engine/durable implements it and cmd/xcsh wires it,
// so this package never links the Temporal SDK.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/rpc"
)

// Options configure a Server.
type Options struct {
	// Host builds, opens and lists the sessions.
	Host *sessions.Manager
	// Version is the ready frame's.
	Version string
	// SchemaHash is the ready frame's: the rpc protocol's (rpc/schema's
	// SchemaHash), as --mode rpc writes it, so that a client of
	// serve --stdio sees the same bytes (the server's additions share the
	// protocol's Version).
	SchemaHash string
	// Cwd is the working directory of a session opened without one.
	Cwd string
	// HostUI: clients answer the engine's questions (--ui): the ask tool
	// exists in the sessions.
	HostUI bool
	// Log hears the server's own diagnostics (stderr).
	Log io.Writer
	// MaxLineBytes caps an input line (0: rpc.DefaultMaxLineBytes).
	MaxLineBytes int
	// Updates is the default message_update mode of a client's own
	// session (rpc.UpdatesFull or rpc.UpdatesDelta).
	Updates string
	// Keep bounds each session's log of frames (0s: the defaults).
	Keep Limits
	// EvictAfter is how long a session with no client stays in memory once
	// idle; 0 keeps it until it is closed. Sessions in memory only
	// (--no-session) are never evicted.
	EvictAfter time.Duration
	// ShutdownGrace bounds how long Shutdown waits for aborted runs.
	ShutdownGrace time.Duration
	// Epoch names this run of the server in attach answers (a cursor of
	// another run is too old); "" makes one up.
	Epoch string
	// Now is the clock of eviction (nil: the system clock).
	Now func() time.Time
	// Remote, if set, opens durable sessions (serve --temporal):
	// open_session {"durable":true}, and attach to one this server does
	// not serve yet.
	Remote RemoteSessions
}

// Limits bound a session's log.
type Limits struct {
	Entries int // frames kept (default 20,000)
	Bytes   int // their bytes (default 32 MiB)
}

// Server is the agent server.
type Server struct {
	opts  Options
	epoch string

	mu      sync.Mutex
	hubs    map[string]*hub     // served sessions, by id
	lastSeq map[string]uint64   // the last seq of sessions evicted or closed
	clients map[*client]bool    // connected clients
	opening map[string]chan any // sessions being opened by id (one open at a time)
	closing bool
	nextID  int // clients' numbers

	stopEvict chan struct{}
	evictDone chan struct{}
}

// New returns a server.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Keep.Entries <= 0 {
		opts.Keep.Entries = 20000
	}
	if opts.Keep.Bytes <= 0 {
		opts.Keep.Bytes = 32 << 20
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Epoch == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		opts.Epoch = hex.EncodeToString(b[:])
	}
	s := &Server{opts: opts, epoch: opts.Epoch, hubs: map[string]*hub{}, lastSeq: map[string]uint64{},
		clients: map[*client]bool{}, opening: map[string]chan any{}, stopEvict: make(chan struct{}), evictDone: make(chan struct{})}
	if opts.EvictAfter > 0 {
		go s.evictLoop()
	} else {
		close(s.evictDone)
	}
	return s
}

func (s *Server) now() int64 { return s.opts.Now().UnixMilli() }

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, "xcsh: serve: "+format+"\n", args...)
}

// errClosing refuses work once the server shuts down.
var errClosing = errors.New("the server is shutting down")

// serve returns the served session id, opening it when it is not open: a
// stored session (continued from its file), or a new one when req names
// none.
func (s *Server) serve(req sessions.Request) (*hub, error) {
	// One open of a stored session at a time: the second waits and finds
	// it served.
	for req.ID != "" {
		if h := s.hub(req.ID); h != nil {
			return h, nil
		}
		s.mu.Lock()
		if wait, busy := s.opening[req.ID]; busy {
			s.mu.Unlock()
			<-wait
			continue
		}
		done := make(chan any)
		s.opening[req.ID] = done
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.opening, req.ID)
			s.mu.Unlock()
			close(done)
		}()
		break
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, errClosing
	}
	seq := s.lastSeq[req.ID]
	s.mu.Unlock()
	h := newHub(s, seq)
	core := rpc.NewSession(h, rpc.Options{Version: s.opts.Version, MaxLineBytes: s.opts.MaxLineBytes, Log: s.opts.Log,
		Resolved: h.resolved})
	live, err := s.opts.Host.Open(req, sessions.Front{Sink: h, Host: core, Value: h})
	if err != nil {
		return nil, err
	}
	if other, ok := live.Value().(*hub); !ok || other != h {
		if ok {
			return other, nil
		}
		return nil, fmt.Errorf("session %s is open in another protocol's front", live.ID())
	}
	h.id, h.live, h.core = live.ID(), live, core
	h.idleSince = s.now()
	core.Attach(live.Engine())
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		live.Close(true)
		return nil, errClosing
	}
	s.hubs[h.id] = h
	s.mu.Unlock()
	live.Start()
	core.Serve()
	live.Begin()
	return h, nil
}

// hub returns the served session id (nil: not open).
func (s *Server) hub(id string) *hub {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hubs[id]
}

// close ends a served session: its runs are aborted (abort) or finish,
// its subscribers are told, its record is saved and closed.
func (s *Server) close(h *hub, abort bool) {
	s.mu.Lock()
	if s.hubs[h.id] != h {
		s.mu.Unlock()
		return
	}
	delete(s.hubs, h.id)
	s.mu.Unlock()
	if h.remote != nil {
		// A durable session outlives the server: its run is aborted by
		// close_session only, never by a shutdown.
		if abort && !s.isClosing() {
			ctx, cancel := context.WithTimeout(h.remote.ctx, remoteTimeout)
			h.remote.rs.Do(ctx, []byte("{\"type\":\"abort\"}"), func([]byte) {}) // a command to the session, not a frame of ours
			cancel()
		}
		h.remote.stop()
	} else {
		h.core.Stop()
		h.live.Close(abort) // its last events are in the log now
	}
	h.mu.Lock()
	h.closed, h.closeReason = true, "closed"
	if s.isClosing() {
		h.closeReason = "shutdown"
	}
	seq := h.seq
	subs := append([]*sub(nil), h.subs...)
	if len(subs) == 0 {
		close(h.drained)
	}
	h.mu.Unlock()
	s.mu.Lock()
	s.lastSeq[h.id] = seq
	s.mu.Unlock()
	// Each subscriber gets the rest of the log, then session_closed, and
	// leaves (take); a client that does not read in time is cut.
	for _, sb := range subs {
		sb.c.kick()
	}
	select {
	case <-h.drained:
	case <-time.After(closeFlush):
		h.mu.Lock()
		for _, sb := range h.subs {
			sb.detachLocked()
		}
		h.mu.Unlock()
	}
	for _, sb := range subs {
		sb.c.forget(h)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// closeFlush bounds how long a closing session waits for its clients to
// read its last frames.
const closeFlush = 2 * time.Second

// Shutdown ends the server: no new client or session; every run is
// aborted and every session saved and closed (within the grace); every
// client's frames are flushed and its connection closed.
func (s *Server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	hubs := make([]*hub, 0, len(s.hubs))
	for _, h := range s.hubs {
		hubs = append(hubs, h)
	}
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	close(s.stopEvict)
	<-s.evictDone
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, h := range hubs {
			wg.Add(1)
			go func() { defer wg.Done(); s.close(h, true) }()
		}
		wg.Wait()
		close(done)
	}()
	grace, cancel := context.WithTimeout(ctx, s.opts.ShutdownGrace)
	defer cancel()
	select {
	case <-done:
	case <-grace.Done():
		s.logf("the sessions did not stop in time")
	}
	// Every client's frames are written, within the grace: a client that
	// does not read is cut off then (its connection closed; stdout, which
	// cannot be, is left to the exit).
	flushed := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); c.shutdown() }()
		}
		wg.Wait()
		close(flushed)
	}()
	select {
	case <-flushed:
	case <-grace.Done():
		s.logf("a client did not read its last frames in time; its connection is closed")
		for _, c := range clients {
			c.disconnect()
		}
	}
}

// evictLoop closes the sessions that no client has watched for
// EvictAfter and that are idle; attach opens them again from their file.
func (s *Server) evictLoop() {
	defer close(s.evictDone)
	tick := time.NewTicker(max(s.opts.EvictAfter/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.stopEvict:
			return
		case <-tick.C:
		}
		for _, h := range s.evictable() {
			s.close(h, false)
		}
	}
}

// evictable are the sessions eviction may close now.
func (s *Server) evictable() []*hub {
	s.mu.Lock()
	hubs := make([]*hub, 0, len(s.hubs))
	for _, h := range s.hubs {
		hubs = append(hubs, h)
	}
	s.mu.Unlock()
	limit := s.now() - s.opts.EvictAfter.Milliseconds()
	var out []*hub
	for _, h := range hubs {
		h.mu.Lock()
		quiet := len(h.subs) == 0 && h.idleSince != 0 && h.idleSince <= limit
		h.mu.Unlock()
		if !quiet {
			continue
		}
		if h.remote != nil {
			out = append(out, h) // it lives on elsewhere
			continue
		}
		var idle, stored bool
		eng := h.live.Engine()
		eng.Call(func() {
			idle = eng.Phase() == engine.PhaseIdle && !eng.IsStreaming()
			_, file, _ := eng.Identity()
			stored = file != ""
		})
		if idle && stored {
			out = append(out, h)
		}
	}
	return out
}
