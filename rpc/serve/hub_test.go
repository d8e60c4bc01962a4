package serve

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/xcsh-go/xcsh/engine"
)

// The hub without a session: events and answers go in with Event and
// Send, attachments with join, and each subscriber's frames come out of
// take, as its connection's writer would read them.

func newTestHub(t *testing.T, keep Limits) (*Server, *hub) {
	t.Helper()
	srv := New(Options{Keep: keep, Epoch: "e1"})
	h := newHub(srv, 0)
	h.id = "s1"
	return srv, h
}

func newTestClient(t *testing.T, srv *Server) *client {
	t.Helper()
	c, err := srv.newClient(io.Discard, func() {}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// joinTest attaches a new subscriber of c to h (from: nil, live).
func joinTest(t *testing.T, h *hub, c *client, sb *sub, from *cursor) *sub {
	t.Helper()
	sb.c = c
	if err := h.join(sb, from, nil, func() []engine.Message { return nil }); err != nil {
		t.Fatal(err)
	}
	return sb
}

// takeAll is every frame s has to deliver now, and whether it lagged.
func takeAll(s *sub) (frames []string, lagged bool) {
	for {
		out, lag := s.take(nil)
		for _, f := range out {
			frames = append(frames, string(f))
		}
		if lag {
			return frames, true
		}
		if len(out) == 0 {
			return frames, false
		}
	}
}

// directOf empties and returns what was queued for c outside any session.
func directOf(c *client) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, it := range c.direct {
		out = append(out, string(it.frame))
	}
	c.direct = nil
	return out
}

// answerTo sends an answer frame for client c through the hub, as the
// protocol core does.
func answerTo(h *hub, c *client, id string) {
	b := []byte(`{"id":"` + id + `","type":"response","command":"get_state","success":true}` + "\n")
	h.Send(&b, c)
}

func TestDecorate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		frame, id string
		seq       uint64
		want      string
	}{
		{`{"type":"agent_start"}` + "\n", "s1", 7, `{"type":"agent_start","sessionId":"s1","seq":7}` + "\n"},
		{`{"id":"a","type":"response"}` + "\n", "s1", 0, `{"id":"a","type":"response","sessionId":"s1"}` + "\n"},
		{"{}\n", "s1", 1, `{"sessionId":"s1","seq":1}` + "\n"},
		{`{"type":"x"}`, "s1", 2, `{"type":"x","sessionId":"s1","seq":2}` + "\n"},
		{`{"type":"x"}` + "\n", `a"b`, 0, `{"type":"x","sessionId":"a\"b"}` + "\n"},
		{"[1]\n", "s1", 3, "[1]\n"}, // not an object: as it is
		{"\n", "s1", 3, "\n"},
	} {
		if got := string(decorate([]byte(tc.frame), tc.id, tc.seq)); got != tc.want {
			t.Errorf("decorate(%q, %q, %d) = %q, want %q", tc.frame, tc.id, tc.seq, got, tc.want)
		}
	}
}

func TestHubNumbersEventsAndAddressesAnswers(t *testing.T) {
	t.Parallel()
	srv, h := newTestHub(t, Limits{})
	a, b := newTestClient(t, srv), newTestClient(t, srv)
	sa := joinTest(t, h, a, &sub{role: controller}, nil) // event 1: a arrives
	sb := joinTest(t, h, b, &sub{role: observer}, nil)   // event 2: b arrives
	answerTo(h, a, "qa")
	h.Event(engine.AgentStart{})
	answerTo(h, b, "qb")
	h.Event(engine.TurnStart{})

	gotA, _ := takeAll(sa)
	wantA := []string{
		`{"type":"clients_changed","controllers":1,"observers":0,"sessionId":"s1","seq":1}` + "\n",
		`{"type":"clients_changed","controllers":1,"observers":1,"sessionId":"s1","seq":2}` + "\n",
		`{"id":"qa","type":"response","command":"get_state","success":true,"sessionId":"s1"}` + "\n",
		`{"type":"agent_start","sessionId":"s1","seq":3}` + "\n",
		`{"type":"turn_start","sessionId":"s1","seq":4}` + "\n",
	}
	if strings.Join(gotA, "") != strings.Join(wantA, "") {
		t.Errorf("a reads\n%s\nwant\n%s", strings.Join(gotA, ""), strings.Join(wantA, ""))
	}
	// b arrived after event 1: its own arrival, its answer in its place,
	// not a's.
	gotB, _ := takeAll(sb)
	wantB := []string{wantA[1],
		`{"type":"agent_start","sessionId":"s1","seq":3}` + "\n",
		`{"id":"qb","type":"response","command":"get_state","success":true,"sessionId":"s1"}` + "\n",
		`{"type":"turn_start","sessionId":"s1","seq":4}` + "\n",
	}
	if strings.Join(gotB, "") != strings.Join(wantB, "") {
		t.Errorf("b reads\n%s\nwant\n%s", strings.Join(gotB, ""), strings.Join(wantB, ""))
	}
	if sa.sent != 4 || sb.sent != 4 {
		t.Errorf("sent = %d, %d; want 4, 4", sa.sent, sb.sent)
	}
}

