package engine

import (
	"context"
	"errors"
)

// ErrNoShell: the session has no Shell wired (the RPC bash command).
var ErrNoShell = errors.New("bash is not available in this session")

// ExecuteBash runs a user shell command (the RPC bash command) on its own
// goroutine, so the actor keeps serving (abort_bash, get_state) meanwhile;
// commands queue behind each other.
// done is called on the actor with the result, after the execution has been
// recorded as a bashExecution message: at once when no run is active,
// otherwise when the next prompt starts, as the original defers it. (actor)
func (s *Session) ExecuteBash(command string, done func(BashResult, error)) {
	if s.cfg.Shell == nil {
		done(BashResult{}, ErrNoShell)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.bashMu.Lock()
	s.bashCancels[&cancel] = cancel
	s.bashMu.Unlock()
	// Commands run one at a time, in the order they were sent, like the
	// original's single shell: a piped script gets its results in order.
	prev, mine := s.bashTail, make(chan struct{})
	s.bashTail = mine
	go func() {
		defer close(mine)
		if prev != nil {
			<-prev
		}
		res, err := s.cfg.Shell.Exec(ctx, command)
		s.bashMu.Lock()
		delete(s.bashCancels, &cancel)
		s.bashMu.Unlock()
		cancel()
		s.Post(func() {
			if err == nil {
				s.recordBash(command, res)
			}
			done(res, err)
		})
	}()
}

// AbortBash cancels every running RPC bash command. Safe from any
// goroutine, so the reader can call it ahead of the queue.
func (s *Session) AbortBash() {
	s.bashMu.Lock()
	for _, c := range s.bashCancels {
		c()
	}
	s.bashMu.Unlock()
}

func (s *Session) recordBash(command string, res BashResult) {
	m := &BashExecutionMessage{
		Command: command, Output: res.Output, ExitCode: res.ExitCode,
		Cancelled: res.Cancelled, Truncated: res.Truncated, Timestamp: s.now(),
	}
	if s.run != nil {
		s.deferredBash = append(s.deferredBash, m)
		return
	}
	s.messages = append(s.messages, m)
}
