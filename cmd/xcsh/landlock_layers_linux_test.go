package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// landlockLayersMain is the scenarios' landlock-layers N PROGRAM ARGS...:
// it stacks N Landlock rulesets that allow everything on this process,
// then execs PROGRAM, which inherits them. The kernel allows 16: a
// program under 16 cannot add its own (landlock_restrict_self fails),
// which is how sandbox_landlock_failure_reported makes the agent's
// sandbox fail for real.
func landlockLayersMain() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: landlock-layers N PROGRAM [ARGS...]")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "landlock-layers:", err)
		os.Exit(2)
	}
	for i := 0; i < n; i++ {
		if err := landlock.V1.RestrictPaths(landlock.RWDirs("/")); err != nil {
			fmt.Fprintf(os.Stderr, "landlock-layers: layer %d: %v\n", i+1, err)
			os.Exit(97)
		}
	}
	path, err := exec.LookPath(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "landlock-layers:", err)
		os.Exit(127)
	}
	err = syscall.Exec(path, os.Args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "landlock-layers:", err)
	os.Exit(126)
}