func TestHubBareSubscriberReadsModeRPCFrames(t *testing.T) {
	t.Parallel()
	srv, h := newTestHub(t, Limits{})
	c, o := newTestClient(t, srv), newTestClient(t, srv)
	own := joinTest(t, h, c, &sub{role: controller, bare: true, blocking: true}, nil)
	other := joinTest(t, h, o, &sub{role: observer}, nil)
	answerTo(h, c, "q1")
	h.Event(engine.AgentStart{})
	h.resolved("ui_1")
	got, _ := takeAll(own)
	want := `{"id":"q1","type":"response","command":"get_state","success":true}` + "\n" + `{"type":"agent_start"}` + "\n"
	if strings.Join(got, "") != want {
		t.Errorf("the own session reads\n%s\nwant (no sessionId, seq, clients_changed or resolved)\n%s", strings.Join(got, ""), want)
	}
	got, _ = takeAll(other)
	want = `{"type":"clients_changed","controllers":1,"observers":1,"sessionId":"s1","seq":1}` + "\n" +
		`{"type":"agent_start","sessionId":"s1","seq":2}` + "\n" +
		`{"type":"resolved","id":"ui_1","sessionId":"s1","seq":3}` + "\n"
	if strings.Join(got, "") != want {
		t.Errorf("an attached client reads\n%s\nwant\n%s", strings.Join(got, ""), want)
	}
}

// events appends n agent_start events.
func events(h *hub, n int) {
	for range n {
		h.Event(engine.AgentStart{})
	}
}

func TestHubReplayFromCursor(t *testing.T) {
	t.Parallel()
	seqs := func(frames []string) string {
		var out []string
		for _, f := range frames {
			i := strings.Index(f, `"seq":`)
			if i < 0 {
				out = append(out, "answer")
				continue
			}
			out = append(out, strings.TrimSuffix(strings.TrimSpace(f[i+6:]), "}"))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name   string
		keep   int // frames kept (events 1..10 were made, then an answer to a; 0: all)
		from   cursor
		tooOld bool
		want   string // the seqs read: the replay, then the attach (11)
	}{
		{"from the start", 0, cursor{after: 0}, false, "1,2,3,4,5,6,7,8,9,10,11"},
		{"from before the start", 0, cursor{after: 0, epoch: "e1"}, false, "1,2,3,4,5,6,7,8,9,10,11"},
		{"from the middle", 0, cursor{after: 6}, false, "7,8,9,10,11"},
		{"from the last", 0, cursor{after: 10}, false, "11"},
		{"of this run, epoch given", 0, cursor{after: 8, epoch: "e1"}, false, "9,10,11"},
		// Kept: 7..10 and the answer; the arrival (11) pushes 7 out before
		// the cursor is looked at.
		{"the first kept event follows it", 5, cursor{after: 7}, false, "8,9,10,11"},
		{"one before the first kept", 5, cursor{after: 6}, true, "11"},
		{"long gone", 5, cursor{after: 0}, true, "11"},
		{"another run", 0, cursor{after: 4, epoch: "e0"}, true, "11"},
		{"past the last event", 0, cursor{after: 11}, true, "11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, h := newTestHub(t, Limits{Entries: tc.keep})
			if tc.keep == 0 {
				srv.opts.Keep.Entries = 100
			}
			a := newTestClient(t, srv)
			a0 := joinTest(t, h, a, &sub{role: controller}, nil) // 1
			for range 9 {                                        // 2..10, read as they come
				events(h, 1)
				takeAll(a0)
			}
			answerTo(h, a, "before") // to that attachment: not replayed to the next
			var info attachInfo
			msgs := []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("hi")}}}
			sb := &sub{c: a, role: observer}
			err := h.join(sb, &tc.from, func(i attachInfo) []byte { info = i; return []byte("{}\n") }, func() []engine.Message { return msgs })
			if err != nil {
				t.Fatal(err)
			}
			if info.seq != 10 || info.tooOld != tc.tooOld || (len(info.messages) == 1) != tc.tooOld {
				t.Fatalf("attach answer: seq %d, tooOld %v, %d messages; want 10, %v", info.seq, info.tooOld, len(info.messages), tc.tooOld)
			}
			if got, _ := takeAll(sb); len(got) != 0 {
				t.Fatalf("frames before the answer was written: %q", got)
			}
			sb.activate() // the writer wrote the answer
			got, lagged := takeAll(sb)
			if lagged {
				t.Fatal("lagged")
			}
			if s := seqs(got); s != tc.want {
				t.Errorf("read %s, want %s", s, tc.want)
			}
		})
	}
}

