package rpctest

// The stderr of a process started by rpc start or epipe start.

import (
	"fmt"
	"os"
)

// stderrFile is a process's stderr. The child writes into a file, not into
// a pipe that a goroutine of ours copies from: then whatever it wrote to
// stderr before a stdout frame is readable once rpc wait has seen that
// frame, so a failure dump shows it without a race against the copier.
type stderrFile struct {
	path string // removed by release
	kept string // the contents, once released
	gone bool   // release has run
}

// newStderrFile creates the file in the system's temporary directory, not
// in $WORK, where scenarios list and search files. The caller passes the
// returned *os.File to the child and closes it after the start.
func newStderrFile() (*stderrFile, *os.File, error) {
	f, err := os.CreateTemp("", "rpctest-stderr-*")
	if err != nil {
		return nil, nil, err
	}
	return &stderrFile{path: f.Name()}, f, nil
}

func (s *stderrFile) String() string {
	if s.gone {
		return s.kept
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Sprintf("(reading stderr: %v)\n", err)
	}
	return string(b)
}

// release keeps the contents and removes the file. It runs once the child
// has exited; a grandchild still holding stderr then writes to nobody.
func (s *stderrFile) release() {
	if s.gone {
		return
	}
	s.kept = s.String()
	s.gone = true
	os.Remove(s.path)
}
