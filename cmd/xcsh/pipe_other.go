//go:build !linux

package main

import "os"

// growPipe is a no-op where pipe sizes cannot be set.
func growPipe(*os.File) {}

func pollableStdin(f *os.File) (*os.File, func()) { return f, func() {} }

// pipeFull reports nothing where a pipe's fill cannot be read: the RPC
// writer never reports a backlog, so deltas are never merged.
func pipeFull(*os.File) func(n int) bool { return nil }
