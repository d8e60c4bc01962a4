package rpc

import (
	"os"
	"testing"
)

// updateGolden is set from GOLDIE_UPDATE (goldie's own -update flag is
// global and collides with other packages' flags).
var updateGolden = new(bool)

func TestMain(m *testing.M) {
	*updateGolden = os.Getenv("GOLDIE_UPDATE") == "1"
	os.Exit(m.Run())
}
