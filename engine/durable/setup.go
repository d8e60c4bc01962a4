package durable

import (
	"context"
	"time"
)

// awaitSetup holds the front's commands until the session's set-up is
// known, as an in-process front waits for its session's resources
// (engine.Session.Ready): a get_state sent right after ready shows the
// worker's system prompt, not an empty one. The set-up is the first
// step of a new session (ActivitySetup), so this waits for a worker to
// take it; a session that has emitted events has one (a worker of an
// earlier release answers without Ready). Only the front's context ends
// the wait.
func (f *front) awaitSetup(ctx context.Context) error {
	wait := 5 * time.Millisecond
	for {
		// A query fails until a worker has run the session's first
		// workflow task: asked again, as the pump does.
		if res, err := f.events(ctx); err == nil && (res.Ready || res.Last > 0) {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, f.o.Poll)
	}
}
