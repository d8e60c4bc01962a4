package durable

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/xcsh-go/xcsh/engine"
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
