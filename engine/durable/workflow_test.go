package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/tidwall/gjson"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// testActivities are a worker's activities on the fake demo model and
// the built-in tools in dir.
func testActivities(t *testing.T, dir string) *Activities {
	p := fakeprovider.Demo()
	return &Activities{Provider: p, Model: p.Model(), SystemPrompt: "You are a test.", Thinking: engine.ThinkingOff,
		Tools: tools.Builtins(tools.Options{Cwd: dir}), Validator: schema.New(), Clock: engine.DeterministicEpoch}
}

// run drives one workflow in the SDK's test environment: steps are
// callbacks at workflow times (the environment skips idle time), and the
// workflow is cancelled at the end. It returns the event frames.
type step struct {
	at time.Duration
	do func(env *testsuite.TestWorkflowEnvironment)
}

// continuedAs is the input of the run a finished test run continued as
// (nil: it ended otherwise; fatal when must and it did not).
func continuedAsOrNil(t *testing.T, env *testsuite.TestWorkflowEnvironment, must bool) *Start {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		if must {
			t.Fatalf("the workflow ended with %v, want a continue-as-new", err)
		}
		return nil
	}
	var next Start
	if err := DataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	return &next
}

func continuedAs(t *testing.T, env *testsuite.TestWorkflowEnvironment) Start {
	t.Helper()
	return *continuedAsOrNil(t, env, true)
}

func runWorkflow(t *testing.T, acts *Activities, steps ...step) (*testsuite.TestWorkflowEnvironment, []string) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	for _, s := range steps {
		s := s
		env.RegisterDelayedCallback(func() { s.do(env) }, s.at)
	}
	var frames []string
	end := steps[len(steps)-1].at + time.Hour
	env.RegisterDelayedCallback(func() {
		frames = logFrames(t, env)
		env.CancelWorkflow()
	}, end)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
	return env, frames
}

// queryEvents reads the whole event log of a test workflow.
func queryEvents(t *testing.T, env *testsuite.TestWorkflowEnvironment) EventsResult {
	t.Helper()
	v, err := env.QueryWorkflow(QueryEvents, int64(0))
	if err != nil {
		t.Fatal(err)
	}
	var res EventsResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// logFrames is the event log's frames, one encoded event each.
func logFrames(t *testing.T, env *testsuite.TestWorkflowEnvironment) []string {
	t.Helper()
	var out []string
	for _, f := range queryEvents(t, env).Frames {
		out = append(out, string(f.Data))
	}
	return out
}

func prompt(t *testing.T, text string, wantErr string) func(*testsuite.TestWorkflowEnvironment) {
	return func(env *testsuite.TestWorkflowEnvironment) {
		env.UpdateWorkflow(UpdatePrompt, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {
				if wantErr != "" {
					t.Errorf("prompt %q accepted, want refused with %q", text, wantErr)
				}
			},
			OnReject: func(err error) {
				if wantErr == "" || !strings.Contains(err.Error(), wantErr) {
					t.Errorf("prompt %q refused: %v (want %q)", text, err, wantErr)
				}
			},
			OnComplete: func(any, error) {},
		}, PromptInput{Message: text})
	}
}

// types lists the frames' types.
func types(frames []string) string {
	var out []string
	for _, f := range frames {
		out = append(out, gjson.Get(f, "type").String())
	}
	return strings.Join(out, " ")
}

func find(frames []string, typ string) []gjson.Result {
	var out []gjson.Result
	for _, f := range frames {
		if gjson.Get(f, "type").String() == typ {
			out = append(out, gjson.Parse(f))
		}
	}
	return out
}

