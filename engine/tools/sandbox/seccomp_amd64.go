//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// nativeTables: x86-64 (with x32), and i386, which an amd64 kernel runs
// too (its numbers from golang.org/x/sys/unix's zsysnum_linux_386.go).
func nativeTables() []syscallTable {
	return []syscallTable{{
		arch: unix.AUDIT_ARCH_X86_64, x32: true, ioctl: unix.SYS_IOCTL,
		metadata: []uint32{unix.SYS_CHMOD, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
			unix.SYS_CHOWN, unix.SYS_FCHOWN, unix.SYS_LCHOWN, unix.SYS_FCHOWNAT,
			unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_UTIMENSAT,
			unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
			unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT},
		ioUring: []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER},
	}, {
		arch: unix.AUDIT_ARCH_I386, ioctl: 54,
		metadata: []uint32{15, 94, 306, 452, // chmod, fchmod, fchmodat, fchmodat2
			182, 16, 95, 212, 198, 207, 298, // chown, lchown, fchown, their 32 variants, fchownat
			30, 271, 299, 320, 412, // utime, utimes, futimesat, utimensat, utimensat_time64
			226, 227, 228, 463, 235, 236, 237, 466}, // setxattr…, setxattrat, removexattr…, removexattrat
		ioUring: []uint32{425, 426, 427},
	}}
}
