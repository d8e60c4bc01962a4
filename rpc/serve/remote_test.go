package serve

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// The port of remote sessions with a fake one (no Temporal): a session
// whose log outlives any server, numbered by itself, and kept bounded.

// fakeRemotes are the remote sessions every test server of one test
// shares, as servers share a Temporal service.
type fakeRemotes struct {
	mu       sync.Mutex
	sessions map[string]*fakeLog
	keep     int // events each log keeps (0: all)
	nextID   int
}

// fakeLog is one remote session's state: what a workflow holds.
type fakeLog struct {
	mu       sync.Mutex
	id       string
	events   []fakeFrame // the kept ones
	last     int64
	messages []string
	aborts   int
	keep     int
	// followers are the open RemoteSessions' emits.
	followers map[*fakeSession]bool
}

type fakeFrame struct {
	seq  int64
	data string
}

func newFakeRemotes(keep int) *fakeRemotes {
	return &fakeRemotes{sessions: map[string]*fakeLog{}, keep: keep}
}

func (r *fakeRemotes) Open(ctx context.Context, id string, create bool, emit func(int64, []byte)) (RemoteSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == "" && create {
		r.nextID++
		id = "d" + strconv.Itoa(r.nextID)
	}
	l := r.sessions[id]
	if l == nil {
		if !create {
			return nil, fmt.Errorf("%w: %s", ErrUnknownRemote, id)
		}
		l = &fakeLog{id: id, keep: r.keep, followers: map[*fakeSession]bool{}}
		r.sessions[id] = l
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &fakeSession{l: l, emit: emit, cursor: l.last}
	l.followers[s] = true
	return s, nil
}

func (r *fakeRemotes) List(context.Context) ([]RemoteInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RemoteInfo
	for id := range r.sessions {
		out = append(out, RemoteInfo{ID: id})
	}
	slices.SortFunc(out, func(a, b RemoteInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// emitLocked adds an event (delta: a best-effort frame, unnumbered) and
// hands it to every follower. (l.mu)
func (l *fakeLog) emitLocked(data string, delta bool) {
	var seq int64
	if !delta {
		l.last++
		seq = l.last
		l.events = append(l.events, fakeFrame{seq, data})
		if l.keep > 0 && len(l.events) > l.keep {
			l.events = l.events[len(l.events)-l.keep:]
		}
	}
	for s := range l.followers {
		if !delta {
			s.cursor = seq
		}
		s.emit(seq, []byte(data))
	}
}

// run is a prompt's run: its events, a delta among them.
func (l *fakeLog) run(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.messages = append(l.messages, text)
	l.emitLocked(`{"type":"agent_start"}`, false)
	l.emitLocked(`{"type":"message_start","message":{"role":"assistant"}}`, false)
	l.emitLocked(`{"type":"message_update","delta":"`+text+`"}`, true)
	l.emitLocked(`{"type":"message_end","message":{"role":"assistant","text":"`+text+`"}}`, false)
	l.emitLocked(`{"type":"agent_end"}`, false)
}

type fakeSession struct {
	l      *fakeLog
	emit   func(int64, []byte)
	cursor int64 // guarded by l.mu
}

func (s *fakeSession) ID() string    { return s.l.id }
func (s *fakeSession) Epoch() string { return "run-" + s.l.id }
func (s *fakeSession) Last() int64 {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.cursor
}
func (s *fakeSession) Sync(context.Context) error { return nil }
func (s *fakeSession) Settle(context.Context)     {}
func (s *fakeSession) Do(ctx context.Context, line []byte, answer func([]byte)) {
	if b := s.do(line); b != nil {
		answer(b)
	}
}

func (s *fakeSession) do(line []byte) []byte {
	typ := gjson.GetBytes(line, "type").String()
	resp := func(data string) []byte {
		b := `{"id":` + gjson.GetBytes(line, "id").Raw + `,"type":"response","command":"` + typ + `","success":true`
		if data != "" {
			b += `,"data":` + data
		}
		return []byte(b + "}")
	}
	switch typ {
	case "prompt":
		s.l.run(gjson.GetBytes(line, "message").String())
		return resp("")
	case "abort":
		s.l.mu.Lock()
		s.l.aborts++
		s.l.mu.Unlock()
		return resp("")
	case "host_tool_result":
		return nil
	}
	return []byte(`{"id":` + gjson.GetBytes(line, "id").Raw + `,"type":"response","command":"` + typ + `","success":false,"error":"Unknown command: ` + typ + `"}`)
}
func (s *fakeSession) Events(ctx context.Context, after int64, fn func(int64, []byte)) (bool, error) {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	if len(s.l.events) > 0 && after+1 < s.l.events[0].seq {
		return true, nil
	}
	for _, f := range s.l.events {
		if f.seq > after {
			fn(f.seq, []byte(f.data))
		}
	}
	return false, nil
}
func (s *fakeSession) Messages(context.Context) (int64, []byte, error) {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	b := []byte("[")
	for i, m := range s.l.messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, m)
	}
	return s.l.last, append(b, ']'), nil
}
func (s *fakeSession) Close() {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	delete(s.l.followers, s)
}

func newRemoteServer(t *testing.T, r *fakeRemotes, epoch string) *Server {
	t.Helper()
	srv := New(Options{Host: sessions.New(sessions.Options{Builder: &testBuilder{}}), Version: "0.0.0-test",
		Cwd: t.TempDir(), Epoch: epoch, ShutdownGrace: 10 * time.Second, Remote: r})
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

// seqs are the seq of the events among frames, for a session.
func seqs(frames []string, id string) []int64 {
	var out []int64
	for _, f := range frames {
		if gjson.Get(f, "sessionId").String() == id && gjson.Get(f, "seq").Exists() {
			out = append(out, gjson.Get(f, "seq").Int())
		}
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestRemoteSessionNumbersAreTheSessions(t *testing.T) {
	t.Parallel()
	r := newFakeRemotes(0)
	srv := newRemoteServer(t, r, "e1")
	a, b := dial(t, srv), dial(t, srv)
	a.send(`{"id":"o1","type":"open_session","durable":true,"sessionId":"task"}`)
	open := a.wait(`id=="o1"`)
	if open.Get("data.durable").Bool() != true || open.Get("data.epoch").String() != "run-task" || open.Get("data.seq").Int() != 0 {
		t.Fatalf("open_session answered %s", open.Raw)
	}
	// Its own frames carry no seq: who watches is this server's view.
	if cc := a.wait(`type=="clients_changed"`); cc.Get("seq").Exists() || cc.Get("sessionId").String() != "task" {
		t.Fatalf("clients_changed on a remote session: %s", cc.Raw)
	}
	a.send(`{"id":"p1","type":"prompt","sessionId":"task","message":"one"}`)
	a.wait(`type=="agent_end"&&seq==4`)
	a.wait(`id=="p1"&&success==true`) // after the events it made
	// A second client on the same session: same events, same numbers; the
	// answer goes to the one that asked.
	b.send(`{"id":"t1","type":"attach","sessionId":"task","after":2,"epoch":"run-task"}`)
	if got := b.wait(`id=="t1"`); got.Get("data.seq").Int() != 4 || got.Get("data.cursorTooOld").Bool() {
		t.Fatalf("attach answered %s", got.Raw)
	}
	b.wait(`type=="agent_end"&&seq==4`)
	a.wait(`type=="clients_changed"&&controllers==2`)
	b.send(`{"id":"p2","type":"prompt","sessionId":"task","message":"two"}`)
	a.wait(`type=="message_update"&&delta=="two"`)
	a.wait(`type=="agent_end"&&seq==8`)
	b.wait(`type=="agent_end"&&seq==8`)
	b.wait(`id=="p2"`)
	a.send(`{"id":"g","type":"get_sessions"}`)
	list := a.wait(`id=="g"`)
	if s := list.Get(`data.sessions.#(sessionId=="task")`); !s.Get("durable").Bool() || !s.Get("live").Bool() || s.Get("seq").Int() != 8 || s.Get("clients.#").Int() != 2 {
		t.Fatalf("get_sessions: %s", list.Raw)
	}
	// Another server lists it too, as a durable session it does not serve.
	other := dial(t, newRemoteServer(t, r, "e2"))
	other.send(`{"id":"g2","type":"get_sessions"}`)
	list = other.wait(`id=="g2"`)
	if s := list.Get(`data.sessions.#(sessionId=="task")`); !s.Get("durable").Bool() || s.Get("live").Bool() || s.Get("seq").Exists() || s.Get("clients.#").Int() != 0 {
		t.Fatalf("get_sessions of another server: %s", list.Raw)
	}
	other.hangUp()
	a.hangUp()
	b.hangUp()
	if got, want := seqs(a.all(), "task"), span(1, 8); !slices.Equal(got, want) {
		t.Errorf("a's events %v, want %v", got, want)
	}
	if got, want := seqs(b.all(), "task"), span(3, 8); !slices.Equal(got, want) {
		t.Errorf("b's events %v, want %v", got, want)
	}
	for _, f := range b.all() {
		if gjson.Get(f, "id").String() == "p1" {
			t.Errorf("b read a's answer: %s", f)
		}
	}
}

// A second server attaches from a cursor older than its own log: the
// events it never saw come from the session's log, then its own, none
// doubled, none lost; another epoch, or a cursor the session no longer
// keeps, is too old and gets the messages.
func TestRemoteAttachFromCursorOnAnotherServer(t *testing.T) {
	t.Parallel()
	r := newFakeRemotes(10)
	one := newRemoteServer(t, r, "e1")
	a := dial(t, one)
	a.send(`{"id":"o1","type":"open_session","durable":true}`)
	id := a.wait(`id=="o1"`).Get("data.sessionId").String()
	for i := range 2 {
		a.send(`{"id":"p` + strconv.Itoa(i) + `","type":"prompt","sessionId":"` + id + `","message":"m` + strconv.Itoa(i) + `"}`)
		a.wait(`type=="agent_end"&&seq==` + strconv.Itoa(4*(i+1)))
		a.wait(`id=="p` + strconv.Itoa(i) + `"`)
	}

	two := newRemoteServer(t, r, "e2")
	b := dial(t, two)
	b.send(`{"id":"t1","type":"attach","sessionId":"` + id + `","after":5,"epoch":"run-` + id + `"}`)
	if got := b.wait(`id=="t1"`); got.Get("data.seq").Int() != 8 || got.Get("data.cursorTooOld").Bool() || got.Get("data.epoch").String() != "run-"+id {
		t.Fatalf("attach answered %s", got.Raw)
	}
	b.wait(`type=="agent_end"&&seq==8`)
	// The run goes on through the first server; the second follows.
	a.send(`{"id":"p9","type":"prompt","sessionId":"` + id + `","message":"m9"}`)
	b.wait(`type=="agent_end"&&seq==12`)
	if got, want := seqs(b.all(), id), span(6, 12); !slices.Equal(got, want) {
		t.Errorf("b's events %v, want %v", got, want)
	}

	// A cursor the session no longer keeps (it keeps 10 events: 3..12),
	// and one of another numbering: the messages, then what follows.
	c := dial(t, two)
	c.send(`{"id":"t2","type":"attach","sessionId":"` + id + `","after":0}`)
	if got := c.wait(`id=="t2"`); !got.Get("data.cursorTooOld").Bool() || got.Get("data.seq").Int() != 12 || got.Get("data.messages").Raw != `["m0","m1","m9"]` {
		t.Fatalf("attach from a lost cursor answered %s", got.Raw)
	}
	c.send(`{"id":"t3","type":"attach","sessionId":"` + id + `","after":10,"epoch":"e1"}`)
	if got := c.wait(`id=="t3"`); !got.Get("data.cursorTooOld").Bool() {
		t.Fatalf("attach with a server's epoch answered %s", got.Raw)
	}
	a.send(`{"id":"p10","type":"prompt","sessionId":"` + id + `","message":"m10"}`)
	c.wait(`type=="agent_end"&&seq==16`)
	if got, want := seqs(c.all(), id), span(13, 16); !slices.Equal(got, want) {
		t.Errorf("c's events %v, want %v", got, want)
	}
	a.hangUp()
	b.hangUp()
	c.hangUp()
}

// The backfill from the session's own log may reach past what the hub
// has logged yet: the hub's copies of those events are skipped.
func TestRemoteBackfillPastTheHubIsNotDoubled(t *testing.T) {
	t.Parallel()
	r := newFakeRemotes(0)
	one := newRemoteServer(t, r, "e1")
	a := dial(t, one)
	a.send(`{"id":"o1","type":"open_session","durable":true,"sessionId":"s"}`)
	a.wait(`id=="o1"`)
	a.send(`{"id":"p1","type":"prompt","sessionId":"s","message":"x"}`)
	a.wait(`type=="agent_end"&&seq==4`)
	// A second server serves it from event 4 on; the session's log then
	// moves on (5..8) before its hub hears of it.
	two := newRemoteServer(t, r, "e2")
	h, err := two.serveRemote("s", false)
	if err != nil {
		t.Fatal(err)
	}
	l := r.sessions["s"]
	l.mu.Lock()
	saved := l.followers
	l.followers = map[*fakeSession]bool{}
	l.mu.Unlock()
	l.run("y")
	b := newTestClient(t, two)
	sb := &sub{c: b, role: controller}
	if err := h.attach(sb, &cursor{after: 2}, func(attachInfo) []byte { return []byte("answer\n") }); err != nil {
		t.Fatal(err)
	}
	// The hub hears of 5..8 now, then the session goes on.
	l.mu.Lock()
	for s := range saved {
		for _, f := range l.events[4:] {
			s.cursor = f.seq
			s.emit(f.seq, []byte(f.data))
		}
	}
	l.followers = saved
	l.mu.Unlock()
	l.run("z")
	direct := directOf(b)
	sb.activate()
	frames, _ := takeAll(sb)
	all := append(direct, frames...)
	if got, want := seqs(all, "s"), span(3, 12); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v\n%s", got, want, strings.Join(all, ""))
	}
	if all[0] != "answer\n" {
		t.Errorf("the answer is not first: %q", all[0])
	}
	h.detach(sb)
	b.disconnect() // it has no writer: Shutdown would wait for it
	a.hangUp()
}

func TestRemoteRefusals(t *testing.T) {
	t.Parallel()
	plain := newTestServer(t)
	a := dial(t, plain)
	a.send(`{"id":"o1","type":"open_session","durable":true}`)
	if got := a.wait(`id=="o1"`).Get("error").String(); got != errNoRemote.Error() {
		t.Errorf("durable without --temporal: %q", got)
	}
	r := newFakeRemotes(0)
	srv := newRemoteServer(t, r, "e1")
	b := dial(t, srv)
	for _, tc := range []struct{ line, want string }{
		{`{"id":"x1","type":"attach","sessionId":"nope"}`, "No session nope (get_sessions lists them)"},
		{`{"id":"x2","type":"open_session","durable":true,"cwd":"/tmp"}`, "a durable session runs in its workers' directory: open_session takes no cwd with durable"},
		{`{"id":"x3","type":"open_session","sessionId":"s"}`, `open_session takes a sessionId only with "durable":true (attach joins a session that exists)`},
	} {
		b.send(tc.line)
		id := gjson.Get(tc.line, "id").String()
		if got := b.wait(`id=="` + id + `"`).Get("error").String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
	}
	// An observer of a durable session only reads; a command the session
	// does not know is its own answer.
	b.send(`{"id":"o2","type":"open_session","durable":true,"sessionId":"s"}`)
	b.wait(`id=="o2"`)
	c := dial(t, srv)
	c.send(`{"id":"t1","type":"attach","sessionId":"s","role":"observer"}`)
	c.wait(`id=="t1"`)
	c.send(`{"id":"p1","type":"prompt","sessionId":"s","message":"x"}`)
	if got := c.wait(`id=="p1"`).Get("error").String(); !strings.Contains(got, "observer") {
		t.Errorf("an observer's prompt: %q", got)
	}
	b.send(`{"id":"c1","type":"compact","sessionId":"s"}`)
	if got := b.wait(`id=="c1"`); got.Get("error").String() != "Unknown command: compact" || got.Get("sessionId").String() != "s" {
		t.Errorf("compact: %s", got.Raw)
	}
	b.hangUp()
	c.hangUp()
}

// close_session aborts a durable session's run and stops serving it; a
// shutdown leaves the run alone (the session outlives the server).
func TestRemoteCloseAndShutdown(t *testing.T) {
	t.Parallel()
	r := newFakeRemotes(0)
	srv := newRemoteServer(t, r, "e1")
	a := dial(t, srv)
	a.send(`{"id":"o1","type":"open_session","durable":true,"sessionId":"s"}`)
	a.wait(`id=="o1"`)
	a.send(`{"id":"c1","type":"close_session","sessionId":"s"}`)
	a.wait(`type=="session_closed"&&reason=="closed"`)
	a.wait(`id=="c1"&&success==true`)
	l := r.sessions["s"]
	l.mu.Lock()
	aborts, followers := l.aborts, len(l.followers)
	l.mu.Unlock()
	if aborts != 1 || followers != 0 {
		t.Errorf("close_session: %d aborts, %d followers; want 1 and 0", aborts, followers)
	}
	a.send(`{"id":"t1","type":"attach","sessionId":"s"}`)
	a.wait(`id=="t1"&&success==true`)
	srv.Shutdown(context.Background())
	a.wait(`type=="session_closed"&&reason=="shutdown"`)
	l.mu.Lock()
	aborts, followers = l.aborts, len(l.followers)
	l.mu.Unlock()
	if aborts != 1 || followers != 0 {
		t.Errorf("shutdown: %d aborts, %d followers; want 1 and 0", aborts, followers)
	}
}

func TestLeanDelta(t *testing.T) {
	t.Parallel()
	p := `{"role":"assistant","content":[{"type":"toolCall","arguments":{"a":1,"partial":2}}]}`
	for _, tc := range []struct{ in, want string }{
		{`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"x","partial":` + p + `},"message":` + p + "}\n",
			`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"x"}}` + "\n"},
		// arguments that look like the snapshot's key are not taken for it
		{`{"type":"message_update","assistantMessageEvent":{"type":"toolcall_end","contentIndex":0,"toolCall":{"arguments":{"b":1,"partial":{}}},"partial":` + p + `},"message":` + p + "}\n",
			`{"type":"message_update","assistantMessageEvent":{"type":"toolcall_end","contentIndex":0,"toolCall":{"arguments":{"b":1,"partial":{}}}}}` + "\n"},
		// already lean, or not a delta: as it is
		{`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"x"}}` + "\n", `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"x"}}` + "\n"},
		{`{"type":"x","partial":{"a":1},"message":{"a":2}}` + "\n", `{"type":"x","partial":{"a":1},"message":{"a":2}}` + "\n"},
	} {
		if got := string(leanDelta([]byte(tc.in))); got != tc.want {
			t.Errorf("leanDelta(%s)\n= %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
