package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of the session's verbs (verbs_*.go) and of the stage and watch
// lists features plug into.

// gatedFiles is a SessionFiles whose methods wait for open before they do
// anything, so a test can hold a verb's I/O; entered is signalled on entry.
type gatedFiles struct {
	open    chan struct{}
	entered chan string
	mu      sync.Mutex
	files   map[string]*LoadedSession
	made    []string
}

func newGatedFiles() *gatedFiles {
	return &gatedFiles{open: make(chan struct{}), entered: make(chan string, 8), files: map[string]*LoadedSession{}}
}

func (g *gatedFiles) Create(id, parent string, entries []*Entry) (Store, string, error) {
	g.entered <- "create"
	<-g.open
	st := &MemoryStore{}
	for _, e := range entries {
		_ = st.Append(context.Background(), e)
	}
	file := "/s/" + id + ".jsonl"
	g.mu.Lock()
	g.made = append(g.made, file+" parent="+parent)
	g.mu.Unlock()
	return st, file, nil
}

func (g *gatedFiles) Open(path string) (*LoadedSession, error) {
	g.entered <- "open"
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	l, ok := g.files[path]
	if !ok {
		return nil, fmt.Errorf("no such session file: %s", path)
	}
	return l, nil
}

// gatedExporter waits for open, then records the snapshot.
type gatedExporter struct {
	open    chan struct{}
	entered chan string
	snap    ExportSnapshot
}

func (g *gatedExporter) Export(_ context.Context, path string, snap ExportSnapshot) (string, error) {
	g.entered <- "export"
	<-g.open
	g.snap = snap
	if path == "" {
		path = "default.html"
	}
	return path, nil
}

// gatedTitleStore is a Store whose SetTitle waits for open.
type gatedTitleStore struct {
	MemoryStore
	open    chan struct{}
	entered chan string
	title   string
}

func (g *gatedTitleStore) SetTitle(title, _ string) error {
	g.entered <- "title"
	<-g.open
	g.title = title
	return nil
}

// executorFree proves the executor serves other work while a verb's I/O
// is held: a Call must complete. (The bound only decides how long a
// failing test takes.)
func executorFree(t *testing.T, s *Session) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.Call(func() {}); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the executor is blocked while a verb waits on I/O")
	}
}

// call runs a verb on the executor and waits for its report.
func call[T any](s *Session, verb func(done func(T))) T {
	ch := make(chan T, 1)
	s.Call(func() { verb(func(v T) { ch <- v }) })
	return <-ch
}

