//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// nativeTables: arm64, and 32-bit arm, which an arm64 kernel may run too
// (its numbers from golang.org/x/sys/unix's zsysnum_linux_arm.go).
func nativeTables() []syscallTable {
	return []syscallTable{{
		arch: unix.AUDIT_ARCH_AARCH64, ioctl: unix.SYS_IOCTL,
		metadata: []uint32{unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
			unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT,
			unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
			unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT},
		ioUring: []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER},
	}, {
		arch: unix.AUDIT_ARCH_ARM, ioctl: 54,
		metadata: []uint32{15, 94, 333, 452, // chmod, fchmod, fchmodat, fchmodat2
			182, 16, 95, 212, 198, 207, 325, // chown, lchown, fchown, their 32 variants, fchownat
			269, 326, 348, 412, // utimes, futimesat, utimensat, utimensat_time64
			226, 227, 228, 463, 235, 236, 237, 466}, // setxattr…, setxattrat, removexattr…, removexattrat
		ioUring: []uint32{425, 426, 427},
	}}
}
