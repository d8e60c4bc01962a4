package sessions

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// Live is one open session: its engine session, the parts the Builder
// gave it, its front, its ordered input and its turns.
//
// Input order: a front's requests for the session (Enqueue) are fed to the
// executor in arrival order by the pump goroutine, which is the one that
// may block on a full executor queue, so the front's reader never does;
// the pump starts once the session's resources are read (a prompt naming
// a template finds it). Cancel acts at once, ahead of the queue.
//
// Turns: one prompt (Turn) runs at a time. A turn that comes while one
// runs waits and starts when the one before it is over; each is answered
// with its own result once the session has settled after it.
type Live struct {
	m     *Manager
	eng   *engine.Session
	parts *Parts
	front Front
	id    string // the record's id when opened
	cwd   string

	inMu     sync.Mutex
	inQ      []func()      // guarded by inMu
	inClosed bool          // guarded by inMu
	started  bool          // guarded by inMu: Start ran (the host runs the executor)
	inSig    chan struct{} // cap 1: something was queued or the input closed
	pumpDone chan struct{}
	loopDone chan struct{}

	// gen counts Cancel: a turn asked before the latest Cancel ends as
	// aborted. Written by the front's reader, read on the executor.
	gen atomic.Uint64

	closeOnce sync.Once

	// Actor state: touched only on the executor.
	turn    *Turn
	queue   []*Turn
	settled []func() // called once no turn runs or waits and the session is idle
}

// Turn is one prompt a front wants answered with its result.
type Turn struct {
	// ID is the front's name for the turn (its request's id), for HasTurn.
	ID     string
	Text   string
	Images []engine.ContentBlock
	// OutputSchema, if set, is the JSON Schema the turn's final answer
	// must match (engine.PromptOptions.OutputSchema).
	OutputSchema []byte
	// Gen is Generation() when the front read the prompt: a Cancel read
	// after it ends the turn as aborted, even before it has started.
	Gen uint64
	// Run, if set, replaces the prompt (the front's own command): it calls
	// done when its work is over, and the turn ends once the session is
	// idle after that, with an empty result.
	Run func(done func())
	// Done receives the turn's result on the executor. Stop is
	// engine.StopAborted when the turn was cancelled; Stop "" with Err set:
	// the prompt could not start (no model, ...).
	Done func(engine.TurnResult)
	// TraceParent is the client's W3C traceparent for the turn's run
	// (engine.PromptOptions.TraceParent).
	TraceParent string
}

func newLive(m *Manager, p *Parts, f Front, cwd string) *Live {
	cfg := p.Config
	cfg.Sink, cfg.Host = f.Sink, f.Host
	if p.Tap != nil {
		cfg.Sink = p.Tap(cfg.Sink)
	}
	if f.Tools != nil {
		cfg.Tools = f.Tools(cfg.Tools)
	}
	l := &Live{m: m, eng: engine.New(cfg), parts: p, front: f, cwd: cwd,
		inSig: make(chan struct{}, 1), pumpDone: make(chan struct{}), loopDone: make(chan struct{})}
	if p.Start != nil {
		p.Start(l.eng)
	}
	// Before Loop: the executor is free, so Call runs here.
	l.eng.Call(func() {
		l.eng.SetSandbox(p.Sandbox)
		if r := p.Resume; r != nil {
			// What the command line names wins; the rest comes from the
			// record.
			if err := l.eng.Resume(r, p.KeepModel, p.KeepThinking); err != nil {
				m.logf("xcsh: %s: %v\n", r.File, err)
			}
		}
		l.id, _, _ = l.eng.Identity()
	})
	return l
}

// Engine returns the engine session.
func (l *Live) Engine() *engine.Session { return l.eng }

// ID returns the id the session was opened with (its record's).
func (l *Live) ID() string { return l.id }

// Cwd returns the session's working directory.
func (l *Live) Cwd() string { return l.cwd }

// Value returns the front's own state of the session (Front.Value).
func (l *Live) Value() any { return l.front.Value }

