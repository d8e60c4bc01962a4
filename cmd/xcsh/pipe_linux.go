package main

import (
	"os"
	"syscall"
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
