package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine/lineio"
)

// hang bounds the waits of these tests: a hang guard, never a timing.
const hang = 10 * time.Second

// pipe is an in-memory byte stream that never blocks its writer (an
// io.Pipe would make two readers that both answer wait for each other).
type pipe struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	closed bool
}

func newPipe() *pipe {
	p := &pipe{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *pipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, io.ErrClosedPipe
	}
	p.buf = append(p.buf, b...)
	p.cond.Broadcast()
	return len(b), nil
}

func (p *pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 && !p.closed {
		p.cond.Wait()
	}
	if len(p.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

func (p *pipe) Close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
}

// connect returns two connections reading each other's lines; the test's
// end closes both streams and waits for both readers and queues.
func connect(t *testing.T, aOpts, bOpts Options) (a, b *Conn) {
	t.Helper()
	toA, toB := newPipe(), newPipe()
	a = New(lineio.New(toB, nil), aOpts)
	b = New(lineio.New(toA, nil), bOpts)
	var wg sync.WaitGroup
	for _, side := range []struct {
		c  *Conn
		in *pipe
	}{{a, toA}, {b, toB}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := side.c.Read(lineio.NewReader(side.in, 0)); err != nil {
				t.Errorf("read: %v", err)
			}
			side.c.Close(io.EOF)
			side.c.Wait()
		}()
	}
	t.Cleanup(func() {
		toA.Close()
		toB.Close()
		wg.Wait()
	})
	return a, b
}

func await(t *testing.T, cl *Call, result any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	err := cl.Await(ctx, result)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: no answer", cl.Method())
	}
	return err
}

func call(t *testing.T, c *Conn, method string, params, result any) error {
	t.Helper()
	cl, err := c.Call(method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return await(t, cl, result)
}

// Calls go both ways on one pair: answered at once on the reader, answered
// later with Respond, answered with an error, and unknown.
func TestCallsBothWays(t *testing.T) {
	t.Parallel()
	var later sync.WaitGroup
	t.Cleanup(later.Wait)
	var bc syncValue[*Conn]
	a, b := connect(t, Options{
		Preempt: func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "add":
				var p [2]int
				if err := json.Unmarshal(req.Params, &p); err != nil {
					return nil, &Error{Code: CodeInvalidParams, Message: err.Error()}
				}
				return p[0] + p[1], nil
			case "fail":
				return nil, errors.New("plain failure")
			}
			return nil, ErrNotHandled
		},
	}, Options{
		Preempt: func(ctx context.Context, req *Request) (any, error) {
			if req.Method != "echo" {
				return nil, ErrNotHandled
			}
			later.Add(1)
			go func() {
				defer later.Done()
				// Answered from another goroutine, after the handler returned.
				bc.Load().Respond(req, json.RawMessage(req.Params), nil)
			}()
			return nil, ErrAsync
		},
	})
	bc.Store(b)

	var sum int
	if err := call(t, b, "add", []int{2, 3}, &sum); err != nil || sum != 5 {
		t.Fatalf("add: %d %v", sum, err)
	}
	var echoed map[string]string
	if err := call(t, a, "echo", map[string]string{"<k>": "v&"}, &echoed); err != nil || echoed["<k>"] != "v&" {
		t.Fatalf("echo: %v %v", echoed, err)
	}
	var e *Error
	if err := call(t, b, "add", "no", nil); !errors.As(err, &e) || e.Code != CodeInvalidParams {
		t.Fatalf("bad params: %v", err)
	}
	if err := call(t, b, "fail", nil, nil); !errors.As(err, &e) || e.Code != CodeFailed || e.Message != "plain failure" {
		t.Fatalf("plain error: %v", err)
	}
	if err := call(t, b, "nope", nil, nil); !errors.As(err, &e) || e.Code != CodeMethodNotFound {
		t.Fatalf("unknown: %v", err)
	}
}

// syncValue hands a connection to its own handlers, which are built
// before it.
type syncValue[T any] struct {
	mu sync.Mutex
	v  T
}

func (s *syncValue[T]) Store(v T) { s.mu.Lock(); s.v = v; s.mu.Unlock() }
func (s *syncValue[T]) Load() T   { s.mu.Lock(); defer s.mu.Unlock(); return s.v }

