package engine

import (
	"bytes"
	"os"
	"testing"

	"github.com/xcsh-go/xcsh/engine/internal/codecgen"
)

// The committed codec is what its tables generate: a table changed
// without go generate fails here.
func TestCodecGenerated(t *testing.T) {
	t.Parallel()
	files, err := codecgen.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what internal/codecgen generates: run go generate ./engine/", name)
		}
	}
}
