package durable

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// queryRecord reads a whole run's record from the test environment.
func queryRecord(t *testing.T, env *testsuite.TestWorkflowEnvironment) RecordPage {
	t.Helper()
	p, err := readRun(context.Background(), func(_ context.Context, _ string, from int) (RecordPage, error) {
		var p RecordPage
		v, err := env.QueryWorkflow(QueryRecord, from)
		if err == nil {
			err = v.Get(&p)
		}
		return p, err
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func queryMessages(t *testing.T, env *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	v, err := env.QueryWorkflow(QueryMessages)
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := v.Get(&raw); err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// A session that compacted, continued as new, and then called a tool
// exports every message of both runs in order, with a compaction entry
// where the first run compacted whose first kept entry is the first
// message the summary kept; the file loads with sessionfile, and the
// session it resumes in process has the workflow's context.
func TestExportCompactionAndContinueAsNew(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("durable hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	acts := testActivities(t, dir)
	acts.Cwd = dir
	acts.Model.ContextWindow = 400 // threshold 200 tokens; the demo counts 4 characters a token
	var suite testsuite.WorkflowTestSuite

	// The first run: two prompts, the second over the threshold.
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	long := strings.Repeat("the parser walks the token list once. ", 25)
	env.RegisterDelayedCallback(func() { prompt(t, "first, short", "")(env) }, 0)
	env.RegisterDelayedCallback(func() { prompt(t, long, "")(env) }, time.Minute)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
	next := continuedAs(t, env)
	run1 := queryRecord(t, env)

	// The next run: the developer message's turn, then a tool call.
	env2 := suite.NewTestWorkflowEnvironment()
	acts.Register(env2)
	env2.RegisterDelayedCallback(func() { prompt(t, `demo:tool read {"path":"f.txt"}`, "")(env2) }, 30*time.Minute)
	var run2 RecordPage
	var durableMessages string
	env2.RegisterDelayedCallback(func() {
		run2 = queryRecord(t, env2)
		durableMessages = queryMessages(t, env2)
		env2.CancelWorkflow()
	}, time.Hour)
	env2.ExecuteWorkflow(WorkflowName, next)

	x, err := assemble([]RecordPage{run1, run2})
	if err != nil {
		t.Fatal(err)
	}
	if x.SessionID != "s1" || x.Cwd != dir || x.Created == 0 || x.SystemPrompt != "You are a test." || len(x.Tools) == 0 {
		t.Fatalf("exported %q cwd %q created %d prompt %q tools %d", x.SessionID, x.Cwd, x.Created, x.SystemPrompt, len(x.Tools))
	}
	var kinds []string
	var compaction *engine.Entry
	byID := map[string]*engine.Entry{}
	for i, e := range x.Entries {
		if want := fmt.Sprintf("%08x", i+1); e.ID != want || (i > 0 && e.ParentID != x.Entries[i-1].ID) {
			t.Fatalf("entry %d: id %q parent %q", i, e.ID, e.ParentID)
		}
		byID[e.ID] = e
		kind := e.Type
		if e.Type == engine.EntryMessage {
			kind = e.Message.Role()
		}
		if e.Type == engine.EntryCompaction {
			compaction = e
		}
		kinds = append(kinds, kind)
	}
	want := "model_change thinking_level_change user assistant user assistant compaction " +
		"developer assistant user assistant toolResult assistant"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("entries:\n got %s\nwant %s", got, want)
	}
	if x.Entries[0].Model != "fake/demo" || x.Leaf != x.Entries[len(x.Entries)-1].ID {
		t.Fatalf("model %q, leaf %q", x.Entries[0].Model, x.Leaf)
	}
	carried, err := decodeMessages(next.Messages)
	if err != nil {
		t.Fatal(err)
	}
	summary := carried[0].(*engine.CompactionSummaryMessage)
	c := compaction.Compaction
	if c.Summary != summary.Summary || c.TokensBefore != summary.TokensBefore || compaction.Timestamp != summary.Timestamp ||
		c.FromExtension == nil || *c.FromExtension || string(c.PreserveData) != "{}" || !bytes.Contains(c.Details, []byte("readFiles")) {
		t.Fatalf("compaction entry %s", compaction.AppendJSON(nil))
	}
	kept := byID[c.FirstKeptEntryID]
	if kept == nil || kept.Type != engine.EntryMessage || string(encodeMessage(kept.Message)) != string(encodeMessage(carried[1])) {
		t.Fatalf("first kept entry %q is not the first message the summary kept", c.FirstKeptEntryID)
	}

	// The file: it loads, and the session resumed from it has the
	// workflow's context, byte for byte.
	path := writeExport(t, x)
	loaded, err := sessionfile.Load(path)
	if err != nil || len(loaded.Warnings) > 0 {
		t.Fatalf("load: %v %v", err, loaded.Warnings)
	}
	if loaded.Header.ID != "s1" || loaded.Header.Cwd != dir || loaded.Leaf != x.Leaf || len(loaded.Entries) != len(x.Entries) {
		t.Fatalf("loaded header %+v, leaf %q, %d entries", loaded.Header, loaded.Leaf, len(loaded.Entries))
	}
	for i, e := range loaded.Entries {
		if got, want := string(e.AppendJSON(nil)), string(x.Entries[i].AppendJSON(nil)); got != want {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if got := resumedContext(t, path); got != durableMessages {
		t.Fatalf("the resumed context:\n%s\nthe workflow's:\n%s", got, durableMessages)
	}
}

// resumedContext is the context of an in-process session resumed from
// the session file at path, encoded as the get_messages query answers.
func resumedContext(t *testing.T, path string) string {
	t.Helper()
	l, _, err := sessionfile.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	acts := testActivities(t, t.TempDir())
	m := acts.Model
	s := engine.New(engine.Config{Provider: acts.Provider, Model: &m, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}})
	go s.Loop()
	defer func() { s.Call(s.CloseStore); s.Stop() }()
	var resumed []engine.Message
	s.Call(func() {
		if err := s.Resume(l, false, false); err != nil {
			t.Error(err)
		}
		resumed = s.Messages()
	})
	return string(contextJSON(resumed))
}

func contextJSON(ms []engine.Message) []byte {
	b := []byte{'['}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, encodeMessage(m)...)
	}
	return append(b, ']')
}

// writeExport writes x's session file in a temporary directory.
func writeExport(t *testing.T, x *Exported) string {
	t.Helper()
	var buf bytes.Buffer
	if err := x.WriteSessionFile(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), x.SessionID+".jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Three runs, as the workflow's hooks record them: a failed reply a retry
// replaced (in the record, not the context), a compaction in the first
// run, and one in the second whose first kept message was carried from
// the first: its first kept entry is that message's, recorded two runs
// back. The resumed file's context is the last run's.
func TestExportRefsAcrossRuns(t *testing.T) {
	ts := int64(0)
	user := func(text string) engine.Message {
		ts++
		return &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}, Attribution: "user", Timestamp: ts}
	}
	reply := func(text string, stop engine.StopReason) engine.Message {
		ts++
		return &engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}, API: "fake", Provider: "fake",
			Model: "demo", StopReason: stop, Timestamp: ts}
	}
	// compact emulates compact(): the summary and decoded copies of the
	// last kept messages replace the context.
	compact := func(s *session, summary string, kept int) {
		ts++
		next := []engine.Message{&engine.CompactionSummaryMessage{Summary: summary, TokensBefore: 100, Timestamp: ts}}
		copies, err := decodeMessages(encodeMessages(s.messages[len(s.messages)-kept:]))
		if err != nil {
			t.Fatal(err)
		}
		next = append(next, copies...)
		end := engine.AutoCompactionEnd{Action: engine.CompactionActionContextFull,
			Result: &engine.CompactionResult{Summary: summary, FirstKeptEntryID: "00000001", TokensBefore: 100, Details: []byte(`{"readFiles":[],"modifiedFiles":[]}`), PreserveData: []byte("{}")}}
		s.recordCompaction(end.AppendJSON(nil), next)
		s.messages = next
	}
	// continued is the run a continue-as-new starts with s's context.
	continued := func(s *session) *session {
		carried, err := decodeMessages(encodeMessages(s.messages))
		if err != nil {
			t.Fatal(err)
		}
		n := &session{in: Start{SessionID: "s", PrevRunID: "run"}, messages: carried}
		n.noteCarried()
		return n
	}
	setup := Setup{Model: engine.Model{ID: "demo", Provider: "fake"}, Cwd: "/work"}

	r1 := &session{in: Start{SessionID: "s"}, setup: setup, ready: true}
	r1.noteCarried()
	r1.add(user("u1"))
	r1.add(reply("overloaded", engine.StopError))
	r1.messages = r1.messages[:len(r1.messages)-1] // the retry drops it (run.go)
	r1.add(reply("a1", engine.StopStop))
	r1.add(user("u2"))
	r1.add(reply("a2", engine.StopStop))
	compact(r1, "first summary", 2) // keeps u2 a2

	r2 := continued(r1)
	r2.add(user("u3"))
	r2.add(reply("a3", engine.StopStop))
	compact(r2, "second summary", 3) // keeps a2 (carried) u3 a3

	r3 := continued(r2)
	r3.add(user("u4"))

	x, err := assemble([]RecordPage{r1.recordPage(0), r2.recordPage(0), r3.recordPage(0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	ids := map[string]string{}
	for _, e := range x.Entries {
		switch e.Type {
		case engine.EntryMessage:
			text := e.Message.(interface{ Text() string }).Text()
			ids[text] = e.ID
			got = append(got, text)
		case engine.EntryCompaction:
			got = append(got, e.Compaction.Summary+" from "+e.Compaction.FirstKeptEntryID)
		default:
			got = append(got, e.Type)
		}
	}
	want := fmt.Sprintf("model_change u1 overloaded a1 u2 a2 first summary from %s u3 a3 second summary from %s u4", ids["u2"], ids["a2"])
	if strings.Join(got, " ") != want {
		t.Fatalf("entries:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if x.Cwd != "/work" || x.Entries[0].Model != "fake/demo" {
		t.Fatalf("cwd %q, model %q", x.Cwd, x.Entries[0].Model)
	}
	if got, want := resumedContext(t, writeExport(t, x)), string(contextJSON(r3.messages)); got != want {
		t.Fatalf("the resumed context:\n%s\nthe last run's:\n%s", got, want)
	}
}

// A run's record is read in pages of about recordPageBytes, and the walk
// goes from the latest run back through PrevRunID, assembling the oldest
// first.
func TestExportPagesAndRuns(t *testing.T) {
	big := strings.Repeat("x", recordPageBytes/3)
	old := &session{in: Start{SessionID: "s"}}
	old.add(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("first")}, Timestamp: 1})
	cur := &session{in: Start{SessionID: "s", PrevRunID: "run-1"}}
	for i := 0; i < 7; i++ {
		cur.add(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(fmt.Sprint(i, big))}, Timestamp: int64(i + 2)})
	}
	var calls []string
	query := func(_ context.Context, runID string, from int) (RecordPage, error) {
		calls = append(calls, fmt.Sprintf("%s@%d", runID, from))
		s, id := cur, "run-2"
		if runID == "run-1" {
			s, id = old, "run-1"
		}
		p := s.recordPage(from)
		p.RunID = id
		return p, nil
	}
	x, err := exportRuns(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	// Pages of 3 messages (the third reaches the bound), 3 and 1; the
	// later pages ask for the run the first one named.
	if got := strings.Join(calls, " "); got != "@0 run-2@3 run-2@6 run-1@0" {
		t.Fatalf("queries %s", got)
	}
	if len(x.Entries) != 8 {
		t.Fatalf("%d entries", len(x.Entries))
	}
	for i, e := range x.Entries {
		if e.Timestamp != int64(i+1) {
			t.Fatalf("entry %d is the message of %d", i, e.Timestamp)
		}
	}
}

// A compaction by hand (compact) is in the export as the automatic one
// is: a compaction entry with compact's summary, after the messages it
// summarised, whose first kept entry is a message of the record.
func TestExportCompactByHand(t *testing.T) {
	script := `{"model":{"contextWindow":2000,"maxTokens":1000},"turns":[
		{"steps":[{"text":"I fixed the parser."},{"usage":{"input":400,"output":20}}]},
		{"steps":[{"text":"I added lexer tests."},{"usage":{"input":900,"output":100}}]},
		{"steps":[{"text":"## Goal\nFix the parser and test the lexer."},{"usage":{"input":300,"output":20}}]},
		{"steps":[{"text":"Lexer tests added."},{"usage":{"input":100,"output":5}}]}]}`
	acts := scriptActivities(t, script)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	var res []byte
	compactRunIn(t, env, Start{},
		step{time.Second, prompt(t, "Read the notes and fix the parser.", "")},
		step{time.Minute, prompt(t, "Now add a test for the lexer.", "")},
		step{2 * time.Minute, cupdate(t, UpdateCompact, &res, "", CompactArgs{})})
	x, err := assemble([]RecordPage{queryRecord(t, env)})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var c *engine.Entry
	for _, e := range x.Entries {
		kinds = append(kinds, string(e.Type))
		if e.Type == engine.EntryCompaction {
			c = e
		}
	}
	if c == nil || c.Compaction.Summary != "## Goal\nFix the parser and test the lexer." || c.Compaction.TokensBefore != 1000 {
		t.Fatalf("entries %v, compaction %+v (compact answered %s)", kinds, c, res)
	}
	if kinds[len(kinds)-1] != string(engine.EntryCompaction) {
		t.Fatalf("the compaction is not after the messages it summarised: %v", kinds)
	}
	kept := false
	for _, e := range x.Entries {
		kept = kept || (e.ID == c.Compaction.FirstKeptEntryID && e.Type == engine.EntryMessage)
	}
	if !kept {
		t.Fatalf("first kept entry %q is no message of the export: %v", c.Compaction.FirstKeptEntryID, kinds)
	}
}