// lines records what a connection sends; answer, if set, is called with
// each line before Send returns (a peer that answers at once).
type lines struct {
	mu     sync.Mutex
	sent   []string
	answer func(line string)
}

func (l *lines) Buf() *[]byte { b := make([]byte, 0, 64); return &b }
func (l *lines) Send(bp *[]byte) {
	line := string(*bp)
	l.mu.Lock()
	l.sent = append(l.sent, line)
	answer := l.answer
	l.mu.Unlock()
	if answer != nil {
		answer(line)
	}
}
func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent...)
}

// A call is in the table before its line is written: an answer read
// while Send has not even returned still finds it.
func TestAnswerCannotOutrunTheTable(t *testing.T) {
	t.Parallel()
	out := &lines{}
	c := New(out, Options{})
	out.answer = func(line string) {
		req, err := Decode([]byte(line))
		if err != nil {
			t.Errorf("sent %q: %v", line, err)
			return
		}
		c.retire(&Response{ID: req.(*Request).ID, Result: json.RawMessage(`"instant"`)})
	}
	cl, err := c.Call("ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := await(t, cl, &got); err != nil || got != "instant" {
		t.Fatalf("got %q %v", got, err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"; out.all()[0] != want {
		t.Fatalf("sent %q", out.all()[0])
	}
}

// A call whose context ends is withdrawn: Await returns the cause, the
// table forgets it, and its late answer is dropped.
func TestCancelledAwaitWithdrawsTheCall(t *testing.T) {
	t.Parallel()
	out := &lines{}
	c := New(out, Options{})
	cl, err := c.Call("slow", json.RawMessage(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("the user moved on")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := cl.Await(ctx, nil); !errors.Is(err, cause) {
		t.Fatalf("await: %v", err)
	}
	if c.Pending(cl.ID()) != nil || len(c.Calls()) != 0 {
		t.Fatal("still in the table")
	}
	if _, err := cl.Result(); !errors.Is(err, ErrWithdrawn) {
		t.Fatalf("result: %v", err)
	}
	c.retire(&Response{ID: json.RawMessage("1"), Result: json.RawMessage("true")}) // late: dropped
	if got := out.all(); len(got) != 1 || got[0] != `{"jsonrpc":"2.0","id":1,"method":"slow","params":{"n":1}}`+"\n" {
		t.Fatalf("sent %q", got)
	}
}

// Close fails every call waiting and every call after it, which is not
// sent; answers and notifications are still written.
func TestCloseFailsEveryWaiter(t *testing.T) {
	t.Parallel()
	out := &lines{}
	c := New(out, Options{})
	var calls []*Call
	for i := range 3 {
		cl, err := c.CallWith("m", nil, i)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, cl)
	}
	if got := c.Calls(); len(got) != 3 || got[0].Value() != 0 || got[2].Value() != 2 || c.Pending(2) != calls[1] {
		t.Fatalf("table: %v", got)
	}
	gone := errors.New("gone")
	done := make(chan error, len(calls))
	for _, cl := range calls {
		go func() { done <- await(t, cl, nil) }()
	}
	c.Close(gone)
	for range calls {
		if err := <-done; !errors.Is(err, gone) {
			t.Fatalf("waiter: %v", err)
		}
	}
	if _, err := c.Call("after", nil); !errors.Is(err, gone) {
		t.Fatalf("call after close: %v", err)
	}
	c.Notify("still", nil)
	if got := out.all(); len(got) != 4 || !strings.Contains(got[3], `"method":"still"`) {
		t.Fatalf("sent %q", got)
	}
}

// The reader is never held by a queued handler: while Handle blocks, the
// answer to a call it made is still read (and its own call still answered).
func TestReaderNotBlockedBySlowHandler(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	inHandle := make(chan struct{})
	var b *Conn
	bReady := make(chan struct{})
	handled := make(chan error, 1)
	a, bc := connect(t, Options{
		Preempt: func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "ping" {
				return "pong", nil
			}
			return nil, ErrNotHandled
		},
	}, Options{
		Handle: func(ctx context.Context, req *Request) (any, error) {
			if req.Method != "slow" {
				return nil, ErrNotHandled
			}
			<-bReady
			close(inHandle)
			// The reader must still retire the answer to this call.
			var pong string
			cl, err := b.Call("ping", nil)
			if err == nil {
				ctx, cancel := context.WithTimeout(ctx, hang)
				err = cl.Await(ctx, &pong)
				cancel()
			}
			handled <- err
			<-release
			return "done", nil
		},
	})
	b = bc
	t.Cleanup(free) // before the readers are waited for, should the test fail
	close(bReady)
	slow, err := a.Call("slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-inHandle
	select {
	case err := <-handled:
		if err != nil {
			t.Fatalf("the handler's call: %v", err)
		}
	case <-time.After(hang):
		t.Fatal("the answer to the handler's call was not read while it waited")
	}
	// b's reader also still serves: a's call queued behind the slow one is
	// in the queue, but a call a preempter takes is answered.
	var pong string
	if err := call(t, b, "ping", nil, &pong); err != nil || pong != "pong" {
		t.Fatalf("ping: %q %v", pong, err)
	}
	free()
	var done string
	if err := await(t, slow, &done); err != nil || done != "done" {
		t.Fatalf("slow: %q %v", done, err)
	}
}

// The peer's cancellation ends the context of its call, whether the call
// is running or still queued behind another handler.
func TestCancelReachesRunningAndQueuedCalls(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan string, 2)
	var later sync.WaitGroup
	t.Cleanup(later.Wait)
	var b syncValue[*Conn]
	a, bc := connect(t, Options{}, Options{
		Preempt: func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "$/cancelRequest":
				var p struct{ ID json.RawMessage }
				_ = json.Unmarshal(req.Params, &p)
				b.Load().Cancel(p.ID)
				return nil, nil
			case "running":
				later.Add(1)
				go func() {
					defer later.Done()
					started <- req.Method
					<-ctx.Done()
					b.Load().Respond(req, nil, &Error{Code: CodeCancelled, Message: "cancelled"})
				}()
				return nil, ErrAsync
			}
			return nil, ErrNotHandled
		},
		Handle: func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "block":
				<-release
				return nil, nil
			case "queued":
				if ctx.Err() != nil {
					return nil, &Error{Code: CodeCancelled, Message: "cancelled before it ran"}
				}
				return "ran", nil
			}
			return nil, ErrNotHandled
		},
	})
	b.Store(bc)
	running, _ := a.Call("running", nil)
	<-started
	block, _ := a.Call("block", nil)
	queued, _ := a.Call("queued", nil)
	// queued's cancellation goes first: the wire keeps the order, so once
	// running's has ended it, queued's was read too, before block is
	// released (the other way round, block could end and queued run
	// before its cancellation was read).
	for _, id := range []int64{queued.ID(), running.ID()} {
		a.Notify("$/cancelRequest", map[string]int64{"id": id})
	}
	var e *Error
	if err := await(t, running, nil); !errors.As(err, &e) || e.Code != CodeCancelled {
		t.Fatalf("running: %v", err)
	}
	close(release)
	if err := await(t, block, nil); err != nil {
		t.Fatal(err)
	}
	if err := await(t, queued, nil); !errors.As(err, &e) || e.Message != "cancelled before it ran" {
		t.Fatalf("queued: %v", err)
	}
}

