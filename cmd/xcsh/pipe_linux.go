package main

import (
	"os"
	"syscall"
	"unsafe"
)

// growPipe enlarges the pipe behind f to 1 MiB when f is a pipe. A long
// streamed reply writes frames of tens of kilobytes; with the default
// 64 KiB pipe every frame costs the host a wake-up, which dominates the
// stream's time. Failure (not a pipe, a lower system limit) is harmless.
func growPipe(f *os.File) {
	const fSetPipeSz = 1031 // F_SETPIPE_SZ
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	for size := 1 << 20; size >= 128<<10; size /= 2 {
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSz, uintptr(size)); errno == 0 {
			return
		}
	}
}

// pollableStdin returns stdin read through the runtime's poller when it is
// a pipe: a read then parks the reader goroutine instead of blocking its
// thread, so the goroutine it hands a command to runs at once rather than
// after the runtime notices the blocked thread (measured: a get_state round
// trip of 35 µs instead of 90). The read end of a pipe is the agent's own,
// so making it non-blocking disturbs no one; restore puts it back.
func pollableStdin(f *os.File) (r *os.File, restore func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return f, func() {}
	}
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f, func() {}
	}
	return os.NewFile(uintptr(fd), "/dev/stdin"), func() { _ = syscall.SetNonblock(fd, false) }
}

// pipeFull returns, when f is a pipe, a function that says whether a frame
// of n bytes would have to wait for the host: what the host has not read
// yet (FIONREAD, which Linux answers on the write end too) and n do not
// fit in the pipe. The RPC writer calls it under its lock before each
// frame, so the cached size needs no lock; it is read again before saying
// "full" (growPipe may have grown the pipe). Nil when f is not a pipe:
// files and terminals never make the host wait in this sense.
//
// A page of the pipe counts as taken already: the kernel fills a pipe by
// pages, and a small frame (an ACP chunk, a lean delta) was seen to wait
// with a few hundred bytes still free, so an exact count let a stalled
// host go unnoticed.
const pipeSlack = 4096

func pipeFull(f *os.File) func(n int) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	fd := f.Fd()
	pipeSize := func() int {
		const fGetPipeSz = 1032 // F_GETPIPE_SZ
		s, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
		if errno != 0 {
			return 1 << 30 // unknown: never full
		}
		return int(s)
	}
	size := pipeSize()
	return func(n int) bool {
		var unread int32
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&unread))); errno != 0 {
			return false
		}
		if int(unread)+n <= size-pipeSlack {
			return false
		}
		size = pipeSize()
		return int(unread)+n > size-pipeSlack
	}
}
