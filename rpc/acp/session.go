package acp

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
)

// session is one ACP session: an engine session of its own (its executor,
// its tools in its cwd, its MCP servers), the session's Sink and HostLink,
// and its prompt turns.
//
// Input order: the session's requests (prompt, set_config_option,
// set_mode) are queued by the reader and fed to the executor, in arrival
// order, by the pump goroutine, which is the one that may block on a full
// executor queue; session/cancel acts on the reader at once.
//
// Turns: one prompt runs at a time. A prompt that comes while one runs
// waits in queue (the follow-up) and starts when the turn before it is
// over; each prompt is answered when its own turn is over, the run and
// everything after it (retries, compaction) included.
type session struct {
	srv *Server
	id  string
	cwd string
	eng *engine.Session
	b   *Built
	st  Setup

	inMu     sync.Mutex
	inQ      []func()      // guarded by inMu
	inClosed bool          // guarded by inMu
	inSig    chan struct{} // cap 1: something was queued or the input closed
	pumpDone chan struct{}
	loopDone chan struct{}

	// gen counts session/cancel: a turn begun before the latest cancel is
	// cancelled. Written by the reader, read on the executor.
	gen atomic.Uint64

	closeOnce sync.Once
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

	// Actor state: touched only on the executor.
	turn     *turn
	queue    []*turn
	settled  []func() // called once no turn runs and none waits
	msgID    string   // the assistant message being streamed
	calls    map[string]*callState
	cost     float64
	allowAll map[string]bool  // allow_always answers, by tool and question
	asked    map[string]int64 // our request of each open dialog, by dialog id
}

// turn is one session/prompt request.
type turn struct {
	id     json.RawMessage
	text   string
	images []engine.ContentBlock
	gen    uint64 // the cancel generation it was asked in
	// stop and errText are those of the turn's last assistant message.
	stop    engine.StopReason
	errText string
}

func newSession(srv *Server, b *Built, st Setup) *session {
	ss := &session{
		srv: srv, b: b, st: st, cwd: st.Cwd,
		inSig: make(chan struct{}, 1), pumpDone: make(chan struct{}), loopDone: make(chan struct{}),
		dialogs: map[string]*dialog{}, calls: map[string]*callState{}, allowAll: map[string]bool{}, asked: map[string]int64{},
	}
	cfg := b.Config
	cfg.Sink, cfg.Host = ss, ss
	if b.Tap != nil {
		cfg.Sink = b.Tap(ss)
	}
	cfg.Tools = wrapTools(ss, cfg.Tools)
	ss.eng = engine.New(cfg)
	// Before Loop: the executor is free, so Call runs here.
	ss.eng.Call(func() {
		if b.Resume != nil {
			if err := ss.eng.Resume(b.Resume, b.KeepModel, b.KeepThinking); err != nil {
				fmt.Fprintf(srv.opts.Log, "xcsh: %s: %v\n", b.Resume.File, err)
			}
			for _, m := range ss.eng.Messages() {
				if a, ok := m.(*engine.AssistantMessage); ok {
					ss.cost += a.Usage.Cost.Total
				}
			}
		}
		ss.id, _, _ = ss.eng.Identity()
	})
	if st.Editor != nil {
		st.Editor.sid = ss.id
	}
	if st.Terminal != nil {
		st.Terminal.ss = ss
	}
	go func() { ss.eng.Loop(); close(ss.loopDone) }()
	go ss.pump()
	if b.Start != nil {
		b.Start(ss.eng)
	}
	return ss
}

// push queues a request of the session. A prompt's generation is taken
// here, in the order of the wire: a session/cancel read after it cancels
// it even when the executor has not taken it up yet.
func (ss *session) push(method string, id, params json.RawMessage) {
	gen := ss.gen.Load()
	ss.enqueue(func() { ss.handle(method, id, params, gen) })
}