func prompted(t *testing.T, s *Session, text string) {
	t.Helper()
	s.Call(func() {
		if err := s.Prompt(text, PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
}

// No verb waits on a disk on the executor (doc.go): loading, creating,
// exporting and renaming are held off it here, and the executor keeps
// serving.
func TestVerbsDoNoIOOnTheExecutor(t *testing.T) {
	t.Parallel()
	files := newGatedFiles()
	exp := &gatedExporter{open: files.open, entered: files.entered}
	title := &gatedTitleStore{open: files.open, entered: files.entered}
	s := startSession(t, Config{Provider: textReply("hi"), Files: files, Exporter: exp, Store: title, SessionFile: "/s/first.jsonl"})
	prompted(t, s, "one")
	files.files["/s/other.jsonl"] = &LoadedSession{ID: "other", File: "/s/other.jsonl"}

	type report struct {
		what string
		err  error
	}
	reports := make(chan report, 8)
	verbs := []struct {
		name string
		run  func()
	}{
		{"title", func() { s.SetSessionName("named", func(err error) { reports <- report{"title", err} }) }},
		{"export", func() { s.Export("", func(_ string, err error) { reports <- report{"export", err} }) }},
		{"create", func() { s.NewSession("", func(err error) { reports <- report{"new", err} }) }},
		{"open", func() { s.SwitchSession("/s/other.jsonl", func(err error) { reports <- report{"switch", err} }) }},
	}
	for _, v := range verbs {
		s.Call(v.run)
		if got := <-files.entered; got != v.name {
			t.Fatalf("entered %s, want %s", got, v.name)
		}
		executorFree(t, s)
		files.open <- struct{}{}
		if r := <-reports; r.err != nil {
			t.Fatalf("%s: %v", r.what, r.err)
		}
	}
	s.Call(func() {
		if id, file, name := s.set.id, s.set.file, s.set.name; id != "other" || file != "/s/other.jsonl" || name != "" {
			t.Fatalf("identity %s %s %q", id, file, name)
		}
	})
	if title.title != "named" || exp.snap.Name != "named" || len(exp.snap.Entries) != 2 {
		t.Fatalf("title %q, export %+v", title.title, exp.snap)
	}
}

// A switch keeps the session busy until the new record is in place: an
// abort sent meanwhile answers after the switch has reported.
func TestSwitchReportsBeforeIdleWaiters(t *testing.T) {
	t.Parallel()
	files := newGatedFiles()
	s := startSession(t, Config{Provider: textReply("hi"), Files: files})
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	done := make(chan struct{}, 2)
	s.Call(func() { s.NewSession("", func(error) { note("switched"); done <- struct{}{} }) })
	<-files.entered
	s.Call(func() {
		if s.Phase() != PhaseSwitching {
			t.Errorf("phase %v during the switch", s.Phase())
		}
		s.Abort(func() { note("abort answered"); done <- struct{}{} })
	})
	close(files.open)
	<-done
	<-done
	if strings.Join(order, ",") != "switched,abort answered" {
		t.Fatalf("order %v", order)
	}
}

// catalogOf is a ModelCatalog over a fixed list; keyless providers have a
// key.
type catalogOf struct {
	models []Model
	nokey  map[string]bool
}

func (c catalogOf) Available() []Model  { return c.models }
func (c catalogOf) HasKey(m Model) bool { return !c.nokey[m.Provider] }
func (c catalogOf) Find(p, id string) (Model, bool) {
	for _, m := range c.models {
		if m.Provider == p && m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

func reasoning(p, id string) Model {
	return Model{ID: id, API: "fake", Provider: p, Reasoning: true,
		Thinking: &ModelThinking{MinLevel: ThinkingLow, MaxLevel: ThinkingHigh, Mode: "effort"}}
}

// The restore rule is one: the recorded model when the catalog has it with
// a key, the recorded level when there is one, else the current level,
// clamped; the command line's choices are kept.
func TestResumeRestoreRule(t *testing.T) {
	t.Parallel()
	a, b, c := reasoning("a", "one"), reasoning("b", "two"), reasoning("c", "three")
	cat := catalogOf{models: []Model{a, b, c}, nokey: map[string]bool{"c": true}}
	entries := func(model string, level ThinkingLevel) []*Entry {
		es := []*Entry{{Type: EntryModelChange, ID: "e1", Model: model}}
		if level != "" {
			es = append(es, &Entry{Type: EntryThinkingLevelChange, ID: "e2", ParentID: "e1", ThinkingLevel: level})
		}
		return es
	}
	for _, tc := range []struct {
		name                 string
		record               []*Entry
		keepModel, keepLevel bool
		wantModel            string
		wantLevel            ThinkingLevel
	}{
		{"model and level", entries("b/two", ThinkingLow), false, false, "two", ThinkingLow},
		{"model, no level: current level clamped", entries("b/two", ""), false, false, "two", ThinkingHigh},
		{"model without a key stays", entries("c/three", ThinkingMedium), false, false, "one", ThinkingMedium},
		{"unknown model stays", entries("x/y", ""), false, false, "one", ThinkingHigh},
		{"command line keeps both", entries("b/two", ThinkingLow), true, true, "one", ThinkingHigh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startSession(t, Config{Provider: textReply("x"), Model: &a, ThinkingLevel: ThinkingXHigh, Models: cat})
			leaf := tc.record[len(tc.record)-1].ID
			s.Call(func() {
				if err := s.Resume(&LoadedSession{ID: "r", File: "/r.jsonl", Name: "R", Entries: tc.record, Leaf: leaf}, tc.keepModel, tc.keepLevel); err != nil {
					t.Fatal(err)
				}
				if s.set.model.ID != tc.wantModel || s.set.thinking != tc.wantLevel || s.set.name != "R" {
					t.Fatalf("model %s level %q name %q", s.set.model.ID, s.set.thinking, s.set.name)
				}
			})
		})
	}
}

// Branch, fork and clone write the branch into a new session whose parent
// is the current file; a missing file or a non-user entry fail with typed
// errors and change nothing.
func TestBranchCloneAndFailures(t *testing.T) {
	t.Parallel()
	files := newGatedFiles()
	close(files.open)
	s := startSession(t, Config{Provider: textReply("hi"), Files: files, SessionFile: "/s/first.jsonl"})
	go func() {
		for range files.entered {
		}
	}()
	prompted(t, s, "one")
	prompted(t, s, "two")
	var users []EntryText
	s.Call(func() { users = s.BranchUserEntries() })
	type branched struct {
		text string
		err  error
	}
	r := call(s, func(done func(branched)) {
		s.Branch(users[1].EntryID, func(text string, err error) { done(branched{text, err}) })
	})
	if r.err != nil || r.text != "two" {
		t.Fatalf("branch: %q %v", r.text, r.err)
	}
	s.Call(func() {
		if n := len(s.Messages()); n != 2 || s.set.file == "/s/first.jsonl" {
			t.Fatalf("after branch: %d messages, file %s", n, s.set.file)
		}
	})
	if err := call(s, func(done func(error)) { s.Clone(done) }); err != nil {
		t.Fatal(err)
	}
	r = call(s, func(done func(branched)) {
		s.Branch("nope", func(text string, err error) { done(branched{text, err}) })
	})
	if !errors.Is(r.err, ErrNotUserEntry) {
		t.Fatalf("branch from nothing: %v", r.err)
	}
	err := call(s, func(done func(error)) { s.SwitchSession("/s/missing.jsonl", done) })
	var se *SwitchError
	if !errors.As(err, &se) {
		t.Fatalf("switch to a missing file: %v", err)
	}
	files.mu.Lock()
	made := strings.Join(files.made, "\n")
	files.mu.Unlock()
	if !strings.Contains(made, "parent=/s/first.jsonl") || strings.Count(made, "\n") != 1 {
		t.Fatalf("files made:\n%s", made)
	}
	mem := startSession(t, Config{Provider: textReply("hi")})
	if err := call(mem, func(done func(error)) { mem.SwitchSession("x", done) }); !errors.Is(err, ErrNoSessionFiles) {
		t.Fatalf("switch in memory: %v", err)
	}
	if _, err := call2(mem, func(done func(string, error)) { mem.Export("", done) }); !errors.Is(err, ErrExportInMemory) {
		t.Fatalf("export in memory: %v", err)
	}
}

func call2[A, B any](s *Session, verb func(done func(A, B))) (A, B) {
	type pair struct {
		a A
		b B
	}
	p := call(s, func(done func(pair)) { verb(func(a A, b B) { done(pair{a, b}) }) })
	return p.a, p.b
}

// SetHostTools checks in the original's order and reports typed errors.
func TestSetHostToolsChecks(t *testing.T) {
	t.Parallel()
	builtin := &namedTool{name: "read"}
	s := startSession(t, Config{Provider: textReply("x"), Tools: []Tool{builtin},
		RebuildPrompt: func(p PromptParts) string { return fmt.Sprintf("%d tools", len(p.Tools)) }})
	obj := []byte(`{"type":"object"}`)
	for _, tc := range []struct {
		defs []HostToolDef
		want HostToolError
	}{
		{[]HostToolDef{{Name: " ", Description: "d", Parameters: obj}}, HostToolError{Problem: HostToolNoName}},
		{[]HostToolDef{{Name: "a", Description: "d", Parameters: obj}, {Name: "b", Parameters: obj}}, HostToolError{Problem: HostToolNoDescription, Index: 1, Name: "b"}},
		{[]HostToolDef{{Name: "a", Description: "d", Parameters: []byte(`[]`)}}, HostToolError{Problem: HostToolNoSchema, Name: "a"}},
		{[]HostToolDef{{Name: "a", Description: "d", Parameters: obj}, {Name: " a", Description: "d", Parameters: obj}}, HostToolError{Problem: HostToolNotUnique}},
		{[]HostToolDef{{Name: "read", Description: "d", Parameters: obj}}, HostToolError{Problem: HostToolConflict, Name: "read"}},
	} {
		s.Call(func() {
			_, err := s.SetHostTools(tc.defs)
			var he *HostToolError
			if !errors.As(err, &he) || *he != tc.want {
				t.Errorf("%+v: %v, want %+v", tc.defs, err, tc.want)
			}
		})
	}
	s.Call(func() {
		names, err := s.SetHostTools([]HostToolDef{{Name: "h", Description: "d", Parameters: obj}, {Name: "hid", Description: "d", Parameters: obj, Hidden: true}})
		if err != nil || strings.Join(names, ",") != "h,hid" || len(s.set.tools) != 2 || s.set.systemPrompt != "2 tools" {
			t.Fatalf("names %v err %v tools %d prompt %q", names, err, len(s.set.tools), s.set.systemPrompt)
		}
	})
}

type namedTool struct{ name string }

func (t *namedTool) Name() string             { return t.name }
func (t *namedTool) Description() string      { return t.name }
func (t *namedTool) Schema() []byte           { return []byte(`{"type":"object"}`) }
func (t *namedTool) Concurrency() Concurrency { return Shared }
func (t *namedTool) Run(context.Context, ToolCall, func(ToolResult)) (ToolResult, error) {
	return ToolResult{}, nil
}

// The post-run decision is a list: a stage after retry is consulted only
// when retry passes; every stage before the one that asks runs.
func TestPostRunStagesInOrder(t *testing.T) {
	t.Parallel()
	p := &failThen{n: 1, err: &ProviderError{Kind: ErrorOverloaded, Message: "overloaded"}}
	clock := NewManualClock(int64(DeterministicEpoch))
	s := startSession(t, Config{Provider: p, Sink: &recorder{}, Clock: clock})
	var seen []string
	s.Call(func() {
		first := func(r *run, aborted bool) *postRun { seen = append(seen, "first"); return nil }
		last := func(r *run, aborted bool) *postRun { seen = append(seen, "last"); return nil }
		s.stages = append(append([]postStage{first}, s.stages...), last)
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	advanceWhenWaiting(clock, DefaultRetryBase)
	waitIdle(s)
	// The failed run: first, then retry asks (last not consulted); the
	// retried run succeeds: first, retry passes, last.
	if got := strings.Join(seen, ","); got != "first,first,last" {
		t.Fatalf("stages ran %s", got)
	}
}

// A stream watch sees every event before it is applied and can end the
// call: the message fails with the watch's error, keeping what was
// applied up to and including the event that ended it.
func TestStreamWatchEndsTheCall(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("a", "b", "c", "d")})
	cut := errors.New("rule violated")
	var kinds []StreamEventKind
	s.Call(func() {
		s.watches = append(s.watches, func(r *run, ev StreamEvent) error {
			kinds = append(kinds, ev.Kind)
			if ev.Kind == StreamTextDelta && ev.Delta == "c" {
				return cut
			}
			return nil
		})
	})
	prompted(t, s, "go")
	s.Call(func() {
		msgs := s.Messages()
		a := msgs[len(msgs)-1].(*AssistantMessage)
		if a.StopReason != StopError || a.ErrorMessage != "rule violated" || a.Text() != "abc" {
			t.Fatalf("%s %q %q", a.StopReason, a.ErrorMessage, a.Text())
		}
	})
	if len(kinds) != 4 {
		t.Fatalf("watch saw %v", kinds)
	}
}
