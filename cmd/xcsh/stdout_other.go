//go:build !unix

package main

import "os"

// guardStdout is a no-op where descriptors cannot be moved: the protocol
// writer is still the only code of ours that writes stdout.
func guardStdout(f *os.File) (*os.File, func(), error) { return f, func() {}, nil }
