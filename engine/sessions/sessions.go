// Package sessions is the session host: the layer above one
// engine.Session that every front shares. It keeps the live sessions of a
// process by id, builds them through one Builder (which cmd/xcsh
// implements once: tools, extensions, MCP servers, the record to
// continue), opens, lists and closes them, feeds each one its front's
// requests in arrival order, and answers prompts one at a time with
// their result (engine.TurnResult), so no front rebuilds any of it.
//
// The RPC front uses it with one session (it keeps its own inbox and the
// pi protocol's holds, and runs the executor itself: its shutdown drains
// piped input first), print and json modes with one, ACP with many.
package sessions

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// ErrUnknown reports that a Request names a stored session there is none
// of.
var ErrUnknown = errors.New("no such session")

// ErrClosing refuses a session opened while the host shuts down.
var ErrClosing = errors.New("the agent is shutting down")

// Builder assembles sessions. cmd/xcsh implements it once for every front.
type Builder interface {
	// Build assembles the parts of the session req asks for: a new one, or
	// the stored one it names (ErrUnknown when there is none).
	Build(req Request) (*Parts, error)
	// Stored describes the stored sessions of cwd ("" for every
	// directory), newest first.
	Stored(cwd string) ([]Info, error)
}

// Request is what a front asks a session to be.
type Request struct {
	// Cwd is the session's working directory (absolute).
	Cwd string
	// ID names a stored session to continue, by its exact id; Path names
	// its file. Neither: a new session.
	ID, Path string
	// MCPServers are the client's own, beside those of the configuration.
	MCPServers []MCPServer
	// HostUI says the front puts the engine's questions to its user (the
	// ask tool exists).
	HostUI bool
	// Save writes a new session's file at once rather than at its first
	// answer: the front's client may resume a session it never prompted
	// (ACP's session/resume after a restart).
	Save bool
	// Delegate is what the front offers the session's tools, for the
	// Builder (ACP: the editor's files and terminals); nil: nothing.
	Delegate any
}

// MCPServer is an MCP server a client brings to its session.
type MCPServer struct {
	Name, Transport, Command string
	Args                     []string
	Env                      map[string]string
	URL                      string
	Headers                  map[string]string
}

// Parts are an assembled session, from the Builder.
type Parts struct {
	// Config is the engine session's; the front's Sink and HostLink are
	// set by the host.
	Config engine.Config
	// Resume is the record to continue; nil for a new session.
	// KeepModel and KeepThinking: the command line chose them, so the
	// record's own are not restored.
	Resume                  *engine.LoadedSession
	KeepModel, KeepThinking bool
	// Sandbox is get_state.sandbox (nil: off).
	Sandbox *engine.SandboxState
	// Tap, if set, wraps the front's Sink (the extensions watch the events
	// on their way to the front).
	Tap func(engine.Sink) engine.Sink
	// Start, if set, runs once the engine session exists, before it runs
	// anything: the extensions are attached, the MCP servers start (in the
	// background, once the session is ready).
	Start func(*engine.Session)
	// Begin, if set, tells the extensions the session started; the front
	// calls Live.Begin once it has announced itself.
	Begin func()
	// Close, if set, stops what Start started, once the session is closed.
	Close func()
}

// Info describes a session for a listing.
type Info struct {
	ID, Cwd, Title string
	Updated        time.Time
	// Live: the session is open in this process.
	Live bool
}

// Front is what a front gives each session it opens.
type Front struct {
	// Sink receives the session's events; Host answers its questions (nil:
	// nothing can be asked).
	Sink engine.Sink
	Host engine.HostLink
	// Tools, if set, wraps the session's tools (ACP records the files a
	// call changed).
	Tools func([]engine.Tool) []engine.Tool
	// Value is the front's own state of the session (Live.Value).
	Value any
	// Closed, if set, is called once the engine session has stopped, before
	// its extensions and MCP servers do: the front waits for its own
	// goroutines of the session there.
	Closed func()
}

