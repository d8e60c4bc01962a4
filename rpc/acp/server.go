package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/rpc"
	"github.com/xcsh-go/xcsh/rpc/internal/lineout"
)

// ProtocolVersion is the ACP version this agent speaks.
const ProtocolVersion = sdk.ProtocolVersionNumber

// Options configure a Server.
type Options struct {
	Version      string // agentInfo.version
	MaxLineBytes int    // 0: rpc.DefaultMaxLineBytes (64 MiB)
	Log          io.Writer
	// IDs mints message ids (messageId of the chunks); the sessions' own.
	IDs engine.IDSource
	// Sessions builds and finds the engine sessions (cmd/xcsh).
	Sessions Sessions
	// ImageInput says the default model takes images
	// (promptCapabilities.image).
	ImageInput bool
	// ShutdownGrace bounds how long a signal waits for the aborted work.
	ShutdownGrace time.Duration
	// OutputFull, if set, reports whether a message of n bytes would have
	// to wait for the client to read (the CLI asks its stdout pipe). The
	// sessions are then Backlog Sinks: while the editor does not keep up,
	// a reply's piled-up deltas become one chunk. Unset, nothing merges.
	OutputFull func(n int) bool
}

// Sessions is what the front needs from the program: the configuration of
// an engine session for a client's session, and the saved sessions.
type Sessions interface {
	// New configures a new session in setup.Cwd.
	New(setup Setup) (*Built, error)
	// Open configures a session that continues the saved session id
	// (Built.Resume set); ErrUnknownSession when there is none.
	Open(id string, setup Setup) (*Built, error)
	// List describes the saved sessions of cwd ("" for every directory),
	// newest first.
	List(cwd string) ([]SessionInfo, error)
}

// Setup is what a client's session/new (load, resume) asks for.
type Setup struct {
	Cwd        string
	MCPServers []MCPServer
	// Editor reads and writes text files in the editor (fs/*); nil when
	// the client does not offer both.
	Editor *Editor
	// Terminal runs commands in the editor's terminals (terminal/*); nil
	// when the client does not offer them.
	Terminal *Terminal
}

// MCPServer is one entry of mcpServers.
type MCPServer struct {
	Name, Transport, Command string
	Args                     []string
	Env                      map[string]string
	URL                      string
	Headers                  map[string]string
}

// Built is a session's configuration, from Sessions.
type Built struct {
	// Config is the engine session's; the front sets Sink and Host.
	Config engine.Config
	// Resume is the record to continue (Open), nil for a new session;
	// KeepModel and KeepThinking: the command line chose them.
	Resume                  *engine.LoadedSession
	KeepModel, KeepThinking bool
	// Start, if set, runs once the engine session exists (the MCP
	// servers start in the background, the extensions are told the
	// session started); Close once it is closed.
	Start func(*engine.Session)
	Close func()
	// Tap, if set, wraps the session's Sink (the extensions watch the
	// events on their way to the client).
	Tap func(engine.Sink) engine.Sink
}

// SessionInfo describes a saved session for session/list.
type SessionInfo struct {
	ID, Cwd, Title string
	Updated        time.Time
}

// Server is the ACP front: it reads JSON-RPC from the client, drives one
// engine session per ACP session, and owns stdout.
type Server struct {
	opts Options
	c    *conn

	mu       sync.Mutex
	caps     sdk.ClientCapabilities // from initialize
	sessions map[string]*session    // live sessions by id
	closing  bool                   // guarded by mu: no new sessions
	// creating counts the session/new, load and resume requests in
	// flight; deferred are the session requests waiting for them (route).
	creating int      // guarded by mu
	deferred []func() // guarded by mu
	// draining is set while created routes the deferred requests: one the
	// reader reads meanwhile waits behind them (guarded by mu).
	draining bool

	// handlers counts the request handlers running on their own
	// goroutines (session/new, load, list, ...); Run waits for them.
	handlers sync.WaitGroup

	outGone chan struct{}
	outErr  error
}

// ErrOutputClosed reports that stdout could not be written: the client has
// gone.
var ErrOutputClosed = errors.New("output closed")

// NewServer returns a server writing to out.
func NewServer(out io.Writer, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.IDs == nil {
		opts.IDs = &engine.RandomIDs{Clock: engine.SystemClock{}}
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 5 * time.Second
	}
	s := &Server{opts: opts, sessions: map[string]*session{}, outGone: make(chan struct{})}
	s.c = &conn{log: opts.Log}
	s.c.out = lineout.New(out, func(err error) {
		fmt.Fprintf(opts.Log, "xcsh: stdout write failed: %v; exiting\n", err)
		s.outErr = err
		close(s.outGone)
	})
	s.c.out.Full = opts.OutputFull
	return s
}

