package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Caps on the files the prompt is built from: they are read whole at
// start-up, and a real one is a few KiB.
const (
	maxPromptFileBytes  = 16 << 20
	maxContextFileBytes = 4 << 20
)

// textOrFile returns the content of the file v names, else v itself (the
// prompt flags take literal text or a path). The file is read under
// engine/safefile's rule: a path it refuses (a FIFO, a device, the
// agent's own streams, a file over 16 MiB) is not read; v is then taken as
// text, as the original does with a file it cannot read, and stderr says
// so.
func textOrFile(flag, v string, stderr io.Writer) string {
	if v == "" {
		return ""
	}
	b, err := safefile.ReadFile(v, maxPromptFileBytes)
	if err == nil {
		return string(b)
	}
	var r *safefile.Refusal
	if errors.As(err, &r) {
		fmt.Fprintf(stderr, "xcsh: %s: cannot read %s: %s; using the text as given\n", flag, v, r.Reason)
	}
	return v
}

// raiseMemoryLimit makes room in the heap for the session file at path,
// before it is loaded.
// The default soft limit (defaultMemoryLimit) is meant to bound garbage;
// a session larger than it kept the collector running without pause while
// it loaded (a 1.2 GB session took 33 s of CPU instead of 14). When the
// limit is ours (GOMEMLIMIT unset), it is raised to the file's size (about
// what its entries take) plus the default, so garbage keeps the headroom
// it has with a small session. It is never lowered.
func raiseMemoryLimit(path string) {
	if os.Getenv("GOMEMLIMIT") == "" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			if want := defaultMemoryLimit + fi.Size(); want > debug.SetMemoryLimit(-1) {
				debug.SetMemoryLimit(want)
			}
		}
	}
}
