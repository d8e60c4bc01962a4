package durable

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools"
)

// testGate asks before every bash command, in the words of cmd/xcsh's
// confirmation policy (which lives in package main).
func testGate(timeout time.Duration) func(context.Context, engine.ToolCall) *engine.ToolResult {
	return func(ctx context.Context, call engine.ToolCall) *engine.ToolResult {
		if call.Name != "bash" {
			return nil
		}
		var a struct{ Command string }
		_ = json.Unmarshal(call.Arguments, &a)
		reply, err := call.UI.Dialog(ctx, engine.DialogRequest{Method: engine.DialogConfirm, Title: "Run this command?", Message: a.Command, Timeout: timeout})
		if err == nil && reply.Confirmed && !reply.Cancelled {
			return nil
		}
		why := "declined"
		if reply.TimedOut {
			why = "did not answer in time"
		}
		res := errorResult("The user " + why + ": not allowed to run the command.")
		return &res
	}
}

func answer(t *testing.T, id string, r engine.DialogReply) func(*testsuite.TestWorkflowEnvironment) {
	return func(env *testsuite.TestWorkflowEnvironment) {
		env.UpdateWorkflow(UpdateDialog, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("answer %s refused: %v", id, err) },
			OnComplete: func(_ any, err error) {
				if err != nil {
					t.Errorf("answer %s: %v", id, err)
				}
			}}, DialogResponse{ID: id, Reply: r})
	}
}

func abort(env *testsuite.TestWorkflowEnvironment) {
	env.UpdateWorkflow(UpdateAbort, "", &testsuite.TestUpdateCallback{OnAccept: func() {}, OnReject: func(error) {}, OnComplete: func(any, error) {}})
}

// dialogEvents are the frames of the tool calls and their dialogs, one a
// line: what a scenario's reader of the stream would check.
func dialogEvents(frames []string) string {
	var out []string
	for _, f := range frames {
		g := gjson.Parse(f)
		switch g.Get("type").String() {
		case "tool_execution_start":
			out = append(out, "start "+g.Get("toolName").String())
		case "extension_ui_request":
			// the frame as written, less its type
			out = append(out, "ui "+strings.TrimPrefix(f, `{"type":"extension_ui_request",`))
		case "tool_execution_end":
			out = append(out, "end "+g.Get("isError").Raw+" "+g.Get("result.content.0.text").String())
		case "message_end":
			if g.Get("message.stopReason").String() == "aborted" {
				out = append(out, "aborted reply")
			}
		}
	}
	return strings.Join(out, "\n")
}

// activityIDs records the tool activities' ids as they start.
type activityIDs struct {
	mu  sync.Mutex
	ids []string
}

func (a *activityIDs) wrap(acts *Activities) {
	for i, t := range acts.Tools {
		acts.Tools[i] = idTool{t, a}
	}
}

func (a *activityIDs) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.ids, " ")
}

type idTool struct {
	engine.Tool
	ids *activityIDs
}

func (t idTool) QuestionsFirst() bool { return asksFirst(t.Tool) }

func (t idTool) Run(ctx context.Context, call engine.ToolCall, up func(engine.ToolResult)) (engine.ToolResult, error) {
	t.ids.mu.Lock()
	t.ids.ids = append(t.ids.ids, activity.GetInfo(ctx).ActivityID)
	t.ids.mu.Unlock()
	return t.Tool.Run(ctx, call, up)
}

// The ask tool's question goes to the host from the workflow; the answer,
// an update, is the tool's result. The call's first step stops at the
// question, the second runs with the answer (activity ids call and
// call/2); an answer to no waiting dialog is ignored.
func TestDialogAskAnswered(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	acts.Tools = tools.Builtins(tools.Options{Cwd: t.TempDir(), HostUI: true})
	var ids activityIDs
	ids.wrap(acts)
	_, frames := runWorkflow(t, acts,
		step{0, prompt(t, `demo:tool ask {"question":"Which database?","options":["SQLite","Postgres"]}`, "")},
		step{time.Hour, answer(t, "ui_9", engine.DialogReply{Value: "SQLite", HasValue: true})},
		step{2 * time.Hour, answer(t, "ui_1", engine.DialogReply{Value: "Postgres", HasValue: true})},
		step{3 * time.Hour, answer(t, "ui_1", engine.DialogReply{Value: "too late", HasValue: true})})
	want := `start ask
ui "id":"ui_1","method":"select","title":"Which database?","options":["SQLite","Postgres"]}
end false Postgres`
	if got := dialogEvents(frames); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if d := find(frames, "tool_execution_end")[0].Get("result.details").Raw; d != `{"kind":"select","answer":"Postgres"}` {
		t.Errorf("details %s", d)
	}
	if got := ids.String(); got != "call_demo_1 call_demo_1/2" {
		t.Errorf("tool activities %q", got)
	}
}

