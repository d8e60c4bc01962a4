package rpc

import (
	"os"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// updateGolden is set from GOLDIE_UPDATE (goldie's own -update flag is
// global and collides with other packages' flags).
var updateGolden = new(bool)

func TestMain(m *testing.M) {
	*updateGolden = os.Getenv("GOLDIE_UPDATE") == "1"
	// The handlers call the session from the executor: the engine's check
	// that nothing posts from there (a latent deadlock) runs here too.
	engine.CheckReentry(true)
	os.Exit(m.Run())
}
