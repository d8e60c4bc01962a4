// Command xcsh is a headless coding agent; `xcsh --mode rpc` speaks the
// newline-delimited JSON RPC protocol on stdio.
package main

import "os"

func main() { os.Exit(run()) }
