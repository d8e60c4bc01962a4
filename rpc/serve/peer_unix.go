//go:build unix

package serve

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the other end of a Unix socket has closed it
// entirely (the client died or closed its connection), as opposed to only
// its writing half (the end of its input, after which it still reads):
// the socket then polls as hung up.
func peerClosed(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	hup := false
	_ = rc.Control(func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(p, 0); err == nil && n > 0 {
			hup = p[0].Revents&unix.POLLHUP != 0
		}
	})
	return hup
}
