//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
	"time"

	"github.com/xcsh-go/xcsh/engine/reaper"
)

// termGrace is how long a server has after SIGTERM before its reaper
// kills it and everything it started: under the SDK's TerminateDuration
// (1 s), so the reaper has cleaned up and exited before the SDK's own
// SIGKILL, which would hit the reaper alone.
const termGrace = 500 * time.Millisecond

// setProcAttr puts a server in its own process group, so stopping it
// stops what it started (npx runs node, uvx runs python), and under a
// reaper where there is one (engine/reaper), so what it started that left
// the group (setsid, a double fork) is stopped too, and all of it when the
// agent dies, even by SIGKILL.
func setProcAttr(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(c.SysProcAttr)
	reaper.Wrap(c, termGrace)
}

// killGroup kills the server's process group, and under a reaper
// everything the server started.
func killGroup(c *exec.Cmd) { reaper.Signal(c, syscall.SIGKILL) }
