//go:build !linux

package reaper

import (
	"os/exec"
	"time"
)

// Main is never reached here: Wrap does not wrap off Linux.
func Main() int { return 1 }

// wrap leaves cmd alone: there is no child subreaper off Linux.
func wrap(*exec.Cmd, time.Duration) {}
