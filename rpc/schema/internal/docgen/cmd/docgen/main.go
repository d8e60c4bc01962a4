// Command docgen writes rpc/schema/docs_gen.go (go generate in rpc/schema).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/xcsh-go/xcsh/rpc/schema/internal/docgen"
)

func main() {
	// go generate runs in rpc/schema: the module root is two levels up.
	root, err := filepath.Abs("../..")
	if err == nil {
		var src []byte
		if src, err = docgen.Generate(root, "github.com/xcsh-go/xcsh"); err == nil {
			err = os.WriteFile("docs_gen.go", src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
