//go:build !linux

package main

import "os"

// growPipe is a no-op where pipe sizes cannot be set.
func growPipe(*os.File) {}

func pollableStdin(f *os.File) (*os.File, func()) { return f, func() {} }
