//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// TestGuardStdout: after guardStdout only the returned file reaches the
// real stdout; os.Stdout (a stray print, a child that inherits it) goes to
// stderr. It runs in a child process, whose descriptors it may move.
func TestGuardStdout(t *testing.T) {
	if os.Getenv("XCSH_TEST_GUARD_STDOUT") == "1" {
		out, restore, err := guardStdout(os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("stray line")
		c := exec.Command("sh", "-c", "echo from a child")
		c.Stdout = os.Stdout
		_ = c.Run()
		fmt.Fprintln(out, `{"jsonrpc":"2.0"}`)
		out.Close()
		restore()
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardStdout$")
	cmd.Env = append(os.Environ(), "XCSH_TEST_GUARD_STDOUT=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	if got := stdout.String(); got != "{\"jsonrpc\":\"2.0\"}\n" {
		t.Errorf("stdout %q", got)
	}
	for _, want := range []string{"stray line", "from a child"} {
		if !bytes.Contains(stderr.Bytes(), []byte(want)) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}
