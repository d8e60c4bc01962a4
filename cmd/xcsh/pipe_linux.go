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
