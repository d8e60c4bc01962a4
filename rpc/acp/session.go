package acp

import (
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// session is the ACP side of one live session of the host: its Sink and
// HostLink (the engine's events become session updates, its questions
// permission and elicitation requests), and its requests. The host owns
// the engine session, the order of its requests and its prompt turns.
type session struct {
	srv  *Server
	live *sessions.Live
	eng  *engine.Session // live's
	id   string
	cwd  string

	// wg counts the session's own goroutines (those waiting for the
	// client's answers to its permission and elicitation requests).
	wg sync.WaitGroup

	// dialogs waiting for the client, by engine dialog id; touched by the
	// run's goroutines (AwaitDialog) and the executor (the Sink).
	dmu     sync.Mutex
	dialogs map[string]*dialog

	// diffs are the before and after texts of the files a write or edit
	// call changed, by call id (filled on the tool's goroutine before the
	// call ends, taken by the Sink at tool_execution_end).
	diffs sync.Map

	// peers are the clients attached to the session (attach.go); only,
	// during an attach's replay, the one its updates go to (actor).
	pmu   sync.Mutex
	peers []*peer // guarded by pmu
	only  *peer

	// Actor state: touched only on the executor.
	msgID    string // the assistant message being streamed
	calls    map[string]*callState
	cost     float64
	allowAll map[string]bool  // allow_always answers, by tool and question
	asked    map[string]int64 // our request of each open dialog, by dialog id
	// showBudget: the budget's options are listed (budget.go).
	showBudget bool
}

// open opens the session req asks for in the host, with a new ACP side;
// a session already live (two loads at once) keeps its own.
func (s *Server) open(req sessions.Request, d *Delegate) (*session, error) {
	ss := &session{srv: s, cwd: req.Cwd,
		dialogs: map[string]*dialog{}, calls: map[string]*callState{}, allowAll: map[string]bool{}, asked: map[string]int64{}}
	if d != nil {
		req.Delegate = *d
	}
	l, err := s.opts.Host.Open(req, sessions.Front{Sink: ss, Host: ss, Value: ss,
		Tools:  func(ts []engine.Tool) []engine.Tool { return wrapTools(ss, ts) },
		Closed: func() { ss.wg.Wait(); ss.closePeers() }})
	if err != nil {
		return nil, err
	}
	if old, ok := l.Value().(*session); !ok || old != ss {
		if !ok || old.srv != s {
			return nil, fmt.Errorf("session %s is open in another client's connection", l.ID())
		}
		return old, nil
	}
	ss.live, ss.eng, ss.id = l, l.Engine(), l.ID()
	if d != nil {
		if d.Editor != nil {
			d.Editor.sid = ss.id
		}
		if d.Terminal != nil {
			d.Terminal.ss = ss
		}
	}
	// Before Start: the executor is free, so Call runs here.
	ss.eng.Call(func() {
		for _, m := range ss.eng.Messages() {
			if a, ok := m.(*engine.AssistantMessage); ok {
				ss.cost += a.Usage.Cost.Total
			}
		}
	})
	s.mu.Lock()
	s.own[ss] = true
	s.mu.Unlock()
	l.Start()
	l.Begin() // after session/new's answer is queued: its load faults follow it
	return ss, nil
}

// sessionOf is this connection's side of a live session: nil for nil, and
// for a session another client of the agent server opened.
func (s *Server) sessionOf(l *sessions.Live) *session {
	if l == nil {
		return nil
	}
	if ss, ok := l.Value().(*session); ok && ss.srv == s {
		return ss
	}
	return nil
}

// ownSessions are the sessions this connection opened and has not closed.
func (s *Server) ownSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.own))
	for ss := range s.own {
		out = append(out, ss)
	}
	return out
}

// close ends the session (its turns aborted, or finished first).
func (ss *session) close(abort bool) {
	ss.live.Close(abort)
	ss.srv.mu.Lock()
	delete(ss.srv.own, ss)
	ss.srv.mu.Unlock()
}

// abortOwn cancels the work of every session this connection opened,
// those being closed after their work included: the client has gone
// after all.
func (s *Server) abortOwn() {
	for _, ss := range s.ownSessions() {
		if len(ss.controllerPeers()) > 0 {
			continue // another client drives it: its run goes on
		}
		ss.live.Cancel()
		ss.eng.Cancel(engine.AllKinds...)
	}
}

// closeOwn closes every session this connection opened, at once: after
// their turns (the client's input ended) or aborting them.
func (s *Server) closeOwn(abort bool) {
	var wg sync.WaitGroup
	for _, ss := range s.ownSessions() {
		wg.Add(1)
		go func() { defer wg.Done(); ss.close(abort) }()
	}
	wg.Wait()
}