// enqueue queues fn for the executor, in order; false once the session
// is closing (fn will not run).
func (ss *session) enqueue(fn func()) bool {
	ss.inMu.Lock()
	closed := ss.inClosed
	if !closed {
		ss.inQ = append(ss.inQ, fn)
	}
	ss.inMu.Unlock()
	if !closed {
		select {
		case ss.inSig <- struct{}{}:
		default:
		}
	}
	return !closed
}

// pump feeds the queued requests to the executor, once the session's
// resources are read (a prompt naming a template finds it).
func (ss *session) pump() {
	defer close(ss.pumpDone)
	<-ss.eng.Ready()
	for {
		ss.inMu.Lock()
		for len(ss.inQ) == 0 {
			if ss.inClosed {
				ss.inMu.Unlock()
				return
			}
			ss.inMu.Unlock()
			<-ss.inSig
			ss.inMu.Lock()
		}
		fn := ss.inQ[0]
		ss.inQ[0] = nil
		ss.inQ = ss.inQ[1:]
		ss.inMu.Unlock()
		ss.eng.Post(fn)
	}
}

// handle runs one request on the executor. A panic answers it with an
// internal error; the session goes on.
func (ss *session) handle(method string, id, params json.RawMessage, gen uint64) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(ss.srv.opts.Log, "xcsh: internal error handling %s: %v\n", method, r)
			ss.srv.c.fail(id, errInternal(fmt.Errorf("%v", r)))
		}
	}()
	switch method {
	case sdk.AgentMethodSessionPrompt:
		ss.prompt(id, params, gen)
	case sdk.AgentMethodSessionSetConfigOption:
		ss.setConfigOption(id, params)
	case sdk.AgentMethodSessionSetMode:
		ss.setMode(id, params)
	}
}

// cancel is session/cancel, on the reader: the running work is cancelled
// at once, ahead of anything queued, and the turns asked so far end as
// cancelled (never an error). A prompt the executor has not started yet
// is stopped when it has, in order.
func (ss *session) cancel() {
	ss.gen.Add(1)
	// An extension command the turn runs is the turn's work too (abort
	// alone leaves commands running, as the original does).
	ss.eng.Cancel(append(engine.AbortKinds[:len(engine.AbortKinds):len(engine.AbortKinds)], engine.ActCommand)...)
	ss.enqueue(func() {
		if ss.turn != nil && ss.turn.gen != ss.gen.Load() {
			ss.eng.Interrupt()
		}
	})
}