func TestPromptToolLoop(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("durable hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, frames := runWorkflow(t, testActivities(t, dir),
		step{0, prompt(t, `demo:tool read {"path":"f.txt"}`, "")})
	want := "agent_start turn_start message_start message_end message_start message_end " +
		"tool_execution_start tool_execution_end message_start message_end turn_end " +
		"turn_start message_start message_end turn_end agent_end"
	if got := types(frames); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	end := find(frames, "tool_execution_end")[0]
	if !strings.Contains(end.Get("result.content.0.text").String(), "durable hello") {
		t.Errorf("read's result: %s", end.Raw)
	}
	last := find(frames, "agent_end")[0].Get("messages.@reverse.0.content.0.text").String()
	if !strings.HasPrefix(last, "Tool read returned:") {
		t.Errorf("last reply %q", last)
	}
	v, err := env.QueryWorkflow(QueryStats)
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := v.Get(&raw); err != nil {
		t.Fatal(err)
	}
	var st engine.SessionStats
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if st.UserMessages != 1 || st.AssistantMessages != 2 || st.ToolCalls != 1 || st.ToolResults != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestBusyPromptRefusedSteerAndAbort(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	steered := make(chan struct{})
	_, frames := runWorkflow(t, acts,
		step{0, prompt(t, "demo:block", "")},
		step{time.Second, prompt(t, "second", engine.ErrBusy.Error())},
		step{2 * time.Second, func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(UpdateSteer, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("steer refused: %v", err) },
				OnComplete: func(any, error) { close(steered) }}, PromptInput{Message: "queued"})
		}},
		step{3 * time.Second, func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(UpdateAbort, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("abort refused: %v", err) },
				OnComplete: func(_ any, err error) {
					if err != nil {
						t.Errorf("abort: %v", err)
					}
				}})
		}})
	<-steered
	ends := find(frames, "message_end")
	a := ends[1]
	if a.Get("message.stopReason").String() != "aborted" {
		t.Fatalf("the blocked reply ended %s", a.Raw)
	}
	if got := types(frames); !strings.HasSuffix(got, "turn_end agent_end") {
		t.Fatalf("events: %s", got)
	}
}

// A tool whose worker was lost: a non-idempotent one is reported as
// interrupted and never run again; an idempotent one runs again.
func TestLostToolCall(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		runs       int32
		want       string
	}{
		{"bash", `{"command":"echo once >> ran"}`, 1, fmt.Sprintf(InterruptedMessage, "bash")},
		{"read", `{"path":"f.txt"}`, 3, "Tool call failed after 3 attempts"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			acts := testActivities(t, t.TempDir())
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			acts.Register(env)
			var runs atomic.Int32
			env.OnActivity(ActivityTool, mock.Anything, mock.Anything).Return(func(ctx context.Context, in ToolInput) (ToolOutput, error) {
				runs.Add(1)
				if activity.GetInfo(ctx).ActivityID != in.ID {
					t.Errorf("activity id %q, want the call id %q", activity.GetInfo(ctx).ActivityID, in.ID)
				}
				return ToolOutput{}, temporal.NewHeartbeatTimeoutError()
			})
			var frames []string
			env.RegisterDelayedCallback(func() { prompt(t, "demo:tool "+tc.tool+" "+tc.args, "")(env) }, 0)
			env.RegisterDelayedCallback(func() {
				v, _ := env.QueryWorkflow(QueryEvents, int64(0))
				var res EventsResult
				_ = v.Get(&res)
				for _, f := range res.Frames {
					frames = append(frames, string(f.Data))
				}
				env.CancelWorkflow()
			}, time.Hour)
			env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
			if got := runs.Load(); got != tc.runs {
				t.Errorf("the tool ran %d times, want %d", got, tc.runs)
			}
			end := find(frames, "tool_execution_end")
			if len(end) != 1 || !strings.HasPrefix(end[0].Get("result.content.0.text").String(), tc.want) || !end[0].Get("isError").Bool() {
				t.Fatalf("tool_execution_end %v, want %q", end, tc.want)
			}
		})
	}
}

func update(t *testing.T, name, text string) func(*testsuite.TestWorkflowEnvironment) {
	return func(env *testsuite.TestWorkflowEnvironment) {
		env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s refused: %v", name, err) },
			OnComplete: func(_ any, err error) {
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}}, PromptInput{Message: text})
	}
}

