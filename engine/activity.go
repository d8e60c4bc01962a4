package engine

import (
	"context"
	"sync"
)

// Phase is what the session is doing, as one piece of actor state: every
// busy check (prompt, get_state's isStreaming and isCompacting, WhenIdle)
// derives from it, so work that happens after agent_end (retry backoff,
// auto-compaction, todo reminders) keeps the session busy without a second
// flag.
type Phase int

// The phases. A run is PhaseRunning from agent_start to agent_end; after
// agent_end it is idle, or stays busy in a post-run phase owned by the
// same run goroutine.
const (
	PhaseIdle Phase = iota
	PhaseRunning
	PhaseRetrying
	PhaseCompacting
	// PhaseSwitching: a session switch (new, branch, fork, clone) is
	// writing the new record; the session is neither streaming nor
	// compacting, but nothing may start until it is in place.
	PhaseSwitching
)

var phaseNames = [...]string{"idle", "running", "retrying", "compacting", "switching"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "unknown"
}

// ActivityKind names a kind of cancellable activity. Every cancellable
// piece of work registers under its kind in one registry, and the commands
// that stop work (abort, abort_bash, abort_retry, stdin EOF) cancel by
// kind; rpc's preemption table is written in these terms.
type ActivityKind int

// The activity kinds.
const (
	ActRun        ActivityKind = iota + 1 // a run: the agent loop of one prompt
	ActBash                               // an RPC bash command
	ActRetry                              // a retry backoff wait
	ActCompaction                         // a compaction
	ActHostCall                           // a call into a host tool
	ActDialog                             // an extension UI dialog
	ActCommand                            // a slash command running (Hooks.Commands)
	ActExec                               // a shell command run for an extension (Session.Exec)
)

// AbortKinds are the activities the abort command stops: the run, its
// retry wait, a compaction (manual or automatic; the original's abort
// cannot reach a manual one, rpc-protocol.md §4.3, and we stop it at once
// with "Compaction cancelled"), and shell commands run for extensions
// (Exec). Host calls and dialogs started by the run end with it, through
// the run's context.
var AbortKinds = []ActivityKind{ActRun, ActRetry, ActCompaction, ActExec}

// AllKinds are every kind of activity: what shutting down cancels.
var AllKinds = []ActivityKind{ActRun, ActBash, ActRetry, ActCompaction, ActHostCall, ActDialog, ActCommand, ActExec}

// activities is the cancellation registry. It is the one piece of session
// state touched from any goroutine (the reader cancels ahead of the
// executor queue), so it has its own lock, held only for map operations.
type activities struct {
	mu   sync.Mutex
	next uint64
	live map[uint64]activity
	// expired holds, per kind, the cause every activity of that kind is
	// cancelled with from now on, at once when it starts (see expire).
	expired map[ActivityKind]error
}

type activity struct {
	kind   ActivityKind
	cancel context.CancelCauseFunc
}

// add registers a cancel function under kind; the returned function
// removes it (call it when the activity is over).
func (a *activities) add(kind ActivityKind, cancel context.CancelCauseFunc) (remove func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[uint64]activity{}
	}
	a.next++
	id := a.next
	a.live[id] = activity{kind, cancel}
	if cause := a.expired[kind]; cause != nil {
		cancel(cause)
	}
	return func() {
		a.mu.Lock()
		delete(a.live, id)
		a.mu.Unlock()
	}
}

// cancel cancels every registered activity of the given kinds with cause
// and reports how many it reached.
func (a *activities) cancel(cause error, kinds ...ActivityKind) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, act := range a.live {
		for _, k := range kinds {
			if act.kind == k {
				act.cancel(cause)
				n++
				break
			}
		}
	}
	return n
}

// expire cancels every activity of kind with cause, now and whenever one
// starts later.
func (a *activities) expire(kind ActivityKind, cause error) {
	a.mu.Lock()
	if a.expired == nil {
		a.expired = map[ActivityKind]error{}
	}
	a.expired[kind] = cause
	a.mu.Unlock()
	a.cancel(cause, kind)
}

// count reports how many activities of kind are registered.
func (a *activities) count(kind ActivityKind) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, act := range a.live {
		if act.kind == kind {
			n++
		}
	}
	return n
}