// cancelRequest is $/cancel_request for one of our prompts.
func (ss *session) cancelRequest(id json.RawMessage) {
	done := make(chan bool, 1)
	ss.wg.Add(1) // before the queue: close waits for the group after draining it
	if !ss.enqueue(func() {
		hit := ss.turn != nil && string(ss.turn.id) == string(id)
		for _, t := range ss.queue {
			hit = hit || string(t.id) == string(id)
		}
		done <- hit
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

// prompt is session/prompt, read at generation gen. (actor)
func (ss *session) prompt(id, params json.RawMessage, gen uint64) {
	var p sdk.PromptRequest
	if err := json.Unmarshal(params, &p); err != nil {
		ss.srv.c.fail(id, errInvalidParams(err.Error()))
		return
	}
	if err := p.Validate(); err != nil {
		ss.srv.c.fail(id, errInvalidParams(err.Error()))
		return
	}
	text, images, err := promptInput(p.Prompt)
	if err != nil {
		ss.srv.c.fail(id, errInvalidParams(err.Error()))
		return
	}
	t := &turn{id: id, text: text, images: images, gen: gen}
	if ss.turn != nil || len(ss.queue) > 0 {
		ss.queue = append(ss.queue, t)
		return
	}
	ss.start(t)
}

// start begins a turn: a built-in command, or a prompt for the engine
// (which expands templates, skills and extension commands). (actor)
func (ss *session) start(t *turn) {
	ss.turn = t
	if t.gen != ss.gen.Load() {
		ss.finish() // cancelled while it waited
		return
	}
	if cmd, args, ok := builtinCommand(t.text); ok {
		cmd(ss, args, func() { ss.eng.WhenIdle(ss.finish) })
		return
	}
	opts := engine.PromptOptions{Images: t.images}
	// An extension's command runs beside the session, which stays idle:
	// the turn ends when the command has (what it shows comes first).
	command := ss.eng.NamesExtensionCommand(t.text)
	if command {
		opts.CommandDone = func() { ss.eng.WhenIdle(ss.finish) }
	}
	if err := ss.eng.Prompt(t.text, opts); err != nil {
		ss.turn = nil
		ss.srv.c.fail(t.id, errNotStarted(err))
		ss.next()
		return
	}
	if !command {
		ss.eng.WhenIdle(ss.finish)
	}
}

// finish answers the current turn once the session is idle: every update
// of the turn has been written. (actor)
func (ss *session) finish() {
	t := ss.turn
	if t == nil {
		return
	}
	ss.turn = nil
	switch {
	case t.gen != ss.gen.Load() || t.stop == engine.StopAborted:
		ss.srv.c.respond(t.id, sdk.PromptResponse{StopReason: sdk.StopReasonCancelled})
	case t.stop == engine.StopError && isRefusal(t.errText):
		ss.srv.c.respond(t.id, sdk.PromptResponse{StopReason: sdk.StopReasonRefusal})
	case t.stop == engine.StopError:
		text := t.errText
		if text == "" {
			text = "The request failed"
		}
		ss.chunk(updateAgentMessage, text, ss.newMessageID())
		ss.srv.c.fail(t.id, errTurnFailed(text))
	case t.stop == engine.StopLength:
		ss.srv.c.respond(t.id, sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens})
	default:
		ss.srv.c.respond(t.id, sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn})
	}
	ss.next()
}

// next starts the oldest waiting turn, or tells those waiting for the
// session to settle. (actor)
func (ss *session) next() {
	for ss.turn == nil && len(ss.queue) > 0 {
		t := ss.queue[0]
		ss.queue = ss.queue[1:]
		ss.start(t)
	}
	if ss.turn == nil && len(ss.queue) == 0 {
		ss.eng.WhenIdle(func() {
			if ss.turn != nil || len(ss.queue) > 0 {
				return
			}
			waiters := ss.settled
			ss.settled = nil
			for _, w := range waiters {
				w()
			}
		})
	}
}

// whenSettled calls fn once no turn runs or waits and the engine is idle.
// (actor)
func (ss *session) whenSettled(fn func()) {
	ss.settled = append(ss.settled, fn)
	if ss.turn == nil && len(ss.queue) == 0 {
		ss.next()
	}
}

// close ends the session: after its turns (abort false: the client's
// input ended), or cancelling them (session/close, a signal). The engine
// session stops, its MCP servers and its store close.
func (ss *session) close(abort bool) {
	ss.closeOnce.Do(func() {
		ss.srv.forget(ss)
		if abort {
			ss.gen.Add(1)
			ss.eng.Cancel(engine.AllKinds...)
		}
		ss.inMu.Lock()
		ss.inClosed = true
		ss.inMu.Unlock()
		select {
		case ss.inSig <- struct{}{}:
		default:
		}
		<-ss.pumpDone
		idle := make(chan struct{})
		ss.eng.Post(func() {
			if abort {
				ss.eng.Interrupt()
			}
			ss.whenSettled(func() { close(idle) })
		})
		<-idle
		ss.eng.Stop()
		<-ss.loopDone
		ss.eng.Close()
		ss.wg.Wait()
		if ss.b.Close != nil {
			ss.b.Close()
		}
		ss.eng.Call(ss.eng.CloseStore)
	})
}

// info describes the live session for session/list.
func (ss *session) info() SessionInfo {
	var name string
	ss.eng.Call(func() { _, _, name = ss.eng.Identity() })
	return SessionInfo{ID: ss.id, Cwd: ss.cwd, Title: name}
}

// announceCommands sends the slash commands once the session's resources
// are read.
func (ss *session) announceCommands() {
	<-ss.eng.Ready()
	ss.eng.Post(ss.sendCommands)
}
