package rpc

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
)

// popNow pops what the inbox lets through now, without waiting, runs it
// (an item logs its name) and returns the releases of the holds taken.
func popNow(q *inbox) (releases []func()) {
	for {
		q.mu.Lock()
		ready := q.next() >= 0
		q.mu.Unlock()
		if !ready {
			return releases
		}
		it, release, _ := q.pop()
		it.fn(release)
		releases = append(releases, release)
	}
}

// itemLog records the items run by popNow.
type itemLog []string

func (l *itemLog) item(name string, pass bool, h hold) inboxItem {
	return inboxItem{size: 1, pass: pass, hold: h, fn: func(func()) { *l = append(*l, name) }}
}

func (l *itemLog) take() string {
	s := strings.Join(*l, ",")
	*l = nil
	return s
}

// The inbox decides the order of input in one place: a holdPassing lets
// only the passing items by, in order, and keeps the rest in order; a
// holdAll lets nothing by; releasing resumes where it stopped.
func TestInboxHolds(t *testing.T) {
	var q inbox
	q.init(1 << 10)
	var log itemLog
	q.push(log.item("abort", true, holdPassing))
	q.push(log.item("prompt", false, holdNone))
	q.push(log.item("get_state", true, holdNone))
	q.push(log.item("switch", false, holdAll))
	q.push(log.item("abort2", true, holdNone))
	q.push(log.item("get_state2", true, holdNone))

	rel := popNow(&q)
	if got := log.take(); got != "abort,get_state,abort2,get_state2" {
		t.Fatalf("while abort holds: %s", got)
	}
	rel[0]() // the abort answered
	rel[0]() // twice is once
	rel = popNow(&q)
	if got := log.take(); got != "prompt,switch" {
		t.Fatalf("after abort: %s", got)
	}
	q.push(log.item("late", true, holdNone))
	popNow(&q)
	if got := log.take(); got != "" {
		t.Fatalf("holdAll let %s by", got)
	}
	rel[1]()
	popNow(&q)
	if got := log.take(); got != "late" {
		t.Fatalf("after the switch: %s", got)
	}
	q.close()
	if _, _, ok := q.pop(); ok {
		t.Fatal("pop after close")
	}
}

// slowExporter holds an export until released.
type slowExporter struct {
	entered, open chan struct{}
}

func (e slowExporter) Export(_ context.Context, path string, _ engine.ExportSnapshot) (string, error) {
	close(e.entered)
	<-e.open
	return path, nil
}

// An export renders off the executor: a prompt's stream goes on while it
// is held, and the commands sent after it (get_state) answer after it.
func TestExportHoldsInputNotTheStream(t *testing.T) {
	t.Parallel()
	exp := slowExporter{entered: make(chan struct{}), open: make(chan struct{})}
	pr, pw := io.Pipe()
	out := &syncBuffer{}
	srv := NewServer(out, Options{Version: "t"})
	gate := make(chan struct{})
	m := &engine.Model{ID: "m", API: "fake", Provider: "fake"}
	p := funcStream(func(ctx context.Context, fn func(engine.StreamEvent) error) error {
		fn(engine.StreamEvent{Kind: engine.StreamTextStart})
		fn(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: "before "})
		<-gate // the export is under way
		fn(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: "during"})
		fn(engine.StreamEvent{Kind: engine.StreamTextEnd})
		return fn(engine.StreamEvent{Kind: engine.StreamDone, StopReason: engine.StopStop})
	})
	srv.Attach(engine.New(engine.Config{Provider: p, Model: m, Sink: srv, Clock: engine.DeterministicEpoch,
		IDs: &engine.SequentialIDs{}, SessionFile: "/s.jsonl", Exporter: exp}))
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), pr) }()
	io.WriteString(pw, `{"id":"p","type":"prompt","message":"go"}`+"\n")
	io.WriteString(pw, `{"id":"x","type":"export_html","outputPath":"o.html"}`+"\n")
	io.WriteString(pw, `{"id":"g","type":"get_state"}`+"\n")
	<-exp.entered
	close(gate)
	// The run ends while the export is held.
	out.waitFor(`"type":"agent_end"`)
	if strings.Contains(out.String(), `"id":"g"`) {
		t.Fatal("get_state answered before the export it follows")
	}
	close(exp.open)
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if id := gjson.Get(l, "id").String(); id != "" {
			order = append(order, id)
		}
	}
	if strings.Join(order, ",") != "p,x,g" {
		t.Fatalf("responses %v\n%s", order, out.String())
	}
}

// funcStream adapts a function to engine.Provider.
type funcStream func(ctx context.Context, fn func(engine.StreamEvent) error) error

func (f funcStream) Stream(ctx context.Context, _ *engine.Request, fn func(engine.StreamEvent) error) error {
	return f(ctx, fn)
}

// An item's atFront runs once every item before it has been popped, even
// while a hold keeps the item itself queued (the EOF drain's start), and
// at once when nothing is before it.
func TestInboxAtFront(t *testing.T) {
	var q inbox
	q.init(1 << 10)
	var log itemLog
	fronts := 0
	eof := inboxItem{size: 0, fn: func(func()) { log = append(log, "eof") }, atFront: func() { fronts++ }}
	q.push(log.item("compact", false, holdPassing))
	q.push(log.item("prompt", false, holdNone))
	q.push(eof)
	if fronts != 0 {
		t.Fatal("atFront ran with items before it")
	}
	rel := popNow(&q) // compact runs and holds
	if got := log.take(); got != "compact" || fronts != 0 {
		t.Fatalf("ran %s, atFront %d times", got, fronts)
	}
	rel[0]()
	popNow(&q) // the prompt, then eof
	if got := log.take(); got != "prompt,eof" || fronts != 1 {
		t.Fatalf("ran %s, atFront %d times", got, fronts)
	}

	// Behind a hold: the item before it is popped and holds; atFront runs
	// though the item itself waits.
	q.push(log.item("compact", false, holdPassing))
	q.push(eof)
	rel = popNow(&q)
	if got := log.take(); got != "compact" || fronts != 2 {
		t.Fatalf("behind a hold: ran %s, atFront %d times", got, fronts)
	}
	rel[0]()
	popNow(&q)
	if got := log.take(); got != "eof" || fronts != 2 {
		t.Fatalf("ran %s, atFront %d times", got, fronts)
	}

	// Nothing before it: at once.
	q.push(eof)
	if fronts != 3 {
		t.Fatalf("atFront %d times", fronts)
	}
}
