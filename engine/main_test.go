package engine

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// Every engine test checks that nothing posts to the executor from a
	// function running on it (see serial.checkReentry).
	checkReentry = true
	os.Exit(m.Run())
}
