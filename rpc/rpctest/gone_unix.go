//go:build unix

package rpctest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processGone reports whether pid has exited. A zombie counts: it has
// exited, and whether it is reaped is up to whichever process inherited it
// (in a container, pid 1 may never reap).
func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH) || isZombie(pid)
}

// isZombie reports whether /proc says pid has exited but is not reaped.
// Without /proc (the BSDs, macOS) it says no, so pidgone then waits for
// the process to be reaped.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself
	// contain spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
