//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchOutput reports when the host has closed its end of f (the read end
// of a stdout pipe, a socket): gone is closed then. A write would find out
// too, with EPIPE, but a turn can run for minutes without writing (a long
// command), and its side effects must not happen after the host has gone.
// One goroutine waits in poll(2) for the error or hang-up the kernel
// reports on f, with no event asked for; stop ends it.
func watchOutput(f *os.File) (gone <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return ch, func() {} // a file or a terminal: nobody closes its end
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return ch, func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer unix.Close(p[0])
		fds := []unix.PollFd{{Fd: int32(f.Fd())}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return
			}
			if fds[1].Revents != 0 {
				return // stopped
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				close(ch)
				return
			}
		}
	}()
	return ch, func() {
		unix.Write(p[1], []byte{0})
		<-done
		unix.Close(p[1])
	}
}
