//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// guardStdout makes the protocol's writer the only thing that can reach
// stdout: the writer gets a private copy of the stdout descriptor, and
// descriptor 1 (os.Stdout, fmt.Print, a library's stray line, children
// that inherit it) is pointed at stderr. restore undoes it.
func guardStdout(f *os.File) (out *os.File, restore func(), err error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(fd)
	saved, err := unix.Dup(int(f.Fd()))
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	unix.CloseOnExec(saved)
	if err := unix.Dup2(int(os.Stderr.Fd()), int(f.Fd())); err != nil {
		unix.Close(fd)
		unix.Close(saved)
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/stdout"), func() {
		_ = unix.Dup2(saved, int(f.Fd()))
		unix.Close(saved)
	}, nil
}