// A steering message sent while a tool runs starts the next turn once
// the tool is done; a follow-up waits until the run would stop; both are
// announced with queue_update as they are queued and taken.
func TestSteerAndFollowUpDuringTool(t *testing.T) {
	dir := t.TempDir()
	_, frames := runWorkflow(t, testActivities(t, dir),
		step{0, prompt(t, `demo:tool bash {"command":"while [ ! -e go ]; do sleep 0.01; done; echo first"}`, "")},
		step{time.Second, update(t, UpdateSteer, "change of plan")},
		step{time.Second, update(t, UpdateFollowUp, "and then this")},
		step{2 * time.Second, func(*testsuite.TestWorkflowEnvironment) {
			if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
				t.Error(err)
			}
		}})
	var users, replies []string
	for _, m := range find(frames, "message_end") {
		switch m.Get("message.role").String() {
		case "user":
			users = append(users, m.Get("message.content.0.text").String())
		case "assistant":
			replies = append(replies, m.Get("message.content.0.text").String())
		}
	}
	if len(users) != 3 || users[1] != "change of plan" || users[2] != "and then this" {
		t.Fatalf("user messages %q", users)
	}
	if len(replies) != 3 || !strings.HasSuffix(replies[1], "You said: change of plan") || !strings.HasSuffix(replies[2], "You said: and then this") {
		t.Fatalf("replies %q", replies)
	}
	if n := len(find(frames, "agent_end")); n != 1 {
		t.Fatalf("%d agent_end, want one run: %s", n, types(frames))
	}
	var queues []string
	for _, q := range find(frames, "queue_update") {
		queues = append(queues, q.Get("steering").Raw+q.Get("followUp").Raw)
	}
	want := []string{`["change of plan"][]`, `["change of plan"]["and then this"]`, `[]["and then this"]`, `[][]`}
	if strings.Join(queues, " ") != strings.Join(want, " ") {
		t.Fatalf("queue_update %q, want %q", queues, want)
	}
}

// An abort while bash runs ends the call with an error result and the
// run with the aborted reply, as in process. (The test environment
// resolves a cancelled activity at once, without waiting for its answer:
// that the result is bash's own "Command aborted", recorded with the
// cancellation, is temporal_steer_and_abort_signals' to check on a real
// server.)
func TestAbortMidTool(t *testing.T) {
	dir := t.TempDir()
	_, frames := runWorkflow(t, testActivities(t, dir),
		step{0, prompt(t, `demo:tool bash {"command":"sleep 30"}`, "")},
		step{time.Second, func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(UpdateAbort, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("abort refused: %v", err) },
				OnComplete: func(_ any, err error) {
					if err != nil {
						t.Errorf("abort: %v", err)
					}
				}})
		}})
	end := find(frames, "tool_execution_end")
	if len(end) != 1 || !end[0].Get("isError").Bool() {
		t.Fatalf("tool_execution_end %v", end)
	}
	want := "tool_execution_end message_start message_end turn_end turn_start message_start message_end turn_end agent_end"
	if got := types(frames); !strings.HasSuffix(got, want) {
		t.Fatalf("events:\n got %s\nwant ... %s", got, want)
	}
	if last := find(frames, "message_end"); last[len(last)-1].Get("message.stopReason").String() != "aborted" {
		t.Fatalf("last reply %s", last[len(last)-1].Raw)
	}
}

