//go:build !unix

package rpctest

import "os"

// processGone reports whether pid has exited. Without kill(pid, 0) the best
// portable probe is whether the process can still be found; the package
// builds everywhere, but pidgone's scenarios assume a Unix system.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