func TestHubLaggedSaysTheLastEventSent(t *testing.T) {
	t.Parallel()
	srv, h := newTestHub(t, Limits{Entries: 5})
	slow, fast := newTestClient(t, srv), newTestClient(t, srv)
	ss := joinTest(t, h, slow, &sub{role: controller}, nil) // 1
	fs := joinTest(t, h, fast, &sub{role: observer}, nil)   // 2
	events(h, 2)                                            // 3, 4
	if got, _ := takeAll(ss); len(got) != 4 {
		t.Fatalf("slow read %d frames, want 4", len(got))
	}
	takeAll(fs)
	// slow asks, then stops reading; the log moves on past it. fast reads
	// every event as it comes.
	var fastRead []string
	step := func(f func()) {
		f()
		got, lagged := takeAll(fs)
		if lagged {
			t.Fatal("fast lagged")
		}
		fastRead = append(fastRead, got...)
	}
	step(func() { answerTo(h, slow, "q1") })
	for range 3 {
		step(func() { events(h, 1) }) // 5, 6, 7
	}
	step(func() { answerTo(h, slow, "q2") })
	for range 5 {
		step(func() { events(h, 1) }) // 8..12: slow falls out at the first of them to go
	}
	if h.attachedLocked(slow) {
		t.Fatal("slow is still attached after the log passed it")
	}
	// Its answers reach it directly, the one that fell out and the one
	// that was still in the log.
	d := directOf(slow)
	if len(d) != 2 || !strings.Contains(d[0], `"id":"q1"`) || !strings.Contains(d[1], `"id":"q2"`) || !strings.Contains(d[1], `"sessionId":"s1"`) {
		t.Fatalf("slow's direct frames: %q, want the answers q1 and q2", d)
	}
	got, lagged := takeAll(ss)
	if !lagged || len(got) != 1 || got[0] != `{"type":"lagged","sessionId":"s1","lastSeq":4}`+"\n" {
		t.Fatalf("slow reads %q (lagged %v); want lagged with lastSeq 4, the last event it was sent", got, lagged)
	}
	if got, lagged := takeAll(ss); len(got) != 0 || lagged {
		t.Fatalf("after lagged: %q", got)
	}
	// The other client is told who watches now, among the events, and
	// reads every one.
	got = fastRead
	var n int
	for _, f := range got {
		if strings.Contains(f, `"clients_changed","controllers":0,"observers":1`) {
			n++
		}
	}
	if n != 1 || len(got) != 9 {
		t.Fatalf("fast reads %d frames (%d clients_changed without slow): %q", len(got), n, got)
	}
	// An answer for slow made now goes to it directly too.
	answerTo(h, slow, "q3")
	if d := directOf(slow); len(d) != 1 || !strings.Contains(d[0], `"id":"q3"`) {
		t.Fatalf("a later answer: %q", d)
	}
}