// Parts returns what the Builder assembled.
func (l *Live) Parts() *Parts { return l.parts }

// Info describes the live session for a listing.
func (l *Live) Info() Info {
	var name string
	l.eng.Call(func() { _, _, name = l.eng.Identity() })
	return Info{ID: l.id, Cwd: l.cwd, Title: name, Live: true}
}

// Start runs the session: its executor and its input pump. A front that
// runs the executor itself (RPC: its shutdown drains piped input first)
// does not call it; Close then only releases the session's parts.
func (l *Live) Start() {
	l.inMu.Lock()
	l.started = true
	l.inMu.Unlock()
	go func() { l.eng.Loop(); close(l.loopDone) }()
	go l.pump()
}

// Begin tells the extensions the session started: the front calls it
// once it has announced itself (after RPC's ready, ACP's session/new
// answer), so their load faults follow that.
func (l *Live) Begin() {
	if l.parts.Begin != nil {
		l.parts.Begin()
	}
}

// Enqueue queues fn for the executor, after everything queued before it;
// false once the session is closing (fn will not run).
func (l *Live) Enqueue(fn func()) bool {
	l.inMu.Lock()
	closed := l.inClosed
	if !closed {
		l.inQ = append(l.inQ, fn)
	}
	l.inMu.Unlock()
	if !closed {
		l.wake()
	}
	return !closed
}

func (l *Live) wake() {
	select {
	case l.inSig <- struct{}{}:
	default:
	}
}

// pump feeds the queued functions to the executor, once the session's
// resources are read.
func (l *Live) pump() {
	defer close(l.pumpDone)
	<-l.eng.Ready()
	for {
		l.inMu.Lock()
		for len(l.inQ) == 0 {
			if l.inClosed {
				l.inMu.Unlock()
				return
			}
			l.inMu.Unlock()
			<-l.inSig
			l.inMu.Lock()
		}
		fn := l.inQ[0]
		l.inQ[0] = nil
		l.inQ = l.inQ[1:]
		l.inMu.Unlock()
		l.eng.Post(fn)
	}
}

// Generation is the count of Cancel calls, for Turn.Gen.
func (l *Live) Generation() uint64 { return l.gen.Load() }

// Cancel cancels the running work at once, ahead of anything queued, and
// ends the turns asked so far as aborted; one the executor has not started
// yet ends when it would start, in order. An extension command the turn
// runs is the turn's work too (abort alone leaves commands running, as the
// original does).
func (l *Live) Cancel() {
	l.gen.Add(1)
	l.eng.Cancel(append(engine.AbortKinds[:len(engine.AbortKinds):len(engine.AbortKinds)], engine.ActCommand)...)
	l.Enqueue(func() {
		if l.turn != nil && l.turn.Gen != l.gen.Load() {
			l.eng.Interrupt()
		}
	})
}

// HasTurn reports whether match holds for the running turn or one
// waiting. (actor)
func (l *Live) HasTurn(match func(*Turn) bool) bool {
	if l.turn != nil && match(l.turn) {
		return true
	}
	for _, t := range l.queue {
		if match(t) {
			return true
		}
	}
	return false
}

// Prompt starts t, or queues it behind the running turn. (actor)
func (l *Live) Prompt(t *Turn) {
	if l.turn != nil || len(l.queue) > 0 {
		l.queue = append(l.queue, t)
		return
	}
	l.start(t)
}

// start begins a turn. (actor)
func (l *Live) start(t *Turn) {
	l.turn = t
	switch {
	case t.Gen != l.gen.Load():
		l.finish(engine.TurnResult{}) // cancelled while it waited
	case t.Run != nil:
		t.Run(func() { l.eng.WhenIdle(func() { l.finish(engine.TurnResult{}) }) })
	default:
		if err := l.eng.Prompt(t.Text, engine.PromptOptions{Images: t.Images, OutputSchema: t.OutputSchema, Done: l.finish, TraceParent: t.TraceParent}); err != nil {
			l.finish(engine.TurnResult{Err: err})
		}
	}
}

