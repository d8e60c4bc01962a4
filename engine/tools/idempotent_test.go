package tools

import (
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// Only the tools that just read may run again after a crash
// (engine.IdempotentTool, engine/durable).
func TestIdempotentTools(t *testing.T) {
	want := map[string]bool{"read": true, "grep": true, "find": true}
	for _, tool := range Builtins(Options{Cwd: t.TempDir(), HostUI: true}) {
		if got := engine.IsIdempotent(tool); got != want[tool.Name()] {
			t.Errorf("%s: idempotent %v, want %v", tool.Name(), got, want[tool.Name()])
		}
	}
}
