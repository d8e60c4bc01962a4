package resources

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// maxFileBytes bounds what one instruction, skill or template file may
// hold: they become part of the system prompt or of a message.
const maxFileBytes = 1 << 20

// errNotRegular: a path that is a directory, a FIFO, a device or a socket.
var errNotRegular = errors.New("not a regular file")

// readFile is the one function through which this package reads a file:
// regular files only (a FIFO would block the loader, a device never ends)
// and at most maxFileBytes. It is the place to switch to a shared safe
// opener.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileBytes)
	}
	return b, nil
}
