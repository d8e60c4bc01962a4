package rpctest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// pipeBlocked reports how many bytes of the pipe behind r are unread, and
// whether the process pid is blocked writing: the pipe holds something
// and one of its threads waits in a pipe write (its wchan, which names
// the kernel function: pipe_write, anon_pipe_write, pipe_wait_writable).
// A pipe's bytes alone cannot tell: a full pipe can hold less than its
// size, its pages partly used.
func pipeBlocked(r *os.File, pid int) (unread int, blocked bool, err error) {
	// SyscallConn, not Fd, which would switch r to blocking mode (and a
	// blocked read could no longer be ended by Close).
	rc, err := r.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var errno syscall.Errno
	if cerr := rc.Control(func(fd uintptr) {
		var n int32
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
		unread = int(n)
	}); cerr != nil {
		return 0, false, cerr
	}
	if errno != 0 {
		return 0, false, errno
	}
	if unread == 0 {
		return 0, false, nil
	}
	chans, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	known := false
	for _, c := range chans {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		w := string(b)
		if w != "" && w != "0" {
			known = true
		}
		if strings.Contains(w, "pipe_w") {
			return unread, true, nil
		}
	}
	if len(chans) > 0 && !known {
		return unread, false, errors.New("this kernel does not show where a thread waits (/proc/PID/task/*/wchan is 0)")
	}
	return unread, false, nil
}
