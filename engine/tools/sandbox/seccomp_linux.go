package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The read-only mode's seccomp filter. Landlock confines what a command
// may write but not the metadata of what it may read: chmod, chown, utime
// and extended attributes work on any file the user owns. In read-only
// nothing may change, so the filter refuses those system calls outright
// (no path to look at: seccomp cannot read a path argument), with EROFS,
// the answer of a read-only file system. It also refuses the ioctls that
// set inode flags (chattr) and io_uring, whose operations (setxattr among
// them) no seccomp filter sees. workspace-write needs the paths, and gets
// read-only mounts instead (Mounts).
//
// The program is classic BPF built here (golang.org/x/sys/unix has the
// constants; libseccomp would need cgo): per architecture the process can
// run system calls of (amd64 also runs i386 and x32 ones; arm64 arm ones),
// a list of numbers, each a compare and a return.

// seccompData offsets (struct seccomp_data: nr, arch, ip, args[6]).
const (
	offNr    = 0
	offArch  = 4
	offArg1  = 16 + 8 // args[1], its low 32 bits on a little-endian machine
	x32Bit   = 0x40000000
	retAllow = unix.SECCOMP_RET_ALLOW
)

// Inode-flag ioctls (chattr): FS_IOC_SETFLAGS in its 64- and 32-bit
// encodings, and FS_IOC_FSSETXATTR.
var flagIoctls = []uint32{0x40086602, 0x40046602, 0x401c5820}

// syscallTable is what the filter refuses on one architecture.
type syscallTable struct {
	arch     uint32
	metadata []uint32 // refused with EROFS
	ioUring  []uint32 // refused with EPERM (as Docker's profile does: programs fall back)
	ioctl    uint32
	x32      bool // the x32 bit may be set on the number (amd64)
}

// errNoFilter is returned where no table exists for the architecture.
var errNoFilter = errors.New("the read-only mode's system call filter is not built for this architecture")

// metadataFilter builds the program for tables. A jump's offset is one
// byte: each architecture's block stays well under 256 instructions
// (checked by TestMetadataFilterShape).
func metadataFilter(tables []syscallTable) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
	}
	deny := func(errno unix.Errno) unix.SockFilter {
		return stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(errno))
	}
	prog := []unix.SockFilter{stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch)}
	for _, t := range tables {
		var b []unix.SockFilter
		b = append(b, stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr))
		if t.x32 {
			// x32 numbers are the x86-64 ones with this bit set.
			b = append(b, stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, ^uint32(x32Bit)))
		}
		for _, nr := range t.metadata {
			b = append(b, jeq(nr, 0, 1), deny(unix.EROFS))
		}
		for _, nr := range t.ioUring {
			b = append(b, jeq(nr, 0, 1), deny(unix.EPERM))
		}
		// ioctl: look at the request.
		b = append(b, jeq(t.ioctl, 0, uint8(1+2*len(flagIoctls))))
		b = append(b, stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArg1))
		for _, cmd := range flagIoctls {
			b = append(b, jeq(cmd, 0, 1), deny(unix.EROFS))
		}
		b = append(b, stmt(unix.BPF_RET|unix.BPF_K, retAllow))
		// This architecture's block, else the next test.
		prog = append(prog, jeq(t.arch, 0, uint8(len(b))))
		prog = append(prog, b...)
	}
	return append(prog, stmt(unix.BPF_RET|unix.BPF_K, retAllow))
}

// installMetadataFilter applies the read-only filter to every thread of
// the calling process, and so to every process it starts afterwards (a
// filter is inherited and cannot be removed).
func installMetadataFilter() error {
	tables := nativeTables()
	if tables == nil {
		return errNoFilter
	}
	prog := metadataFilter(tables)
	// A filter needs no_new_privs (Landlock has set it when it applied).
	if err := ll.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("installing the seccomp filter: thread %d could not take it", r)
	}
	return nil
}
