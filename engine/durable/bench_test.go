package durable

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// The cost of a step on a local dev server against the same in process
// (docs/durable.md, figures): one prompt whose reply calls read, so two
// model calls and a tool call, with the fake demo model. The durable
// figure is from the prompt update to agent_end in the log as a front
// reads it (polling as a busy front does); the difference over three
// steps is the overhead of a step. XCSH_BENCH_HISTORY=1 prints the gaps
// between the history's events: where a step's time goes.

// devServer starts ../shared/temporal's dev server for a benchmark or a test, or
// skips it.
func devServer(b testing.TB) string {
	var script string
	for _, up := range []string{"../../..", "../../../.."} {
		if p := filepath.Join(up, "shared", "temporal", "serve.sh"); fileExists(p) {
			script = p
			break
		}
	}
	if script == "" {
		b.Skip("no Temporal dev server here (../shared/temporal)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	out, err := exec.Command("bash", script, b.TempDir(), strconv.Itoa(port)).Output()
	if err != nil {
		b.Skipf("no Temporal dev server could start: %v", err)
	}
	f := strings.Fields(string(out))
	pid, _ := strconv.Atoi(f[len(f)-1])
	b.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return "127.0.0.1:" + strconv.Itoa(port)
}

// pollEvery is how often the benchmark reads the log, as a front does
// while the session is busy.
var pollEvery = 10 * time.Millisecond

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func BenchmarkStepDevServer(b *testing.B) {
	addr := devServer(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("durable hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: addr, DataConverter: DataConverter()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	acts := testActivities(nil, dir)
	w := worker.New(c, "bench", worker.Options{})
	acts.Register(w)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	id := WorkflowID("bench")
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "bench"}, WorkflowName, Start{SessionID: "bench", HeartbeatMs: 10000}); err != nil {
		b.Fatal(err)
	}
	var cursor int64 // the last event read, as a front keeps it
	run := func() {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: UpdatePrompt,
			Args: []any{PromptInput{Message: `demo:tool read {"path":"f.txt"}`}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
		for done := false; !done; {
			v, err := c.QueryWorkflow(ctx, id, "", QueryEvents, cursor)
			if err != nil {
				b.Fatal(err)
			}
			var res EventsResult
			if err := v.Get(&res); err != nil {
				b.Fatal(err)
			}
			for _, f := range res.Frames {
				cursor = f.Seq
				if strings.HasPrefix(string(f.Data), `{"type":"agent_end"`) {
					done = true
				}
			}
			if !done {
				time.Sleep(pollEvery)
			}
		}
	}
	run() // the set-up step and a warm worker
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/3, "µs/step")
	if os.Getenv("XCSH_BENCH_HISTORY") != "" {
		it := c.GetWorkflowHistory(ctx, id, "", false, 0)
		var last time.Time
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			t := ev.GetEventTime().AsTime()
			if !last.IsZero() {
				fmt.Printf("%6.1fms %s\n", float64(t.Sub(last).Microseconds())/1000, ev.GetEventType())
			}
			last = t
		}
	}
}

// benchSink signals each agent_end.
type benchSink chan struct{}

func (s benchSink) Event(ev engine.Event) {
	if _, ok := ev.(engine.AgentEnd); ok {
		s <- struct{}{}
	}
}

func BenchmarkStepInProcess(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("durable hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	acts := testActivities(nil, dir)
	ends := make(benchSink, 1)
	m := acts.Model
	s := engine.New(engine.Config{Provider: acts.Provider, Model: &m, Tools: acts.Tools, Validator: acts.Validator,
		Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}, Sink: ends})
	go s.Loop()
	defer s.Stop()
	run := func() {
		s.Post(func() {
			if err := s.Prompt(`demo:tool read {"path":"f.txt"}`, engine.PromptOptions{}); err != nil {
				panic(fmt.Sprint(err))
			}
		})
		<-ends
	}
	run()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/3, "µs/step")
}

// The time a 5,000-delta reply takes to reach the attached front, against
// the same in process (docs/durable.md, figures): the fake provider
// streams 5,000 text deltas; from the prompt to the front writing the
// last delta, and to the reply's message_end. Durable: the local dev
// server, a worker in this process, and a front (RunFront) attached with
// its delta endpoint, whose stdout is timed frame by frame. In process: a
// session whose Sink encodes each event as the RPC front would write it.
// Deltas are best effort on a durable session (a front that falls behind
// loses some, never the message): "deltas" is how many the front wrote.

const benchDeltas = 5000

