package durable

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/tidwall/gjson"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// scriptActivities are a worker's activities on a fake script, no tools.
func scriptActivities(t *testing.T, script string) *Activities {
	t.Helper()
	sc, err := fakeprovider.Parse("script.json", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	p := fakeprovider.New(sc)
	return &Activities{Provider: p, Model: p.Model(), SystemPrompt: "You are a test.", Thinking: engine.ThinkingOff,
		Clock: engine.DeterministicEpoch}
}

// compactRun runs one workflow run in the test environment with the
// steps, and returns its frames and what it continued as (nil: it did
// not).
func compactRun(t *testing.T, acts *Activities, in Start, steps ...step) ([]string, *Start) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	return compactRunIn(t, env, in, steps...)
}

// compactRunIn is compactRun in an environment the caller prepared
// (mocked activities).
func compactRunIn(t *testing.T, env *testsuite.TestWorkflowEnvironment, in Start, steps ...step) ([]string, *Start) {
	t.Helper()
	for _, s := range steps {
		s := s
		env.RegisterDelayedCallback(func() { s.do(env) }, s.at)
	}
	var frames []string
	read := func() { frames = logFrames(t, env) }
	env.RegisterDelayedCallback(func() { read(); env.CancelWorkflow() }, steps[len(steps)-1].at+time.Hour)
	if in.SessionID == "" {
		in.SessionID, in.HeartbeatMs = "s1", 3000
	}
	env.ExecuteWorkflow(WorkflowName, in)
	next := continuedAsOrNil(t, env, false)
	if next == nil {
		return frames, nil
	}
	read()
	return frames, next
}

// cupdate sends an update and checks its outcome: wantErr "" for a
// success (then got receives its result, when not nil).
func cupdate(t *testing.T, name string, got *[]byte, wantErr string, args ...any) func(*testsuite.TestWorkflowEnvironment) {
	return func(env *testsuite.TestWorkflowEnvironment) {
		env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { t.Errorf("%s refused: %v", name, err) },
			OnComplete: func(res any, err error) {
				switch {
				case wantErr == "" && err != nil:
					t.Errorf("%s: %v", name, err)
				case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
					t.Errorf("%s: %v, want %q", name, err, wantErr)
				case got != nil && res != nil:
					*got = res.([]byte)
				}
			}}, args...)
	}
}

