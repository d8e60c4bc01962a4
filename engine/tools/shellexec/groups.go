package shellexec

import (
	"context"
	"os/exec"
	"sync"
	"syscall"
)

// groups is the registry of the process groups Run has started and not yet
// reaped, so the process can kill them all on its way out (KillAll) and
// wait for their reaping (Wait): no child outlives the agent, whichever way
// it exits. It is package state because a process has one set of children.
var groups = registry{live: make(map[int]chan struct{})}

type registry struct {
	// mu guards live. start holds it across the fork, so a KillAll either
	// sees a group or runs before the group exists.
	mu sync.Mutex
	// live maps the pgid of every group whose reaper has not finished to
	// a channel its reaper closes when done.
	live map[int]chan struct{}
}

// start starts cmd, which must make its own process group (Setpgid), and
// registers the group; the returned channel is closed by the reaper (see
// reap) once the leader is reaped and the group killed.
func (r *registry) start(cmd *exec.Cmd) (pgid int, done chan struct{}, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	pgid = cmd.Process.Pid // Setpgid: the leader's pid is the pgid
	done = make(chan struct{})
	r.live[pgid] = done
	return pgid, done, nil
}

// finish kills what is left of the group (a background grandchild after
// the shell exited), then unregisters it. Both happen under mu so that no
// signal can reach the pgid once it is unregistered: the kernel may reuse
// it only after the whole group is gone.
func (r *registry) finish(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	close(r.live[pgid])
	delete(r.live, pgid)
}

// signal sends sig to the group if it is still registered.
func (r *registry) signal(pgid int, sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.live[pgid]; ok {
		_ = syscall.Kill(-pgid, sig)
	}
}

// KillAll kills every command started by Run (the bash tool's and the
// RPC bash command's) that is still running: through the supervisor, every
// command's group and every descendant it holds; for direct starts, every
// registered group. It does not wait (see Wait). cmd/xcsh calls it on
// every exit path. Commands started after it returns are not affected.
func KillAll() {
	if s := active.Load(); s != nil {
		s.killAll()
	}
	groups.mu.Lock()
	defer groups.mu.Unlock()
	for pgid := range groups.live {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Wait blocks until every command running when it is called has ended
// (and, after KillAll, until the supervisor has reaped every descendant),
// or until ctx is done, and then returns ctx's error. After KillAll it is
// short: a killed group's pipes close with it, and a pipe held by a
// process that left the group is cut after WaitDelay.
func Wait(ctx context.Context) error {
	if s := active.Load(); s != nil {
		if err := s.wait(ctx); err != nil {
			return err
		}
	}
	groups.mu.Lock()
	pending := make([]chan struct{}, 0, len(groups.live))
	for _, done := range groups.live {
		pending = append(pending, done)
	}
	groups.mu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
