// Command xcsh-testext is the scripted test extension (package exttest)
// as a program: xcsh-testext PLAN.json. The scenarios install the test
// binary under this name instead; the benchmarks build this one.
package main

import "github.com/xcsh-go/xcsh/engine/extension/exttest"

func main() { exttest.Main() }