// deltaScript is the fake provider's reply of benchDeltas text deltas,
// every call.
func deltaScript(b *testing.B) *fakeprovider.Provider {
	sc, err := fakeprovider.Parse("deltas.json", []byte(fmt.Sprintf(`{"loop":true,"turns":[{"steps":[{"text":["ab"],"repeat":%d}]}]}`, benchDeltas)))
	if err != nil {
		b.Fatal(err)
	}
	return fakeprovider.New(sc)
}

// frameClock times the frames of one prompt as they are written: the
// first and the last message_update, the assistant's message_end, and
// agent_end, which ends the prompt.
type frameClock struct {
	mu                         sync.Mutex
	start                      time.Time
	deltas                     int
	firstDelta, lastDelta, end time.Duration
	done                       chan struct{}
}

func (c *frameClock) reset() {
	c.mu.Lock()
	c.start, c.deltas, c.firstDelta, c.lastDelta, c.end = time.Now(), 0, 0, 0, 0
	c.done = make(chan struct{})
	c.mu.Unlock()
}

// frame notes one frame (its JSON, a frame per call).
func (c *frameClock) frame(b []byte) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case bytes.HasPrefix(b, []byte(`{"type":"message_update"`)):
		if c.deltas == 0 {
			c.firstDelta = now.Sub(c.start)
		}
		c.deltas++
		c.lastDelta = now.Sub(c.start)
	case bytes.HasPrefix(b, []byte(`{"type":"message_end","message":{"role":"assistant"`)):
		c.end = now.Sub(c.start)
	case bytes.HasPrefix(b, []byte(`{"type":"agent_end"`)):
		close(c.done)
	}
}

// Write is the front's stdout: one frame a write.
func (c *frameClock) Write(p []byte) (int, error) { c.frame(p); return len(p), nil }

// Event is the in-process session's Sink.
func (c *frameClock) Event(ev engine.Event) { c.frame(ev.AppendJSON(nil)) }

// totals sums the prompts' figures.
type totals struct {
	firstDelta, lastDelta, end time.Duration
	deltas                     int
}

func (t *totals) add(c *frameClock) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.firstDelta += c.firstDelta
	t.lastDelta += c.lastDelta
	t.end += c.end
	t.deltas += c.deltas
}

func (t *totals) report(b *testing.B, n int) {
	b.ReportMetric(float64(t.firstDelta.Microseconds())/1000/float64(n), "ms-to-first-delta")
	b.ReportMetric(float64(t.lastDelta.Microseconds())/1000/float64(n), "ms-to-last-delta")
	b.ReportMetric(float64(t.end.Microseconds())/1000/float64(n), "ms-to-message_end")
	b.ReportMetric(float64(t.deltas)/float64(n), "deltas")
}

func BenchmarkDeltas5000DevServer(b *testing.B) {
	addr := devServer(b)
	c, err := client.Dial(client.Options{HostPort: addr, DataConverter: DataConverter()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	acts := testActivities(nil, b.TempDir())
	p := deltaScript(b)
	acts.Provider, acts.Model = p, p.Model()
	w := worker.New(c, "bench", worker.Options{})
	acts.Register(w)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	clock := &frameClock{}
	in, prompts := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- RunFront(ctx, FrontOptions{Client: c, TaskQueue: "bench", Session: "deltas", Since: -1,
			Start: Start{HeartbeatMs: 10000}}, in, clock)
	}()
	run := func() {
		clock.reset()
		if _, err := io.WriteString(prompts, `{"type":"prompt","message":"go"}`+"\n"); err != nil {
			b.Fatal(err)
		}
		select {
		case <-clock.done:
		case err := <-ran:
			b.Fatalf("the front stopped: %v", err)
		case <-time.After(time.Minute):
			b.Fatal("no agent_end in a minute")
		}
	}
	run() // the set-up step and a warm worker
	var t totals
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
		t.add(clock)
	}
	b.StopTimer()
	t.report(b, b.N)
	prompts.Close()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkDeltas5000InProcess(b *testing.B) {
	p := deltaScript(b)
	m := p.Model()
	clock := &frameClock{}
	s := engine.New(engine.Config{Provider: p, Model: &m, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}, Sink: clock})
	go s.Loop()
	defer s.Stop()
	run := func() {
		clock.reset()
		s.Post(func() {
			if err := s.Prompt("go", engine.PromptOptions{}); err != nil {
				panic(fmt.Sprint(err))
			}
		})
		<-clock.done
	}
	run()
	var t totals
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
		t.add(clock)
	}
	b.StopTimer()
	t.report(b, b.N)
}
