package rpctest

// Conditions on the file system and the process table: waitfile, pidgone.

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// conditionBound is how long waitfile and pidgone wait for their condition.
const conditionBound = 10 * time.Second

// pollEvery is the polling period of the file conditions. The file system
// gives no portable change notification to wait on; a short poll bounded in
// time is a condition wait, not a sleep standing in for one.
const pollEvery = 5 * time.Millisecond

// scriptWaitFile implements `waitfile path`: wait until path exists and is
// non-empty (a tool's child process wrote it), so a scenario can act while
// that process is known to be running; a socket counts once it exists (a
// server listens there).
func scriptWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile path (waits up to %v for a non-empty file or a socket)", conditionBound)
	}
	path := ts.MkAbs(args[0])
	// A replay cannot wait on a file: a running process's flow now
	// depends on one.
	for _, p := range harnessOf(ts).procs {
		if !p.closed {
			p.rec.refuse("waitfile (a replay waits on frames, not files)")
		}
	}
	deadline := time.Now().Add(conditionBound)
	for {
		if fi, err := os.Stat(path); err == nil && (fi.Size() > 0 || fi.Mode()&os.ModeSocket != 0) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not appear within %v", args[0], conditionBound)
		}
		time.Sleep(pollEvery)
	}
}

// scriptPidGone implements `pidgone pidfile`: the process whose id the file
// holds must be dead within the bound. A zombie counts as dead: it has
// exited, and whether it is reaped is up to whichever process inherited it
// (in a container, pid 1 may never reap).
func scriptPidGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pidgone pidfile (the process must vanish within %v)", conditionBound)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil || pid <= 0 {
		ts.Fatalf("pidgone: %s does not hold a pid: %v", args[0], err)
	}
	deadline := time.Now().Add(conditionBound)
	for {
		if processGone(pid) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("pidgone: process %d is still alive after %v", pid, conditionBound)
		}
		time.Sleep(pollEvery)
	}
}
