package acp

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

// An attached client that stops reading never holds the session: past its
// queue it is detached, and once it reads again it gets what was queued,
// then _xcsh/session/lagged (so it attaches again).
func TestPeerThatStopsReadingIsDetachedLagged(t *testing.T) {
	pr, pw := io.Pipe()
	srv := NewServer(pw, Options{})
	ss := &session{id: "s1"}
	p := newPeer(srv, ss, roleObserver)
	ss.peers = []*peer{p}
	srv.attached[ss] = p

	// Nobody reads the pipe: the peer's goroutine blocks on its first
	// write, and its queue fills. The producer never blocks.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < peerQueueFrames+10; i++ {
			p.frame([]byte(`{"n":1}` + "\n"))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a peer that does not read blocked its producer")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ss.peersNow()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the lagging peer is still attached")
		}
		time.Sleep(time.Millisecond)
	}
	if !p.backlogged() {
		t.Error("a full queue does not report a backlog")
	}

	// It reads again: the frames queued before the overflow, then lagged.
	sc := bufio.NewScanner(pr)
	frames := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, notifyLagged) {
			if !strings.Contains(line, `"sessionId":"s1"`) {
				t.Errorf("lagged notice without its session: %s", line)
			}
			break
		}
		frames++
	}
	if frames < peerQueueFrames || frames > peerQueueFrames+1 {
		t.Errorf("%d frames before lagged, want the %d queued (and the one being written)", frames, peerQueueFrames)
	}
	<-p.done
	srv.mu.Lock()
	left := len(srv.attached)
	srv.mu.Unlock()
	if left != 0 {
		t.Error("the connection still lists the attachment")
	}
}