// The confirm gate applies on the worker: confirmed, the command runs
// once; declined, it never runs and the model sees the gate's text.
func TestDialogConfirmGate(t *testing.T) {
	dir := t.TempDir()
	acts := testActivities(t, dir)
	acts.Gate = testGate(0)
	_, frames := runWorkflow(t, acts,
		step{0, prompt(t, `demo:tool bash {"command":"echo ran >> log"}`, "")},
		step{time.Hour, answer(t, "ui_1", engine.DialogReply{Confirmed: true})},
		step{2 * time.Hour, prompt(t, `demo:tool bash {"command":"echo again >> log"}`, "")},
		step{3 * time.Hour, answer(t, "ui_2", engine.DialogReply{Confirmed: false})})
	want := `start bash
ui "id":"ui_1","method":"confirm","title":"Run this command?","message":"echo ran >> log"}
end false (no output)
start bash
ui "id":"ui_2","method":"confirm","title":"Run this command?","message":"echo again >> log"}
end true The user declined: not allowed to run the command.`
	if got := dialogEvents(frames); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "log")); err != nil || string(b) != "ran\n" {
		t.Fatalf("log %q, %v: want the confirmed command run once", b, err)
	}
}

// A question nobody answers resolves to its default when its timeout
// passes on workflow time: the host is told to close it (cancel), and an
// answer after that is ignored.
func TestDialogTimeoutDefault(t *testing.T) {
	dir := t.TempDir()
	acts := testActivities(t, dir)
	acts.Gate = testGate(30 * time.Second)
	_, frames := runWorkflow(t, acts,
		step{0, prompt(t, `demo:tool bash {"command":"echo ran >> log"}`, "")},
		step{time.Hour, answer(t, "ui_1", engine.DialogReply{Confirmed: true})})
	want := `start bash
ui "id":"ui_1","method":"confirm","title":"Run this command?","message":"echo ran >> log","timeout":30000}
ui "id":"ui_2","method":"cancel","targetId":"ui_1"}
end true The user did not answer in time: not allowed to run the command.`
	if got := dialogEvents(frames); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "log")); err == nil {
		t.Fatal("the command ran")
	}
}

// An abort while a question waits withdraws it (cancel) and gives the
// call the in-process abort: the ask tool's "Operation aborted", the
// gate's decline; the run ends with the aborted reply.
func TestDialogAbortWithdraws(t *testing.T) {
	dir := t.TempDir()
	acts := testActivities(t, dir)
	acts.Tools = tools.Builtins(tools.Options{Cwd: dir, HostUI: true})
	acts.Gate = testGate(0)
	_, frames := runWorkflow(t, acts,
		step{0, prompt(t, `demo:tool ask {"question":"Name?"}`, "")},
		step{time.Hour, abort},
		step{2 * time.Hour, prompt(t, `demo:tool bash {"command":"echo ran >> log"}`, "")},
		step{3 * time.Hour, abort},
		step{4 * time.Hour, answer(t, "ui_3", engine.DialogReply{Confirmed: true})})
	want := `start ask
ui "id":"ui_1","method":"input","title":"Name?"}
ui "id":"ui_2","method":"cancel","targetId":"ui_1"}
end true Operation aborted
aborted reply
start bash
ui "id":"ui_3","method":"confirm","title":"Run this command?","message":"echo ran >> log"}
ui "id":"ui_4","method":"cancel","targetId":"ui_3"}
end true The user declined: not allowed to run the command.
aborted reply`
	if got := dialogEvents(frames); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "log")); err == nil {
		t.Fatal("the command ran")
	}
}

// midwayTool asks after it has taken effect (as an extension's tool may).
type midwayTool struct{ dir string }

func (midwayTool) Name() string                    { return "midway" }
func (midwayTool) Description() string             { return "writes, then asks" }
func (midwayTool) Schema() []byte                  { return []byte(`{"type":"object"}`) }
func (midwayTool) Concurrency() engine.Concurrency { return engine.Exclusive }
func (m midwayTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	f, err := os.OpenFile(filepath.Join(m.dir, "effects"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return engine.ToolResult{}, err
	}
	f.WriteString("effect\n")
	f.Close()
	if _, err := call.UI.Dialog(ctx, engine.DialogRequest{Method: engine.DialogConfirm, Title: "Go on?"}); err != nil {
		return engine.ToolResult{}, err
	}
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock("went on")}}, nil
}

// A tool that may ask after it has taken effect is not stopped at its
// question (running it again would repeat the effect): the question is
// answered with ErrNoDialogs, and the tool ran once.
func TestDialogAfterEffectRefused(t *testing.T) {
	dir := t.TempDir()
	acts := testActivities(t, dir)
	acts.Tools = append(acts.Tools, midwayTool{dir})
	_, frames := runWorkflow(t, acts, step{0, prompt(t, `demo:tool midway {}`, "")})
	if got, want := dialogEvents(frames), "start midway\nend true "+ErrNoDialogs.Error(); got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "effects")); string(b) != "effect\n" {
		t.Fatalf("effects %q", b)
	}
}
