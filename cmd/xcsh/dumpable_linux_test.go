package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// protectAgent leaves the agent not dumpable, unless XCSH_DUMPABLE=1. It
// runs in a child (this test binary again): the test process must stay
// dumpable for the tests that start namespaced supervisors.
func TestProtectAgent(t *testing.T) {
	if os.Getenv("XCSH_TEST_PROTECT_CHILD") != "" {
		protectAgent(os.Getenv, os.Stderr)
		fmt.Println("dumpable", dumpable())
		os.Exit(0)
	}
	for _, c := range []struct{ env, want string }{{"", "dumpable false"}, {"0", "dumpable false"}, {"1", "dumpable true"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProtectAgent$")
		cmd.Env = append(os.Environ(), "XCSH_TEST_PROTECT_CHILD=1", dumpableEnv+"="+c.env)
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != c.want {
			t.Errorf("%s=%q: %q, %v; want %q", dumpableEnv, c.env, got, err, c.want)
		}
	}
}