// Notifications reach Preempt and Handle in the wire's order; what a
// handler gets wrong (a notification answered later, a call answered
// twice) is the connection's fault to report, and it goes on.
func TestOrderAndFaults(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen, faults []string
	handled := make(chan struct{}, 1)
	var b syncValue[*Conn]
	a, bc := connect(t, Options{}, Options{
		Preempt: func(ctx context.Context, req *Request) (any, error) {
			mu.Lock()
			seen = append(seen, "preempt "+req.Method)
			mu.Unlock()
			switch req.Method {
			case "later":
				return nil, ErrAsync
			case "twice":
				b.Load().Respond(req, 1, nil)
				return 2, nil
			}
			return nil, ErrNotHandled
		},
		Handle: func(ctx context.Context, req *Request) (any, error) {
			mu.Lock()
			seen = append(seen, "handle "+req.Method)
			mu.Unlock()
			if req.Method == "last" {
				handled <- struct{}{}
			}
			return nil, nil
		},
		OnError: func(err error) { mu.Lock(); faults = append(faults, err.Error()); mu.Unlock() },
	})
	b.Store(bc)
	for _, m := range []string{"one", "two", "later"} {
		a.Notify(m, nil)
	}
	var n int
	if err := call(t, a, "twice", nil, &n); err != nil || n != 1 {
		t.Fatalf("twice: %d %v", n, err)
	}
	a.Notify("last", nil)
	<-handled
	mu.Lock()
	defer mu.Unlock()
	want := "preempt one|preempt two|preempt later|preempt twice|preempt last|handle one|handle two|handle last"
	// The queue runs beside the reader: each keeps the wire's order.
	var pre, han []string
	for _, s := range seen {
		if strings.HasPrefix(s, "preempt") {
			pre = append(pre, s)
		} else {
			han = append(han, s)
		}
	}
	if got := strings.Join(append(pre, han...), "|"); got != want {
		t.Fatalf("order %s", got)
	}
	if len(faults) != 2 || !strings.Contains(faults[0], "later") || !strings.Contains(faults[1], "answered twice") {
		t.Fatalf("faults %q", faults)
	}
}