// A worker lost after its tool took effect and before the result was
// recorded (the mock runs the real tool, then fails the attempt as a
// lost worker does): edit is reported interrupted and not run again, so
// the file shows the edit once; read runs again and its result arrives.
func TestLostAfterEffect(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		runs       int32
		want       string
		isError    bool
	}{
		{"edit", `{"edits":[{"path":"notes.txt","old_text":"v1","new_text":"v1 v2"}]}`, 1, fmt.Sprintf(InterruptedMessage, "edit"), true},
		{"read", `{"path":"notes.txt"}`, 2, "v1", false},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("v1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			acts := testActivities(t, dir)
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			acts.Register(env)
			var runs atomic.Int32
			env.OnActivity(ActivityTool, mock.Anything, mock.Anything).Return(func(ctx context.Context, in ToolInput) (ToolOutput, error) {
				out, err := acts.RunTool(ctx, in)
				if runs.Add(1) == 1 {
					return ToolOutput{}, temporal.NewHeartbeatTimeoutError()
				}
				return out, err
			})
			var frames []string
			env.RegisterDelayedCallback(func() { prompt(t, "demo:tool "+tc.tool+" "+tc.args, "")(env) }, 0)
			env.RegisterDelayedCallback(func() {
				v, _ := env.QueryWorkflow(QueryEvents, int64(0))
				var res EventsResult
				_ = v.Get(&res)
				for _, f := range res.Frames {
					frames = append(frames, string(f.Data))
				}
				env.CancelWorkflow()
			}, time.Hour)
			env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
			if got := runs.Load(); got != tc.runs {
				t.Errorf("the tool ran %d times, want %d", got, tc.runs)
			}
			end := find(frames, "tool_execution_end")
			if len(end) != 1 || end[0].Get("result.content.0.text").String() != tc.want || end[0].Get("isError").Bool() != tc.isError {
				t.Fatalf("tool_execution_end %v, want %q", end, tc.want)
			}
			b, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
			if err != nil || (tc.tool == "edit") != (string(b) == "v1 v2\n") {
				t.Fatalf("notes.txt %q after %s", b, tc.tool)
			}
		})
	}
}

