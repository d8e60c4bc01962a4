package acp

import (
	"os"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// TestMain turns the engine's re-entry check on: a post to a session's
// executor from a function running on it panics in these tests.
func TestMain(m *testing.M) {
	engine.CheckReentry(true)
	os.Exit(m.Run())
}
