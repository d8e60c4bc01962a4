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
	// Non-blocking, so opening a FIFO returns at once; the check below
	// then refuses it.
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileBytes)
	}
	// The size is known: one read, not one more to meet the end (a file
	// that grows meanwhile is read up to the size it had).
	b := make([]byte, fi.Size())
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return b[:n], nil
}
