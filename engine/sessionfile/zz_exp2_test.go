package sessionfile

import (
	"os"
	"testing"
	"time"
)

func TestExpLoadFile(t *testing.T) {
	p := os.Getenv("EXPFILE")
	if p == "" {
		t.Skip()
	}
	st := time.Now()
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v entries=%d warns=%d", time.Since(st), len(s.Entries), len(s.Warnings))
}
