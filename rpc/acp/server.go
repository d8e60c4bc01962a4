package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/lineio"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// ProtocolVersion is the ACP version this agent speaks.
const ProtocolVersion = sdk.ProtocolVersionNumber

// Options configure a Server.
type Options struct {
	Version string // agentInfo.version
	// ProtocolVersion and SchemaHash are initialize's _meta.xcsh: the
	// version and hash of our extensions' schema (rpc/schema, acp-ext).
	ProtocolVersion, SchemaHash string
	MaxLineBytes                int // 0: lineio.DefaultMaxLine (64 MiB)
	Log                         io.Writer
	// IDs mints message ids (messageId of the chunks); the sessions' own.
	IDs engine.IDSource
	// Host is the session host: it builds, opens, lists and closes the
	// sessions (cmd/xcsh gives it the Builder).
	Host *sessions.Manager
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

// Delegate is what a client offers a session's tools, for the Builder
// (sessions.Request.Delegate): the editor's text files and its terminals.
type Delegate struct {
	// Editor reads and writes text files in the editor (fs/*); nil when
	// the client does not offer both.
	Editor *Editor
	// Terminal runs commands in the editor's terminals (terminal/*); nil
	// when the client does not offer them.
	Terminal *Terminal
}

// Server is the ACP front: it reads JSON-RPC from the client, drives one
// engine session per ACP session, and owns stdout.
type Server struct {
	opts Options
	c    *conn

	mu   sync.Mutex
	caps sdk.ClientCapabilities // from initialize; guarded by mu
	// own are the sessions this connection opened (a server's other
	// clients have theirs); guarded by mu.
	own map[*session]bool
	// attached are the sessions of other connections it is attached to
	// (attach.go); guarded by mu.
	attached map[*session]*peer

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
	s := &Server{opts: opts, outGone: make(chan struct{}), own: map[*session]bool{}, attached: map[*session]*peer{}}
	s.c = &conn{out: lineio.New(out, func(err error) {
		fmt.Fprintf(opts.Log, "xcsh: stdout write failed: %v; exiting\n", err)
		s.outErr = err
		close(s.outGone)
	})}
	s.c.out.Full = opts.OutputFull
	s.c.Conn = jsonrpc.New(s.c.out, jsonrpc.Options{
		Decode:  decode,
		Preempt: s.preempt,
		BadLine: s.c.badLine,
		OnError: func(err error) { fmt.Fprintf(opts.Log, "xcsh: acp: %v\n", err) },
	})
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
		// Requests in flight finish; the turns they started finish too,
		// unless the client turns out to be gone meanwhile (its end of
		// stdout closed: a watcher cancels ctx, which may come just after
		// the end of stdin).
		drained := make(chan struct{})
		go func() {
			s.handlers.Wait()
			s.closeOwn(false)
			close(drained)
		}()
		select {
		case <-drained:
		case <-ctx.Done():
			err = context.Cause(ctx)
			s.abortOwn()
			select {
			case <-drained:
			case <-time.After(s.opts.ShutdownGrace):
				fmt.Fprintln(s.opts.Log, "xcsh: the sessions did not stop in time; exiting")
			}
		}
	case <-ctx.Done():
		err = context.Cause(ctx)
		done := make(chan struct{})
		go func() { s.closeOwn(true); close(done) }()
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

// readLoop reads stdin through the connection (lineio's line reader: 64
// MiB lines, CR and BOM stripped, blank lines skipped) and never waits
// for a session: requests go to their session's queue or their own
// goroutine (preempt), responses to our requests resolve their waiters on
// the reader, and session/cancel acts at once.
func (s *Server) readLoop(in io.Reader) {
	lr := lineio.NewReader(in, s.opts.MaxLineBytes)
	lr.SkipBOM = true
	if err := s.c.Read(lr); err != nil {
		fmt.Fprintf(s.opts.Log, "xcsh: reading stdin: %v\n", err)
	}
	// Nothing more will answer our requests: dialogs resolve cancelled,
	// delegated file and terminal calls fail; it leaves the sessions it
	// attached to.
	s.c.Close(errClientGone)
	s.detachAll()
}

// preempt takes every message on the reader, in the order of the wire (a
// cancel never overtakes the prompt it cancels): it answers at once, or
// routes the request to what answers it later.
func (s *Server) preempt(_ context.Context, req *jsonrpc.Request) (any, error) {
	if !req.IsCall() {
		s.notification(req.Method, req.Params)
		return nil, nil
	}
	return s.request(req)
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
		s.opts.Host.Route(string(p.SessionId), func(l *sessions.Live) {
			if ss, _ := s.driven(l); ss != nil {
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
		for _, ss := range s.ownSessions() {
			ss.cancelRequest(p.RequestID)
		}
	}
}

// request routes a request: initialize and authenticate are answered at
// once; the session verbs go in the order of their session's queue; the
// rest run on goroutines of their own (they may load files). Those answer
// later (jsonrpc.ErrAsync).
func (s *Server) request(req *jsonrpc.Request) (any, error) {
	method := req.Method
	switch method {
	case sdk.AgentMethodInitialize:
		return s.initialize(req.Params)
	case sdk.AgentMethodAuthenticate:
		return struct{}{}, nil
	case sdk.AgentMethodSessionNew, sdk.AgentMethodSessionLoad, sdk.AgentMethodSessionResume,
		sdk.AgentMethodSessionList, sdk.AgentMethodSessionClose:
		s.handlers.Add(1)
		creates := method == sdk.AgentMethodSessionNew || method == sdk.AgentMethodSessionLoad || method == sdk.AgentMethodSessionResume
		var created func()
		if creates {
			created = s.opts.Host.Creating()
		}
		go func() {
			defer s.handlers.Done()
			if creates {
				defer created()
			}
			defer s.recoverInto(req)
			switch method {
			case sdk.AgentMethodSessionNew:
				s.newSession(req)
			case sdk.AgentMethodSessionLoad:
				s.loadSession(req, true)
			case sdk.AgentMethodSessionResume:
				s.loadSession(req, false)
			case sdk.AgentMethodSessionList:
				s.listSessions(req)
			case sdk.AgentMethodSessionClose:
				s.closeSession(req)
			}
		}()
		return nil, jsonrpc.ErrAsync
	case sdk.AgentMethodSessionPrompt, sdk.AgentMethodSessionSetConfigOption, sdk.AgentMethodSessionSetMode:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, errInvalidParams(err.Error())
		}
		s.opts.Host.Route(p.SessionID, func(l *sessions.Live) {
			ss, e := s.driven(l)
			if ss == nil {
				if e == nil {
					e = errSessionNotFound(p.SessionID)
				}
				s.c.fail(req, e)
				return
			}
			ss.push(s, req)
		})
		return nil, jsonrpc.ErrAsync
	case methodAttach:
		s.attach(req)
		return nil, jsonrpc.ErrAsync
	case methodDetach:
		s.handlers.Add(1)
		go func() {
			defer s.handlers.Done()
			defer s.recoverInto(req)
			s.detach(req)
		}()
		return nil, jsonrpc.ErrAsync
	}
	return nil, errMethodNotFound(method)
}

// recoverInto answers a request whose handler panicked with an internal
// error, and keeps serving.
func (s *Server) recoverInto(req *jsonrpc.Request) {
	if r := recover(); r != nil {
		fmt.Fprintf(s.opts.Log, "xcsh: internal error handling %s: %v\n", req.Method, r)
		s.c.fail(req, errInternal(fmt.Errorf("%v", r)))
	}
}

// readParams reads params into p (an SDK request type) and validates it;
// the error is the request's -32602 answer.
func readParams(params json.RawMessage, p interface{ Validate() error }) *jsonrpc.Error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, p); err != nil {
		return errInvalidParams(err.Error())
	}
	if err := p.Validate(); err != nil {
		return errInvalidParams(err.Error())
	}
	return nil
}

// decodeParams reads req's params into p (readParams); false when
// it answered the request with -32602.
func (s *Server) decodeParams(req *jsonrpc.Request, p interface{ Validate() error }) bool {
	if e := readParams(req.Params, p); e != nil {
		s.c.fail(req, e)
		return false
	}
	return true
}

func (s *Server) initialize(params json.RawMessage) (any, error) {
	var p sdk.InitializeRequest
	if e := readParams(params, &p); e != nil {
		return nil, e
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
		Meta:            map[string]any{"xcsh": InitializeMeta{ProtocolVersion: s.opts.ProtocolVersion, SchemaHash: s.opts.SchemaHash}},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: s.opts.ImageInput, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List: &sdk.SessionListCapabilities{}, Close: &sdk.SessionCloseCapabilities{}, Resume: &sdk.SessionResumeCapabilities{},
			},
		},
	}
	return resp, nil
}

func (s *Server) clientCaps() sdk.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}