// Run serves the client on in until EOF (the running turns finish first,
// then every session closes), a cancellation of ctx (a signal: every turn
// is aborted) or a failed write to stdout (ErrOutputClosed). It returns
// nil after EOF and context.Cause(ctx) otherwise.
func (s *Server) Run(ctx context.Context, in io.Reader) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		select {
		case <-s.outGone:
			stop(fmt.Errorf("%w: %w", ErrOutputClosed, s.outErr))
		case <-ctx.Done():
		}
	}()
	eof := make(chan struct{})
	go func() {
		s.readLoop(in)
		close(eof)
	}()
	var err error
	select {
	case <-eof:
		// Requests in flight finish; the turns they started finish too.
		s.handlers.Wait()
		s.closeAll(false)
	case <-ctx.Done():
		err = context.Cause(ctx)
		done := make(chan struct{})
		go func() { s.closeAll(true); close(done) }()
		select {
		case <-done:
		case <-time.After(s.opts.ShutdownGrace):
			fmt.Fprintln(s.opts.Log, "xcsh: the sessions did not stop in time; exiting")
		}
	}
	s.c.out.Close()
	if err == nil {
		select {
		case <-s.outGone:
			err = fmt.Errorf("%w: %w", ErrOutputClosed, s.outErr)
		default:
		}
	}
	return err
}

// closeAll closes every session: after their work (EOF) or aborting it.
func (s *Server) closeAll(abort bool) {
	s.mu.Lock()
	s.closing = true
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss.close(abort)
		}()
	}
	wg.Wait()
}

// readLoop frames stdin (rpc's line reader: 64 MiB lines, CR and BOM
// stripped, blank lines skipped) and never waits for a session: requests
// go to their session's queue or their own goroutine, responses to our
// requests resolve their waiters here, and session/cancel acts at once.
func (s *Server) readLoop(in io.Reader) {
	lr := rpc.NewLineReader(in, s.opts.MaxLineBytes)
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err == rpc.ErrLineTooLong {
			s.c.fail(nil, errParse("the line is over the length limit"))
			continue
		}
		if err != nil {
			fmt.Fprintf(s.opts.Log, "xcsh: reading stdin: %v\n", err)
			break
		}
		s.dispatch(bytes.Clone(line))
	}
	// Nothing more will answer our requests: dialogs resolve cancelled,
	// delegated file and terminal calls fail.
	s.c.closeInput()
}

// dispatch classifies one line.
func (s *Server) dispatch(line []byte) {
	if !utf8.Valid(line) {
		s.c.fail(nil, errParse("invalid UTF-8"))
		return
	}
	if !json.Valid(line) {
		var v any
		reason := "invalid JSON"
		if err := json.Unmarshal(line, &v); err != nil {
			reason = err.Error()
		}
		s.c.fail(nil, errParse(reason))
		return
	}
	var env envelope
	if first := bytes.TrimLeft(line, " \t\r\n"); len(first) == 0 || first[0] != '{' {
		s.c.fail(nil, errInvalidRequest("a message is a JSON object"))
		return
	}
	if err := json.Unmarshal(line, &env); err != nil {
		s.c.fail(idOf(line), errInvalidRequest(err.Error()))
		return
	}
	if env.Method == nil {
		if env.hasID() && (env.Result != nil || env.Error != nil) {
			s.c.resolve(&env)
			return
		}
		s.c.fail(env.ID, errInvalidRequest("no method"))
		return
	}
	method := *env.Method
	if !env.hasID() {
		s.notification(method, env.Params)
		return
	}
	s.request(method, env.ID, env.Params)
}

// idOf is the id of a message that did not decode, when it has a usable
// one.
func idOf(line []byte) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &v) == nil && len(v.ID) > 0 && (v.ID[0] == '"' || v.ID[0] == '-' || (v.ID[0] >= '0' && v.ID[0] <= '9')) {
		return v.ID
	}
	return nil
}

// notification handles a notification on the reader: session/cancel at
// once (ahead of everything queued), unknown ones ignored.
func (s *Server) notification(method string, params json.RawMessage) {
	switch method {
	case sdk.AgentMethodSessionCancel:
		var p sdk.CancelNotification
		if json.Unmarshal(params, &p) != nil {
			return
		}
		s.route(string(p.SessionId), func(ss *session) {
			if ss != nil {
				ss.cancel()
			}
		})
	case "$/cancel_request":
		// A prompt's request withdrawn: the same as cancelling its turn.
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		for _, ss := range s.liveSessions() {
			ss.cancelRequest(p.RequestID)
		}
	}
}

