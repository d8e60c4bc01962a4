package client

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// xcshBin is the real binary, built once for the package's tests.
var xcshBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "xcsh-client-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	xcshBin = filepath.Join(dir, "xcsh")
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	build := exec.Command("go", "build", "-o", xcshBin, "./cmd/xcsh")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building xcsh:", err)
		return 1
	}
	return m.Run()
}

// testTimeout bounds every wait of a test; nothing sleeps.
const testTimeout = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startAgent starts the real binary with the fake provider in a fresh
// directory, with its own HOME and agent directory, and closes it at the
// end of the test. files are written into the directory first.
func startAgent(t *testing.T, files map[string]string, args ...string) (*Client, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Start(testCtx(t), Options{
		Path: xcshBin,
		Args: append([]string{"--provider", "fake"}, args...),
		Env: []string{
			"HOME=" + filepath.Join(dir, ".home"),
			"PI_CODING_AGENT_DIR=" + filepath.Join(dir, ".agent"),
			"XCSH_DETERMINISTIC=1",
		},
		Dir:        dir,
		Timeout:    testTimeout,
		CloseGrace: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dir
}

// collect reads events until one matches stop and returns them all.
func collect(t *testing.T, ch <-chan Event, stop func(Event) bool) []Event {
	t.Helper()
	var evs []Event
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("events ended before the awaited one; saw %d", len(evs))
			}
			evs = append(evs, ev)
			if stop(ev) {
				return evs
			}
		case <-timer.C:
			t.Fatalf("no awaited event within %v; saw %s", testTimeout, types(evs))
		}
	}
}

func types(evs []Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, ",")
}

func assistantDeltas(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		if kind, d, ok := e.AssistantEvent(); ok && kind == "text_delta" {
			b.WriteString(d)
		}
	}
	return b.String()
}

func isUpdate(kind string) func(Event) bool {
	return func(e Event) bool {
		k, _, ok := e.AssistantEvent()
		return ok && k == kind
	}
}

func wantCommandError(t *testing.T, err error, command, msgPart string) *CommandError {
	t.Helper()
	ce, ok := err.(*CommandError)
	if !ok {
		t.Fatalf("err = %v (%T), want a *CommandError", err, err)
	}
	if ce.Command != command || !strings.Contains(ce.Message, msgPart) {
		t.Fatalf("err = %+v, want command %q and a message containing %q", ce, command, msgPart)
	}
	return ce
}
