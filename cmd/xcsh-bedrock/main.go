// Command xcsh-bedrock is the helper process that serves xcsh's Amazon
// Bedrock models (the bedrock-converse-stream API): xcsh starts it on the
// first call of a Bedrock model and talks to it over its stdin and stdout
// (engine/provider/subproc), so that AWS's SDK, whose packages take
// milliseconds to initialise, is linked here and not into xcsh, whose
// every start would pay for them. It serves until its stdin ends.
//
// It is installed beside xcsh (go install ./cmd/... or a release archive)
// or anywhere on $PATH; it is not meant to be run by hand.
package main

import (
	"fmt"
	"os"
	"os/signal"

	"github.com/xcsh-go/xcsh/engine/provider/bedrock"
	"github.com/xcsh-go/xcsh/engine/provider/subproc"
)

func main() { os.Exit(run()) }

func run() int {
	// Ctrl-C in a terminal reaches the whole process group; aborting a
	// call is xcsh's to decide, and it cancels the call on the wire.
	signal.Ignore(os.Interrupt)
	p := bedrock.New(bedrock.Options{})
	if err := subproc.Serve(os.Stdin, os.Stdout, p.StreamKey); err != nil {
		fmt.Fprintln(os.Stderr, "xcsh-bedrock:", err)
		return 1
	}
	return 0
}
