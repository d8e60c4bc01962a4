package shellexec

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// sandboxed starts a supervisor that confines commands to ws with the
// network off, or skips when the kernel cannot.
func sandboxed(t testing.TB, ws string) *Supervisor {
	t.Helper()
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel")
	}
	cfg := sandbox.Config{Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{ws}, Devices: []string{"/dev/null"}},
		Landlock: true, NetNS: true}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSupervisor(SupervisorConfig{Config: raw, SysProcAttr: sandbox.NamespaceAttr(), Required: true})
	info, err := s.Start()
	if err != nil {
		t.Skipf("no sandboxed supervisor here: %v", err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	var e sandbox.Enforcement
	if err := json.Unmarshal(info, &e); err != nil || e.Filesystem != "landlock" || e.Network != "namespace" {
		t.Fatalf("enforcement %s %v", info, err)
	}
	return s
}

// The supervisor applies the sandbox to itself, so every command and its
// children are held by it: writes only under the roots (and /dev/null),
// a network namespace with only a loopback, and abort still reaches a
// group that ignores SIGTERM.
func TestSandboxedCommands(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{ws, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := sandboxed(t, ws)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	cmd := fmt.Sprintf(`touch in && echo in-ok; touch %[1]s/x || echo out-denied; sh -c 'touch %[1]s/y' || echo child-denied
ln -s %[1]s esc; echo z > esc/z || echo link-denied; echo v > /dev/null && echo devnull-ok
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '
(exec 3<>/dev/tcp/127.0.0.1/%[2]d) 2>/dev/null && echo reached || echo unreachable`, out, port)
	r, err := Run(context.Background(), cmd, Options{Cwd: ws, via: s})
	if err != nil {
		t.Fatal(err)
	}
	want := "in-ok\nout-denied\nchild-denied\nlink-denied\ndevnull-ok\nlo\nunreachable\n"
	var kept []string
	for _, line := range strings.SplitAfter(r.Output, "\n") {
		if !strings.Contains(line, "Permission denied") {
			kept = append(kept, line)
		}
	}
	if got := strings.Join(kept, ""); got != want {
		t.Fatalf("got\n%s\nwant\n%s", r.Output, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("written outside: %v", entries)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		r, _ := Run(ctx, termIgnoring, Options{Cwd: ws, via: s})
		done <- r
	}()
	pgid := readPid(t, filepath.Join(ws, "pid"))
	cancel()
	select {
	case r := <-done:
		if !r.Cancelled {
			t.Fatalf("got %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("abort did not end a sandboxed command")
	}
	pgGone(t, pgid)
}

// BenchmarkStartSandboxed is BenchmarkStart through a sandboxed
// supervisor: the sandbox costs nothing per command (it is applied once).
func BenchmarkStartSandboxed(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := sandboxed(b, ws)
	o := Options{Cwd: ws, via: s}
	for b.Loop() {
		if _, err := Run(context.Background(), "true", o); err != nil {
			b.Fatal(err)
		}
	}
}