func TestHubLogBoundedByEntriesAndBytes(t *testing.T) {
	t.Parallel()
	_, h := newTestHub(t, Limits{Entries: 4, Bytes: 1 << 20})
	events(h, 10)
	if len(h.log) != 4 || h.base != 7 || h.log[0].seq != 7 {
		t.Fatalf("by entries: %d kept from position %d (seq %d), want 4 from 7", len(h.log), h.base, h.log[0].seq)
	}
	frame := len(`{"type":"agent_start"}` + "\n")
	_, h = newTestHub(t, Limits{Entries: 1000, Bytes: 3 * frame})
	events(h, 10)
	if len(h.log) != 3 || h.bytes != 3*frame || h.log[2].seq != 10 {
		t.Fatalf("by bytes: %d kept, %d bytes, want 3, %d", len(h.log), h.bytes, 3*frame)
	}
	// The last frame stays, however large.
	_, h = newTestHub(t, Limits{Entries: 1000, Bytes: 10})
	events(h, 3)
	if len(h.log) != 1 || h.log[0].seq != 3 {
		t.Fatalf("a frame over the bound: %d kept", len(h.log))
	}
}

func TestHubBlockingSubscriberHoldsTheSession(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, h := newTestHub(t, Limits{Entries: 3})
		c := newTestClient(t, srv)
		own := joinTest(t, h, c, &sub{role: controller, bare: true, blocking: true}, nil)
		var made atomic.Int32
		go func() {
			for range 6 {
				h.Event(engine.AgentStart{})
				made.Add(1)
			}
		}()
		synctest.Wait() // the session waits: the fourth event has no room
		if n := made.Load(); n != 3 {
			t.Fatalf("%d events made while the subscriber read nothing, want 3", n)
		}
		var read int
		for made.Load() < 6 || read < 6 {
			got, lagged := takeAll(own)
			if lagged {
				t.Fatal("a blocking subscriber lagged")
			}
			read += len(got)
			synctest.Wait()
		}
		if read != 6 {
			t.Fatalf("read %d frames, want all 6", read)
		}
	})
}

func TestHubClientsChanged(t *testing.T) {
	t.Parallel()
	srv, h := newTestHub(t, Limits{})
	a, b, c := newTestClient(t, srv), newTestClient(t, srv), newTestClient(t, srv)
	sa := joinTest(t, h, a, &sub{role: controller}, nil)
	sb := joinTest(t, h, b, &sub{role: observer}, nil)
	joinTest(t, h, c, &sub{role: controller, bare: true, blocking: true}, nil) // an own session's client: counted, no event
	h.detach(sb)
	h.detach(sb) // twice: nothing more
	h.detach(sa) // the last controller attached by id leaves: an event all the same
	var got []string
	for _, e := range h.log {
		got = append(got, strings.TrimSuffix(string(e.frame), "\n"))
	}
	want := []string{
		`{"type":"clients_changed","controllers":1,"observers":0}`,
		`{"type":"clients_changed","controllers":1,"observers":1}`,
		`{"type":"clients_changed","controllers":2,"observers":0}`,
		`{"type":"clients_changed","controllers":1,"observers":0}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h.idleSince != 0 {
		t.Error("idle while a client watches")
	}
	if w := h.watchers(a); len(w) != 1 || w[0].Client != c.name {
		t.Errorf("watchers: %+v", w)
	}
}

func TestHubClosedRefusesAttach(t *testing.T) {
	t.Parallel()
	srv, h := newTestHub(t, Limits{})
	h.closed = true
	err := h.join(&sub{c: newTestClient(t, srv)}, nil, nil, nil)
	if err != errClosedSession {
		t.Fatalf("join on a closed session: %v", err)
	}
}

func TestHubBacklogged(t *testing.T) {
	t.Parallel()
	srv, h := newTestHub(t, Limits{})
	s := joinTest(t, h, newTestClient(t, srv), &sub{role: observer}, nil)
	events(h, backlogThreshold-1)
	if h.Backlogged() {
		t.Fatalf("backlogged %d frames behind", backlogThreshold)
	}
	events(h, 1)
	if !h.Backlogged() {
		t.Fatalf("not backlogged %d frames behind", backlogThreshold+1)
	}
	takeAll(s)
	if h.Backlogged() {
		t.Fatal("backlogged once it read")
	}
}
