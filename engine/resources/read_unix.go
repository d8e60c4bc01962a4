//go:build unix

package resources

import (
	"os"
	"syscall"
)

// openFlags open without blocking, so a FIFO named as a skill returns at
// once (and is then refused as not regular).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