// finish answers the current turn (the session has settled after it) and
// starts the next. (actor)
func (l *Live) finish(res engine.TurnResult) {
	t := l.turn
	if t == nil {
		return
	}
	l.turn = nil
	if t.Gen != l.gen.Load() {
		res.Stop, res.Err = engine.StopAborted, nil
	}
	t.Done(res)
	l.next()
}

// next starts the oldest waiting turn, or tells those waiting for the
// session to settle. (actor)
func (l *Live) next() {
	for l.turn == nil && len(l.queue) > 0 {
		t := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		l.start(t)
	}
	if l.turn == nil && len(l.queue) == 0 {
		l.eng.WhenIdle(func() {
			if l.turn != nil || len(l.queue) > 0 {
				return
			}
			waiters := l.settled
			l.settled = nil
			for _, w := range waiters {
				w()
			}
		})
	}
}

// WhenSettled calls fn once no turn runs or waits and the session is idle.
// (actor)
func (l *Live) WhenSettled(fn func()) {
	l.settled = append(l.settled, fn)
	if l.turn == nil && len(l.queue) == 0 {
		l.next()
	}
}

// Ask prompts text as a turn, after everything queued before it, and
// waits for its result (from any goroutine but the executor). When ctx
// ends first, all the session's work is cancelled, and Ask returns ctx's
// cause once the turn has wound down. A caller's traceparent in ctx
// (engine.WithTraceParent) is the turn's.
func (l *Live) Ask(ctx context.Context, text string, images []engine.ContentBlock) (engine.TurnResult, error) {
	return l.AskTurn(ctx, Turn{Text: text, Images: images})
}

// AskTurn is Ask for a turn that carries more than a text (an output
// schema); its Gen and Done are Ask's own.
func (l *Live) AskTurn(ctx context.Context, turn Turn) (engine.TurnResult, error) {
	ch := make(chan engine.TurnResult, 1)
	t := &turn
	t.Gen, t.Done = l.Generation(), func(r engine.TurnResult) { ch <- r }
	if t.TraceParent == "" {
		t.TraceParent = engine.TraceParent(ctx)
	}
	if !l.Enqueue(func() { l.Prompt(t) }) {
		return engine.TurnResult{}, ErrClosing
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
	}
	l.gen.Add(1)
	l.eng.Cancel(engine.AllKinds...)
	l.Enqueue(func() { l.eng.Interrupt() })
	r := <-ch
	return r, context.Cause(ctx)
}

// storeCloseWait bounds how long Close waits to close the record's store:
// after a shutdown grace ran out, the executor may still be held by a run
// that did not stop, and the process is on its way out.
const storeCloseWait = time.Second

// Close ends the session: after its turns (abort false: the client's
// input ended) or cancelling them. The engine session stops, then the
// front's own goroutines (Front.Closed), its extensions and MCP servers,
// and its store closes. It returns once all that is done.
func (l *Live) Close(abort bool) {
	l.closeOnce.Do(func() {
		l.m.forget(l)
		defer l.m.ended(l)
		l.inMu.Lock()
		started := l.started
		l.inClosed = true
		l.inMu.Unlock()
		if started {
			if abort {
				l.gen.Add(1)
				l.eng.Cancel(engine.AllKinds...)
			}
			l.wake()
			<-l.pumpDone
			idle := make(chan struct{})
			l.eng.Post(func() {
				if abort {
					l.eng.Interrupt()
				}
				l.WhenSettled(func() { close(idle) })
			})
			<-idle
			l.eng.Stop()
			<-l.loopDone
		}
		l.release()
	})
}

// release lets go of a session that does not run (any more): its
// goroutines are waited for, its parts closed, its store closed.
func (l *Live) release() {
	l.eng.Close()
	if l.front.Closed != nil {
		l.front.Closed()
	}
	if l.parts.Close != nil {
		l.parts.Close()
	}
	closed := make(chan struct{})
	go func() { l.eng.Call(l.eng.CloseStore); close(closed) }()
	select {
	case <-closed:
	case <-time.After(storeCloseWait):
	}
}
