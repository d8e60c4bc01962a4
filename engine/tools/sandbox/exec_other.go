//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// IsExec is always false here.
func IsExec([]string) bool { return false }

// ExecMain fails: there is no wrapper here.
func ExecMain() int { return 126 }

// Wrap fails: the kernel sandbox needs Linux.
func (c Config) Wrap(*exec.Cmd) error { return errors.New("the kernel sandbox needs Linux") }