// Options configure a Manager.
type Options struct {
	Builder Builder
	// Log hears what goes wrong on the way (a record that cannot be
	// continued); nil discards.
	Log io.Writer
}

// Manager is the session host: the live sessions of a process by id.
type Manager struct {
	opts Options

	mu   sync.Mutex
	live map[string]*Live // guarded by mu
	// ending are the sessions being closed (no longer live), for AbortAll;
	// guarded by mu.
	ending  map[*Live]bool
	closing bool // guarded by mu: no new sessions
	router       // requests for sessions being created (route.go)
}

// New returns a host that builds its sessions with opts.Builder.
func New(opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Manager{opts: opts, live: map[string]*Live{}, ending: map[*Live]bool{}}
}

// Open builds the session req asks for with f as its front, continues its
// record if it has one, and registers it. The session does not run until
// Start (the front's first frame may have to come first). When the
// session req names is live already (two loads at once) that one is
// returned and the one just built is discarded; Value tells the two
// apart.
func (m *Manager) Open(req Request, f Front) (*Live, error) {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return nil, ErrClosing
	}
	if l := m.Get(req.ID); req.ID != "" && l != nil {
		return l, nil
	}
	p, err := m.opts.Builder.Build(req)
	if err != nil {
		return nil, err
	}
	l := newLive(m, p, f, req.Cwd)
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		l.release()
		return nil, ErrClosing
	}
	if old := m.live[l.id]; old != nil {
		m.mu.Unlock()
		l.release()
		return old, nil
	}
	m.live[l.id] = l
	m.mu.Unlock()
	return l, nil
}

// Get returns the live session id (nil: none).
func (m *Manager) Get(id string) *Live {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[id]
}

// Live returns the live sessions, by id.
func (m *Manager) Live() []*Live {
	m.mu.Lock()
	out := make([]*Live, 0, len(m.live))
	for _, l := range m.live {
		out = append(out, l)
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// List describes the sessions of cwd ("" for every directory): the live
// ones first (a new one has no file until its first answer), by id, then
// the stored ones that are not live, newest first.
func (m *Manager) List(cwd string) ([]Info, error) {
	stored, err := m.opts.Builder.Stored(cwd)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var all []Info
	for _, l := range m.Live() {
		if cwd != "" && l.cwd != cwd {
			continue
		}
		info := l.Info()
		seen[info.ID] = true
		all = append(all, info)
	}
	for _, info := range stored {
		if !seen[info.ID] {
			seen[info.ID] = true
			all = append(all, info)
		}
	}
	return all, nil
}

// CloseAll closes every live session, at once: after their work (abort
// false: the client's input ended) or cancelling it. No session opens
// afterwards.
func (m *Manager) CloseAll(abort bool) {
	m.mu.Lock()
	m.closing = true
	all := make([]*Live, 0, len(m.live))
	for _, l := range m.live {
		all = append(all, l)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Close(abort)
		}()
	}
	wg.Wait()
}

// forget removes a session being closed from the live ones.
func (m *Manager) forget(l *Live) {
	m.mu.Lock()
	if m.live[l.id] == l {
		delete(m.live, l.id)
	}
	m.ending[l] = true
	m.mu.Unlock()
}

// ended drops a session whose close is over.
func (m *Manager) ended(l *Live) {
	m.mu.Lock()
	delete(m.ending, l)
	m.mu.Unlock()
}

// AbortAll cancels the work of every session, those being closed after
// their work included (whose closes then end soon): the client has gone
// after all.
func (m *Manager) AbortAll() {
	m.mu.Lock()
	all := make([]*Live, 0, len(m.live)+len(m.ending))
	for _, l := range m.live {
		all = append(all, l)
	}
	for l := range m.ending {
		all = append(all, l)
	}
	m.mu.Unlock()
	for _, l := range all {
		l.Cancel()
		l.eng.Cancel(engine.AllKinds...)
	}
}

func (m *Manager) logf(format string, args ...any) {
	fmt.Fprintf(m.opts.Log, format, args...)
}
