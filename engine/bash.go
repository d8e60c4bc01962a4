package engine

import "context"

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
	ctx, cancel := context.WithCancelCause(context.Background())
	remove := s.acts.add(ActBash, cancel)
	// Commands run one at a time, in the order they were sent, like the
	// original's single shell: a piped script gets its results in order.
	prev, mine := s.bashTail, make(chan struct{})
	s.bashTail = mine
	hooked := s.has(HookUserBash)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(mine)
		if prev != nil {
			<-prev
		}
		var res BashResult
		var err error
		var supplied *BashResult
		if hooked {
			supplied = s.cfg.Hooks.UserBash(ctx, command)
		}
		if supplied != nil {
			res = *supplied
		} else {
			res, err = s.cfg.Shell.Exec(ctx, command)
		}
		remove()
		cancel(nil)
		s.Post(func() {
			if err == nil {
				s.recordBash(command, res)
			}
			done(res, err)
		})
	}()
}

// Exec runs a shell command for an extension, under the rules of the RPC
// bash command (the Shell), and returns its result. It is a cancellable
// activity of its own kind (ActExec, among AbortKinds): abort stops it.
// Call it off the executor only.
func (s *Session) Exec(ctx context.Context, command string) (BashResult, error) {
	if s.cfg.Shell == nil {
		return BashResult{}, ErrNoShell
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer s.acts.add(ActExec, cancel)()
	return s.cfg.Shell.Exec(ctx, command)
}

// AbortBash cancels every running RPC bash command: Cancel(ActBash).
func (s *Session) AbortBash() { s.Cancel(ActBash) }

func (s *Session) recordBash(command string, res BashResult) {
	m := &BashExecutionMessage{
		Command: command, Output: res.Output, ExitCode: res.ExitCode,
		Cancelled: res.Cancelled, Truncated: res.Truncated, Timestamp: s.now(),
	}
	if s.phase != PhaseIdle {
		s.deferredBash = append(s.deferredBash, m)
		return
	}
	s.appendMessage(m)
}
