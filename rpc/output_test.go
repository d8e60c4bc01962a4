package rpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// brokenPipe accepts the first write (ready) and fails every later one
// with EPIPE, as a host that closed its end of stdout.
type brokenPipe struct {
	mu     sync.Mutex
	writes int
	buf    bytes.Buffer
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	if b.writes > 1 {
		return 0, syscall.EPIPE
	}
	return b.buf.Write(p)
}

// A failed stdout write ends Run while stdin is still open, with a cause
// that names both the closed output and the write error.
func TestOutputFailureEndsRun(t *testing.T) {
	t.Parallel()
	out := &brokenPipe{}
	var log syncBuffer
	srv := NewServer(out, Options{Version: "0.0.0-test", Log: &log})
	srv.Attach(engine.New(engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, Sink: srv, SessionID: "0000000000000001"}))
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), inR) }()
	if _, err := inW.Write([]byte(`{"id":"s1","type":"get_state"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrOutputClosed) || !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end after stdout failed")
	}
	if got := log.String(); got != "xcsh: stdout write failed: broken pipe; exiting\n" {
		t.Fatalf("log %q", got)
	}
}

// The server is a Backlog Sink: Backlogged says whether the last frame
// found stdout full (Options.OutputFull), and stays until the next frame.
func TestBackloggedFollowsTheLastFrame(t *testing.T) {
	t.Parallel()
	var full bool
	var sizes []int
	srv := NewServer(io.Discard, Options{OutputFull: func(n int) bool { sizes = append(sizes, n); return full }})
	var _ engine.Backlog = srv
	if srv.Backlogged() {
		t.Fatal("backlogged before any frame")
	}
	full = true
	srv.Event(engine.TurnStart{})
	if !srv.Backlogged() {
		t.Error("a frame that found stdout full does not show a backlog")
	}
	full = false
	srv.Event(engine.TurnStart{})
	if srv.Backlogged() {
		t.Error("a frame that fit still shows a backlog")
	}
	if len(sizes) != 2 || sizes[0] != len(`{"type":"turn_start"}`)+1 {
		t.Errorf("OutputFull asked about %v", sizes)
	}
	// Without OutputFull there is never a backlog.
	if NewServer(io.Discard, Options{}).Backlogged() {
		t.Error("backlogged without a probe")
	}
}