// Host tools: registered by an update (checked by the engine's rule), a
// call is a host_tool_call in the log and the workflow waits for the
// host's reply, an update; partial results become tool_execution_update.
// An abort withdraws a call (host_tool_cancel) and a late reply is
// ignored.
func TestHostToolUpdates(t *testing.T) {
	dir := t.TempDir()
	acts := testActivities(t, dir)
	echo := HostTool{Name: "echo_host", Description: "Echo a value", Parameters: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)}
	set := func(tools []HostTool, wantErr string) func(*testsuite.TestWorkflowEnvironment) {
		return func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(UpdateSetHostTools, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("set_host_tools refused: %v", err) },
				OnComplete: func(v any, err error) {
					if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
						t.Errorf("set_host_tools: %v, want %q", err, wantErr)
					}
				}}, tools)
		}
	}
	reply := func(name, id, text string) func(*testsuite.TestWorkflowEnvironment) {
		return func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s refused: %v", name, err) },
				OnComplete: func(any, error) {}},
				HostReply{ID: id, Result: ToolOutput{Content: []engine.ContentBlock{engine.TextBlock(text)}, Raw: json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}],"extra":true}`)}})
		}
	}
	_, frames := runWorkflow(t, acts,
		step{0, set([]HostTool{{Name: "read", Description: "mine", Parameters: json.RawMessage(`{}`)}}, `host tool "read" conflicts with an existing tool`)},
		step{0, set([]HostTool{echo}, "")},
		step{time.Second, prompt(t, `demo:tool echo_host {"message":"hi"}`, "")},
		// a call that fails its schema never reaches the host
		step{time.Hour, reply(UpdateHostPartial, "host_1", "working")},
		step{2 * time.Hour, reply(UpdateHostResult, "host_1", "hi, from the host")},
		step{3 * time.Hour, prompt(t, `demo:tool echo_host {"message":7}`, "")},
		step{4 * time.Hour, prompt(t, `demo:tool echo_host {"message":"slow"}`, "")},
		step{5 * time.Hour, func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(UpdateAbort, "", &testsuite.TestUpdateCallback{OnAccept: func() {}, OnReject: func(error) {}, OnComplete: func(any, error) {}})
		}},
		step{6 * time.Hour, reply(UpdateHostResult, "host_2", "too late")})
	want := []string{"host_tool_call host_1 call_demo_1", "tool_execution_update working", "tool_execution_end false {\"content\":[{\"type\":\"text\",\"text\":\"hi, from the host\"}],\"extra\":true}",
		"tool_execution_end true Validation failed for tool \"echo_host\":", "host_tool_call host_2 call_demo_5", "host_tool_cancel host_2", "tool_execution_end true Host tool \"echo_host\" was aborted"}
	var got []string
	for _, f := range frames {
		g := gjson.Parse(f)
		switch g.Get("type").String() {
		case "host_tool_call":
			got = append(got, "host_tool_call "+g.Get("id").String()+" "+g.Get("toolCallId").String())
		case "tool_execution_update":
			got = append(got, "tool_execution_update "+g.Get("partialResult.content.0.text").String())
		case "host_tool_cancel":
			got = append(got, "host_tool_cancel "+g.Get("targetId").String())
		case "tool_execution_end":
			res := g.Get("result").Raw
			if g.Get("isError").Bool() {
				res = strings.SplitN(g.Get("result.content.0.text").String(), "\n", 2)[0]
			}
			got = append(got, "tool_execution_end "+g.Get("isError").Raw+" "+res)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("host tool events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A reply that shows the context over the threshold: the workflow
// compacts as in process (auto_compaction_start, the summary activity,
// auto_compaction_end with the engine's result) and continues as new
// with the summary and the kept messages, the event numbering and the
// developer message that resumes the work.
func TestContinueAsNewAtCompaction(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	acts.Model.ContextWindow = 400 // threshold 200 tokens; the demo counts 4 characters a token
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	long := strings.Repeat("the parser walks the token list once. ", 25)
	env.RegisterDelayedCallback(func() { prompt(t, "first, short", "")(env) }, 0)
	env.RegisterDelayedCallback(func() { prompt(t, long, "")(env) }, time.Minute)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
	next := continuedAs(t, env)
	msgs, err := decodeMessages(next.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 2 || msgs[0].Role() != "compactionSummary" || !next.Continue {
		t.Fatalf("carried %d messages, first %s, continue %v", len(msgs), msgs[0].Role(), next.Continue)
	}
	if next.Setup == nil || next.Seq == 0 {
		t.Fatalf("carried setup %v, seq %d", next.Setup, next.Seq)
	}
	res := queryEvents(t, env)
	first := logFrames(t, env)
	if got := types(first); !strings.HasSuffix(got, "agent_end auto_compaction_start auto_compaction_end") || res.Last != next.Seq {
		t.Fatalf("events %s (last %d, carried %d)", got, res.Last, next.Seq)
	}
	start, end := find(first, "auto_compaction_start")[0], find(first, "auto_compaction_end")[0]
	if start.Get("reason").String() != "threshold" || end.Get("result.summary").String() == "" || end.Get("result.summary").String() != msgs[0].(*engine.CompactionSummaryMessage).Summary {
		t.Fatalf("compaction %s %s", start.Raw, end.Raw)
	}

	// The next run: its events go on from the carried seq, and it starts
	// with the developer message.
	env2 := suite.NewTestWorkflowEnvironment()
	acts.Register(env2)
	var frames []Frame
	env2.RegisterDelayedCallback(func() {
		frames = queryEvents(t, env2).Frames
		env2.CancelWorkflow()
	}, time.Hour)
	env2.ExecuteWorkflow(WorkflowName, next)
	if len(frames) == 0 || frames[0].Seq != next.Seq+1 {
		t.Fatalf("the next run's first event %v, want seq %d", frames, next.Seq+1)
	}
	var texts []string
	for _, f := range frames {
		texts = append(texts, string(f.Data))
	}
	dev := find(texts, "message_end")
	if len(dev) == 0 || dev[0].Get("message.role").String() != "developer" || dev[0].Get("message.content.0.text").String() != engine.ContinueMessage {
		t.Fatalf("the next run starts with %v", dev)
	}
}