// request routes a request: initialize at once; the session verbs in the
// order of their session's queue; the rest on goroutines of their own
// (they may load files).
func (s *Server) request(method string, id, params json.RawMessage) {
	switch method {
	case sdk.AgentMethodInitialize:
		s.initialize(id, params)
	case sdk.AgentMethodAuthenticate:
		s.c.respond(id, struct{}{})
	case sdk.AgentMethodSessionNew, sdk.AgentMethodSessionLoad, sdk.AgentMethodSessionResume,
		sdk.AgentMethodSessionList, sdk.AgentMethodSessionClose:
		s.handlers.Add(1)
		creates := method == sdk.AgentMethodSessionNew || method == sdk.AgentMethodSessionLoad || method == sdk.AgentMethodSessionResume
		if creates {
			s.mu.Lock()
			s.creating++
			s.mu.Unlock()
		}
		go func() {
			defer s.handlers.Done()
			if creates {
				defer s.created()
			}
			defer s.recoverInto(id, method)
			switch method {
			case sdk.AgentMethodSessionNew:
				s.newSession(id, params)
			case sdk.AgentMethodSessionLoad:
				s.loadSession(id, params, true)
			case sdk.AgentMethodSessionResume:
				s.loadSession(id, params, false)
			case sdk.AgentMethodSessionList:
				s.listSessions(id, params)
			case sdk.AgentMethodSessionClose:
				s.closeSession(id, params)
			}
		}()
	case sdk.AgentMethodSessionPrompt, sdk.AgentMethodSessionSetConfigOption, sdk.AgentMethodSessionSetMode:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			s.c.fail(id, errInvalidParams(err.Error()))
			return
		}
		s.route(p.SessionID, func(ss *session) {
			if ss == nil {
				s.c.fail(id, errSessionNotFound(p.SessionID))
				return
			}
			ss.push(method, id, params)
		})
	default:
		s.c.fail(id, errMethodNotFound(method))
	}
}

// recoverInto answers a request whose handler panicked with an internal
// error, and keeps serving.
func (s *Server) recoverInto(id json.RawMessage, method string) {
	if r := recover(); r != nil {
		fmt.Fprintf(s.opts.Log, "xcsh: internal error handling %s: %v\n", method, r)
		s.c.fail(id, errInternal(fmt.Errorf("%v", r)))
	}
}

// decodeParams reads params into p (an SDK request type) and validates it;
// false when it answered the request with -32602.
func (s *Server) decodeParams(id, params json.RawMessage, p interface{ Validate() error }) bool {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, p); err != nil {
		s.c.fail(id, errInvalidParams(err.Error()))
		return false
	}
	if err := p.Validate(); err != nil {
		s.c.fail(id, errInvalidParams(err.Error()))
		return false
	}
	return true
}

func (s *Server) initialize(id, params json.RawMessage) {
	var p sdk.InitializeRequest
	if !s.decodeParams(id, params, &p) {
		return
	}
	s.mu.Lock()
	s.caps = p.ClientCapabilities
	s.mu.Unlock()
	title := "xcsh"
	resp := sdk.InitializeResponse{
		// v1 is echoed; any other version is answered with ours, and the
		// client decides whether it can go on.
		ProtocolVersion: ProtocolVersion,
		AgentInfo:       &sdk.Implementation{Name: "xcsh", Title: &title, Version: s.opts.Version},
		AuthMethods:     []sdk.AuthMethod{},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: s.opts.ImageInput, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List: &sdk.SessionListCapabilities{}, Close: &sdk.SessionCloseCapabilities{}, Resume: &sdk.SessionResumeCapabilities{},
			},
		},
	}
	s.c.respond(id, resp)
}

// route hands a session's request to fn with the session (nil when there
// is none). While a session/new, load or resume is in flight, requests
// for a session that does not exist yet wait for it, and so does every
// session request after them (in order): a client that pipes a prompt
// right behind its session/new is served. (reader)
func (s *Server) route(id string, fn func(*session)) {
	s.mu.Lock()
	ss := s.sessions[id]
	if (ss == nil && s.creating > 0) || len(s.deferred) > 0 || s.draining {
		s.deferred = append(s.deferred, func() { fn(s.session(id)) })
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	fn(ss)
}

// created ends a session/new, load or resume: once none is in flight, the
// requests that waited for them are routed, in order, and so are those the
// reader defers meanwhile: a session/cancel read after a waiting prompt
// must not overtake it.
func (s *Server) created() {
	s.mu.Lock()
	s.creating--
	if s.draining {
		s.mu.Unlock()
		return
	}
	s.draining = true
	for s.creating == 0 && len(s.deferred) > 0 {
		run := s.deferred
		s.deferred = nil
		s.mu.Unlock()
		for _, fn := range run {
			fn()
		}
		s.mu.Lock()
	}
	s.draining = false
	s.mu.Unlock()
}

func (s *Server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *Server) liveSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

func (s *Server) clientCaps() sdk.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}