// A line over the cap and a line that does not decode are reported to
// BadLine and reading goes on; Fail answers them under the id given.
func TestBadLines(t *testing.T) {
	t.Parallel()
	out := &lines{}
	var bad []string
	var c *Conn
	c = New(out, Options{
		BadLine: func(line []byte, err error) {
			bad = append(bad, fmt.Sprintf("%s: %v", line, err))
			c.Fail(nil, &Error{Code: CodeParse, Message: "Parse error"})
		},
		Preempt: func(ctx context.Context, req *Request) (any, error) { return req.Method, nil },
	})
	in := strings.NewReader(strings.Repeat("x", 60) + "\nnot json\n" + `{"jsonrpc":"2.0","id":"s","method":"ok"}` + "\n")
	if err := c.Read(lineio.NewReader(in, 48)); err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || !strings.Contains(bad[0], "line too long") || !strings.HasPrefix(bad[1], "not json: ") {
		t.Fatalf("bad %q", bad)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n",
		`{"jsonrpc":"2.0","id":"s","result":"ok"}` + "\n",
	}
	if got := out.all(); strings.Join(got, "") != strings.Join(want, "") {
		t.Fatalf("sent %q", got)
	}
}

// What is sent: params omitted when nil, raw JSON as it is, values with
// HTML escaping off, an unencodable value as null (reported).
func TestEncoding(t *testing.T) {
	t.Parallel()
	out := &lines{}
	var faults []error
	c := New(out, Options{OnError: func(err error) { faults = append(faults, err) }})
	c.Notify("a", nil)
	c.Notify("b", json.RawMessage(`{"raw":true}`))
	c.Notify("c", map[string]string{"t": "<b>&"})
	c.Notify("d", func() {})
	c.Respond(&Request{ID: json.RawMessage(`"x"`), Method: "m"}, nil, nil)
	c.Respond(&Request{ID: json.RawMessage(`1.5`), Method: "m"}, nil, &Error{Code: -1, Message: "<no>", Data: map[string]string{"k": "v"}})
	want := []string{
		`{"jsonrpc":"2.0","method":"a"}`,
		`{"jsonrpc":"2.0","method":"b","params":{"raw":true}}`,
		`{"jsonrpc":"2.0","method":"c","params":{"t":"<b>&"}}`,
		`{"jsonrpc":"2.0","method":"d","params":null}`,
		`{"jsonrpc":"2.0","id":"x","result":null}`,
		`{"jsonrpc":"2.0","id":1.5,"error":{"code":-1,"message":"<no>","data":{"k":"v"}}}`,
	}
	got := out.all()
	for i := range want {
		if i >= len(got) || got[i] != want[i]+"\n" {
			t.Fatalf("line %d: %q, want %s", i, got, want[i])
		}
	}
	if len(faults) != 1 || !strings.Contains(faults[0].Error(), "params of d") {
		t.Fatalf("faults %v", faults)
	}
}
