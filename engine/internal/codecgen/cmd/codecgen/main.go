// Command codecgen writes package engine's generated codec files into the
// current directory (go generate runs it in engine).
package main

import (
	"fmt"
	"os"

	"github.com/xcsh-go/xcsh/engine/internal/codecgen"
)

func main() {
	files, err := codecgen.Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
	for name, src := range files {
		if err := os.WriteFile(name, src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "codecgen:", err)
			os.Exit(1)
		}
	}
}