func carried(t *testing.T, next *Start) []engine.Message {
	t.Helper()
	msgs, err := decodeMessages(next.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// A reply that failed because the context did not fit: it leaves the
// context, the workflow compacts as in process (reason overflow,
// willRetry true) and sends the request again in the same run (a new
// agent_start); once idle the session continues as new, with no continue
// message.
func TestOverflowRecovery(t *testing.T) {
	acts := scriptActivities(t, `{"model":{"contextWindow":2000,"maxTokens":1000},"turns":[
		{"steps":[{"text":"I fixed the parser."},{"usage":{"input":400,"output":20}}]},
		{"steps":[{"error":{"status":400,"message":"prompt is too long: 2400 tokens > 2000 maximum"}}]},
		{"steps":[{"text":"## Goal\nFix the parser and test the lexer."},{"usage":{"input":300,"output":20}}]},
		{"steps":[{"text":"I fixed the parser."},{"usage":{"input":100,"output":5}}]},
		{"steps":[{"text":"Lexer tests added."},{"usage":{"input":300,"output":5}}]}]}`)
	frames, next := compactRun(t, acts, Start{},
		step{0, prompt(t, "Read the notes and fix the parser.", "")},
		step{time.Minute, prompt(t, "Now add a test for the lexer.", "")})
	got := types(frames)
	want := "agent_start turn_start message_start message_end message_start message_end turn_end agent_end " +
		"agent_start turn_start message_start message_end message_start message_end turn_end agent_end " +
		"auto_compaction_start auto_compaction_end agent_start turn_start message_start message_end turn_end agent_end"
	if got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	start, end := find(frames, "auto_compaction_start")[0], find(frames, "auto_compaction_end")[0]
	if start.Get("reason").String() != "overflow" || !end.Get("willRetry").Bool() || end.Get("result.summary").String() == "" {
		t.Fatalf("compaction %s %s", start.Raw, end.Raw)
	}
	if ends := find(frames, "agent_end"); ends[2].Get("messages.0.content.0.text").String() != "Lexer tests added." {
		t.Fatalf("the request sent again answered %s", ends[2].Raw)
	}
	if find(frames, "auto_retry_start") != nil {
		t.Fatal("an overflow was auto-retried")
	}
	if next == nil || next.Continue {
		t.Fatalf("continued as %+v, want a new run without the continue message", next)
	}
	msgs := carried(t, next)
	if msgs[0].Role() != "compactionSummary" {
		t.Fatalf("carried context starts with %s", msgs[0].Role())
	}
	for _, m := range msgs {
		if a, ok := m.(*engine.AssistantMessage); ok && a.StopReason == engine.StopError {
			t.Fatalf("the failed reply is still in the context: %+v", a)
		}
	}
	if next.Compaction == nil || next.Compaction.Kept != 0 && next.Compaction.Kept >= len(msgs)-1 || !next.Compaction.ReplyInContext {
		t.Fatalf("carried compaction state %+v (%d messages)", next.Compaction, len(msgs))
	}
}

// At most engine's bound of recoveries a run: every request overflows,
// each compaction succeeds (mocked), and after the third the run ends with
// the failure.
func TestOverflowRecoveryBounded(t *testing.T) {
	acts := scriptActivities(t, `{"loop":true,"turns":[
		{"steps":[{"error":{"status":400,"message":"prompt is too long: 2400 tokens > 2000 maximum"}}]}]}`)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	compactions := 0
	env.OnActivity(ActivityCompact, mock.Anything, mock.Anything).Return(func(_ context.Context, in CompactInput) (CompactOutput, error) {
		compactions++
		msgs, _ := decodeMessages(in.Messages)
		res := &engine.CompactionResult{Summary: "## Goal\nfit", FirstKeptEntryID: "00000001", PreserveData: []byte("{}")}
		out := append([]engine.Message{&engine.CompactionSummaryMessage{Summary: res.Summary}}, msgs...)
		return CompactOutput{End: engine.AutoCompactionOutcome(in.Reason, in.WillRetry, res, nil, false).AppendJSON(nil),
			Messages: encodeMessages(out)}, nil
	})
	frames, next := compactRunIn(t, env, Start{}, step{0, prompt(t, "go on", "")})
	if next == nil {
		t.Fatal("compacted in place and not continued as new")
	}
	if compactions != 3 || len(find(frames, "auto_compaction_end")) != 3 || len(find(frames, "agent_end")) != 4 {
		t.Fatalf("%d compactions, events %s", compactions, types(frames))
	}
	if last := find(frames, "agent_end")[3]; last.Get("messages.0.stopReason").String() != "error" {
		t.Fatalf("the run ended with %s", last.Raw)
	}
}

// Automatic compaction turned off (set_auto_compaction false): a reply
// over the threshold starts nothing; turned on again, the check before
// the next prompt compacts (its events before agent_start) and the prompt
// runs; the session then continues as new.
func TestCompactBeforePrompt(t *testing.T) {
	acts := scriptActivities(t, `{"model":{"contextWindow":2000,"maxTokens":1000},"turns":[
		{"steps":[{"text":"I fixed the parser."},{"usage":{"input":400,"output":20}}]},
		{"steps":[{"text":"I added lexer tests."},{"usage":{"input":1400,"output":100}}]},
		{"steps":[{"text":"## Goal\nFix the parser and test the lexer."},{"usage":{"input":300,"output":20}}]},
		{"steps":[{"text":"Lexer tests added."},{"usage":{"input":100,"output":5}}]},
		{"steps":[{"text":"Done."},{"usage":{"input":300,"output":5}}]}]}`)
	var st []byte
	state := func(env *testsuite.TestWorkflowEnvironment) {
		v, err := env.QueryWorkflow(QueryState)
		if err != nil {
			t.Fatal(err)
		}
		v.Get(&st)
	}
	frames, next := compactRun(t, acts, Start{},
		step{0, cupdate(t, UpdateAutoCompaction, nil, "", false)},
		step{time.Second, prompt(t, "Read the notes and fix the parser.", "")},
		step{time.Minute, prompt(t, "Now add a test for the lexer.", "")},
		step{2 * time.Minute, state},
		step{3 * time.Minute, cupdate(t, UpdateAutoCompaction, nil, "", true)},
		step{4 * time.Minute, prompt(t, "Anything left?", "")})
	if gjson.GetBytes(st, "autoCompactionEnabled").Bool() {
		t.Fatalf("get_state after set_auto_compaction false: %s", st)
	}
	got := types(frames)
	if !strings.Contains(got, "agent_end auto_compaction_start auto_compaction_end agent_start") || strings.Count(got, "auto_compaction_start") != 1 {
		t.Fatalf("events %s", got)
	}
	if start := find(frames, "auto_compaction_start")[0]; start.Get("reason").String() != "threshold" {
		t.Fatalf("%s", start.Raw)
	}
	if ends := find(frames, "agent_end"); len(ends) != 3 || ends[2].Get("messages.1.content.0.text").String() != "Done." {
		t.Fatalf("agent_end %v", ends)
	}
	if next == nil || next.Continue || next.Compaction == nil || next.Compaction.Auto == nil || !*next.Compaction.Auto {
		t.Fatalf("continued as %+v", next)
	}
}

// compact by hand: the result is the engine's CompactionResult, no
// auto_compaction events, and the session continues as new with the
// summary and the kept messages; a second compact with nothing new is
// refused Already compacted, and a session too small Nothing to compact.
func TestCompactByHand(t *testing.T) {
	script := `{"model":{"contextWindow":2000,"maxTokens":1000},"turns":[
		{"steps":[{"text":"I fixed the parser."},{"usage":{"input":400,"output":20}}]},
		{"steps":[{"text":"I added lexer tests."},{"usage":{"input":900,"output":100}}]},
		{"steps":[{"text":"## Goal\nFix the parser and test the lexer."},{"usage":{"input":300,"output":20}}]},
		{"steps":[{"text":"Lexer tests added."},{"usage":{"input":100,"output":5}}]}]}`
	acts := scriptActivities(t, script)
	var res []byte
	frames, next := compactRun(t, acts, Start{},
		step{0, cupdate(t, UpdateCompact, nil, engine.ErrNothingToCompact.Error(), CompactArgs{})},
		step{time.Second, prompt(t, "Read the notes and fix the parser.", "")},
		step{time.Minute, prompt(t, "Now add a test for the lexer.", "")},
		step{2 * time.Minute, cupdate(t, UpdateCompact, &res, "", CompactArgs{CustomInstructions: "Keep the lexer."})})
	if find(frames, "auto_compaction_start") != nil || strings.Count(types(frames), "agent_end") != 2 {
		t.Fatalf("events %s", types(frames))
	}
	r := gjson.ParseBytes(res)
	if r.Get("summary").String() != "## Goal\nFix the parser and test the lexer." || r.Get("firstKeptEntryId").String() == "" ||
		r.Get("tokensBefore").Int() != 1000 || !r.Get("details.readFiles").IsArray() || r.Get("preserveData").Raw != "{}" {
		t.Fatalf("result %s", res)
	}
	if next == nil || next.Continue {
		t.Fatalf("continued as %+v", next)
	}
	if msgs := carried(t, next); msgs[0].Role() != "compactionSummary" || next.Compaction == nil || next.Compaction.Kept != len(msgs)-1 {
		t.Fatalf("carried %d messages, %+v", len(msgs), next.Compaction)
	}
	// The next run: nothing new since the compaction.
	_, again := compactRun(t, scriptActivities(t, script), *next,
		step{0, cupdate(t, UpdateCompact, nil, engine.ErrAlreadyCompacted.Error(), CompactArgs{})})
	if again != nil {
		t.Fatal("a refused compact continued as new")
	}
}

// compact while a prompt runs aborts it first (its closing events), then
// compacts.
func TestCompactAbortsRun(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	acts.Compaction.KeepRecentTokens = 10 // the first exchange is summarised
	var res []byte
	frames, next := compactRun(t, acts, Start{},
		step{0, prompt(t, strings.Repeat("the parser walks the token list once. ", 3), "")},
		step{time.Minute, prompt(t, "demo:block", "")},
		step{time.Minute + time.Second/2, cupdate(t, UpdateSteer, nil, "", PromptInput{Message: "queued"})},
		step{time.Minute + time.Second, cupdate(t, UpdateCompact, &res, "", CompactArgs{})})
	ends := find(frames, "agent_end")
	if len(ends) != 2 || ends[1].Get("messages.1.stopReason").String() != "aborted" || len(res) == 0 || next == nil {
		t.Fatalf("events %s, result %s, next %v", types(frames), res, next != nil)
	}
	// The steering message the aborted run did not take is carried over.
	if q, err := decodeMessages(next.Steering); err != nil || len(q) != 1 || q[0].(*engine.UserMessage).Text() != "queued" {
		t.Fatalf("carried steering %v (%v)", q, err)
	}
}

// An abort during compact cancels it: Compaction cancelled, and the
// session goes on uncompacted.
func TestCompactAborted(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	env.OnActivity(ActivityCompact, mock.Anything, mock.Anything).Return(func(ctx context.Context, in CompactInput) (CompactOutput, error) {
		select {
		case <-ctx.Done():
			return CompactOutput{}, ctx.Err()
		case <-time.After(2 * time.Second):
			return CompactOutput{}, errors.New("not cancelled")
		}
	})
	env.SetTestTimeout(20 * time.Second)
	env.RegisterDelayedCallback(func() { prompt(t, "first, short", "")(env) }, 0)
	env.RegisterDelayedCallback(func() { cupdate(t, UpdateCompact, nil, engine.ErrCompactionCancelled.Error(), CompactArgs{})(env) }, time.Minute)
	env.RegisterDelayedCallback(func() { cupdate(t, UpdateAbort, nil, "")(env) }, time.Minute+time.Second)
	var st []byte
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(QueryState)
		v.Get(&st)
		env.CancelWorkflow()
	}, time.Hour)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
	var can *workflow.ContinueAsNewError
	if errors.As(env.GetWorkflowError(), &can) {
		t.Fatal("a cancelled compact continued as new")
	}
	if gjson.GetBytes(st, "messageCount").Int() != 2 || gjson.GetBytes(st, "isCompacting").Bool() {
		t.Fatalf("state after: %s", st)
	}
}

// A history recorded before the compactions inside a run (no version
// marker) replays as it ran: the overflow ends the run, nothing compacts.
func TestOverflowBeforeVersionNotRecovered(t *testing.T) {
	acts := scriptActivities(t, `{"turns":[
		{"steps":[{"error":{"status":400,"message":"prompt is too long: 2400 tokens > 2000 maximum"}}]}]}`)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	env.OnGetVersion(compactionsVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	frames, next := compactRunIn(t, env, Start{}, step{0, prompt(t, "go on", "")})
	if next != nil || find(frames, "auto_compaction_start") != nil || !strings.HasSuffix(types(frames), "turn_end agent_end") {
		t.Fatalf("events %s, continued %v", types(frames), next != nil)
	}
}
