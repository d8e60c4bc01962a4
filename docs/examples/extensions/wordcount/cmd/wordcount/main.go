// Command wordcount is the example word_count extension (package
// wordcount) as a program xcsh can run.
package main

import (
	"os"

	"github.com/xcsh-go/xcsh/docs/examples/extensions/wordcount"
	"github.com/xcsh-go/xcsh/engine/extension/extkit"
)

func main() { os.Exit(extkit.Run(wordcount.Extension())) }
