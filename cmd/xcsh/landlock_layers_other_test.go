//go:build !linux

package main

import (
	"fmt"
	"os"
)

func landlockLayersMain() {
	fmt.Fprintln(os.Stderr, "landlock-layers: Linux only")
	os.Exit(97)
}
