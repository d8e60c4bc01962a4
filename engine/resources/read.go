package resources

import "github.com/xcsh-go/xcsh/engine/safefile"

// maxFileBytes bounds what one instruction, skill or template file may
// hold: they become part of the system prompt or of a message.
const maxFileBytes = 1 << 20

// readFile is the one function through which this package reads a file:
// the agent's file rule (engine/safefile: regular files only, never
// blocking on a FIFO, its own streams refused) and at most maxFileBytes.
func readFile(path string) ([]byte, error) {
	return safefile.ReadFile(path, maxFileBytes)
}
