//go:build unix

package resources

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/xcsh-go/xcsh/engine/safefile"
)

// A FIFO named as a skill is refused at once; opening it must not wait
// for a writer.
func TestReadFileRefusesFIFO(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "SKILL.md")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := readFile(p); !errors.Is(err, safefile.ErrNotRegular) {
		t.Fatalf("got %v, want safefile.ErrNotRegular", err)
	}
}
