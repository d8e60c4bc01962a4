//go:build !linux

package main

import "io"

// protectAgent has no counterpart here (PR_SET_DUMPABLE is Linux's).
func protectAgent(func(string) string, io.Writer) {}

func dumpable() bool { return true }