// push queues a request of the session. A prompt's generation is taken
// here, in the order of the wire: a session/cancel read after it cancels
// it even when the executor has not taken it up yet.
func (ss *session) push(from *Server, req *jsonrpc.Request) {
	gen := ss.live.Generation()
	ss.live.Enqueue(func() { ss.handle(from, req, gen) })
}

// handle runs one request on the executor. A panic answers it with an
// internal error; the session goes on.
func (ss *session) handle(from *Server, req *jsonrpc.Request, gen uint64) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(ss.srv.opts.Log, "xcsh: internal error handling %s: %v\n", req.Method, r)
			ss.reply(from, req, nil, errInternal(fmt.Errorf("%v", r)))
		}
	}()
	switch req.Method {
	case sdk.AgentMethodSessionPrompt:
		ss.prompt(from, req, gen)
	case sdk.AgentMethodSessionSetConfigOption:
		ss.setConfigOption(from, req)
	case sdk.AgentMethodSessionSetMode:
		ss.setMode(from, req)
	}
}

// cancel is session/cancel, on the reader: the running work is cancelled
// at once, ahead of everything queued, and the turns asked so far end as
// cancelled (never an error).
func (ss *session) cancel() { ss.live.Cancel() }

// cancelRequest is $/cancel_request for one of our prompts.
func (ss *session) cancelRequest(id json.RawMessage) {
	done := make(chan bool, 1)
	ss.wg.Add(1) // before the queue: close waits for the group after draining it
	if !ss.live.Enqueue(func() {
		done <- ss.live.HasTurn(func(t *sessions.Turn) bool { return t.ID == string(id) })
	}) {
		ss.wg.Done()
		return
	}
	go func() {
		defer ss.wg.Done()
		if <-done {
			ss.cancel()
		}
	}()
}

// prompt is session/prompt, read at generation gen: a turn of the host.
// A built-in command is the front's own work; any other text goes to the
// engine (which expands templates, skills and extension commands). (actor)
func (ss *session) prompt(from *Server, req *jsonrpc.Request, gen uint64) {
	var p sdk.PromptRequest
	if err := json.Unmarshal(req.Params, &p); err != nil {
		ss.reply(from, req, nil, errInvalidParams(err.Error()))
		return
	}
	if err := p.Validate(); err != nil {
		ss.reply(from, req, nil, errInvalidParams(err.Error()))
		return
	}
	text, images, err := promptInput(p.Prompt)
	if err != nil {
		ss.reply(from, req, nil, errInvalidParams(err.Error()))
		return
	}
	ss.echoPrompt(from, p.Prompt)
	t := &sessions.Turn{ID: string(req.ID), Text: text, Images: images, Gen: gen,
		Done: func(res engine.TurnResult) { ss.answer(from, req, res) }}
	t.TraceParent, _ = p.Meta["traceparent"].(string) // ACP reserves _meta.traceparent for W3C trace context
	if cmd, args, ok := builtinCommand(text); ok {
		t.Run = func(done func()) { cmd(ss, args, done) }
	}
	ss.live.Prompt(t)
}

// answer answers a prompt with its turn's result: every update of the
// turn has been written. (actor)
func (ss *session) answer(from *Server, req *jsonrpc.Request, res engine.TurnResult) {
	errText := ""
	if res.Last != nil {
		errText = res.Last.ErrorMessage
	}
	switch {
	case res.Budget != nil:
		// The partial answer has been sent; the reason follows it.
		ss.notice(res.Budget.Error())
		ss.srv.c.respond(req, sdk.PromptResponse{StopReason: budgetStopReason(res.Budget)})
	case res.Stop == engine.StopAborted:
		ss.reply(from, req, sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil)
	case res.Stop == "" && res.Err != nil:
		ss.reply(from, req, nil, errNotStarted(res.Err))
	case res.Stop == engine.StopError && isRefusal(errText):
		ss.reply(from, req, sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil)
	case res.Stop == engine.StopError:
		text := errText
		if text == "" {
			text = "The request failed"
		}
		ss.chunk(updateAgentMessage, text, ss.newMessageID())
		ss.reply(from, req, nil, errTurnFailed(text))
	case res.Stop == engine.StopLength:
		ss.reply(from, req, sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens}, nil)
	default:
		ss.reply(from, req, sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil)
	}
}

// announceCommands sends the slash commands once the session's resources
// are read.
func (ss *session) announceCommands() {
	<-ss.eng.Ready()
	ss.eng.Post(ss.sendCommands)
}
