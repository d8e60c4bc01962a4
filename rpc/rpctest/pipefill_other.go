//go:build !linux

package rpctest

import (
	"errors"
	"os"
)

// pipeBlocked cannot tell here.
func pipeBlocked(*os.File, int) (int, bool, error) {
	return 0, false, errors.New("only Linux shows where a process waits (use a [linux] condition)")
}
