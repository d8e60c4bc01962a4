package durable

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.temporal.io/sdk/testsuite"

	"github.com/xcsh-go/xcsh/engine"
)

// scriptedActivities are scriptActivities with the built-in tools (in a
// temporary directory) and their validator.
func scriptedActivities(t *testing.T, script string) *Activities {
	t.Helper()
	acts, tools := scriptActivities(t, script), testActivities(t, t.TempDir())
	acts.Tools, acts.Validator = tools.Tools, tools.Validator
	return acts
}

func noConsoleRule(t *testing.T) *engine.Rule {
	t.Helper()
	r := &engine.Rule{Name: "no-console", Path: "/p/.xcsh/rules/no-console.md", Description: "Log through the logger",
		Content: "Never call console.log; use the project's logger (log.debug).", Condition: []string{`console\.log\(`}}
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	return r
}

// queryJSON answers a query whose result is the engine's JSON bytes.
func queryJSON(t *testing.T, env *testsuite.TestWorkflowEnvironment, name string) gjson.Result {
	t.Helper()
	v, err := env.QueryWorkflow(name)
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := v.Get(&raw); err != nil {
		t.Fatal(err)
	}
	return gjson.ParseBytes(raw)
}

// A rule that matches the streamed text cuts the call: ttsr_triggered
// before the aborted message_end, agent_end, then a new run whose context
// has the rule injected and not the cut message; the rule fires once.
func TestTTSRRuleInjected(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[
 {"steps":[{"text":["I will add ","console",".log(","x) to ","debug it."]}]},
 {"expect":{"contextContains":["rule_violation","use the project's logger"],"messageCount":1},"steps":[{"text":["I will use ","log.debug(x) instead."]}]},
 {"steps":[{"text":"console.log(again) is not watched any more."}]}
]}`)
	acts.Rules = []*engine.Rule{noConsoleRule(t)}
	env, frames := runWorkflow(t, acts,
		step{0, prompt(t, "add logging", "")},
		step{time.Minute, prompt(t, "and again", "")})
	want := "agent_start turn_start message_start message_end message_start ttsr_triggered message_end turn_end agent_end " +
		"agent_start turn_start message_start message_end turn_end agent_end " +
		"agent_start turn_start message_start message_end message_start message_end turn_end agent_end"
	if got := types(frames); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	trig := find(frames, "ttsr_triggered")[0]
	if trig.Get("rules.0.name").String() != "no-console" || trig.Get("rules.0.condition.0").String() != `console\.log\(` {
		t.Errorf("ttsr_triggered %s", trig.Raw)
	}
	ends := find(frames, "message_end")
	if cut := ends[1].Get("message"); cut.Get("stopReason").String() != "aborted" || cut.Get("content.0.text").String() != "I will add console.log(" {
		t.Errorf("the cut message %s", cut.Raw)
	}
	if ends[2].Get("message.content.0.text").String() != "I will use log.debug(x) instead." {
		t.Errorf("the reply after the injection %s", ends[2].Raw)
	}
	msgs := queryJSON(t, env, QueryMessages)
	roles := []string{}
	for _, m := range msgs.Array() {
		roles = append(roles, m.Get("role").String())
	}
	if got := strings.Join(roles, " "); got != "user custom assistant user assistant" {
		t.Errorf("context roles %s", got)
	}
	inj := msgs.Get("1")
	if inj.Get("customType").String() != "ttsr-injection" || !strings.Contains(inj.Get("content").String(), `rule="no-console"`) ||
		inj.Get("details.rules.0").String() != "no-console" {
		t.Errorf("injected message %s", inj.Raw)
	}
}

// The rules injected are carried across continue-as-new: a rule the
// earlier run injected is not watched.
func TestTTSRInjectedCarried(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[{"steps":[{"text":"console.log(x) it is."}]}]}`)
	acts.Rules = []*engine.Rule{noConsoleRule(t)}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	env.RegisterDelayedCallback(func() { prompt(t, "go", "")(env) }, 0)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", TTSRInjected: []string{"no-console"}})
	frames := logFrames(t, env)
	if n := len(find(frames, "ttsr_triggered")); n != 0 {
		t.Fatalf("a carried rule fired again: %s", types(frames))
	}
	if n := len(find(frames, "agent_end")); n != 1 {
		t.Fatalf("events: %s", types(frames))
	}
}

// A rule that does not interrupt (interruptMode never) lets the reply end
// and is injected before the run goes on, as in process.
func TestTTSRDeferredRule(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[
 {"steps":[{"text":"console.log(x) it is."}]},
 {"expect":{"contextContains":"rule_violation"},"steps":[{"text":"Noted."}]}
]}`)
	r := noConsoleRule(t)
	r.InterruptMode = "never"
	acts.Rules = []*engine.Rule{r}
	_, frames := runWorkflow(t, acts, step{0, prompt(t, "go", "")})
	want := "agent_start turn_start message_start message_end message_start message_end turn_end agent_end " +
		"agent_start turn_start message_start message_end turn_end agent_end"
	if got := types(frames); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if got := find(frames, "message_end")[2].Get("message.content.0.text").String(); got != "Noted." {
		t.Errorf("after the injection: %q", got)
	}
}

// A provider that goes silent is cut by the engine's stall watchdog
// inside the model-call activity: the reply fails with the engine's
// stall error, which the engine's retry takes.
func TestStallWatchdogInModelCall(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	acts.Clock = engine.SystemClock{}
	acts.StreamIdleTimeout = 100 * time.Millisecond
	demo := acts.Provider
	calls := 0
	acts.Provider = providerFunc(func(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
		calls++
		if calls == 1 {
			<-ctx.Done() // silent until the watchdog ends the call
			return context.Cause(ctx)
		}
		return demo.Stream(ctx, req, fn)
	})
	_, frames := runWorkflow(t, acts, step{0, prompt(t, "hello", "")})
	ends := find(frames, "message_end")
	if got := ends[1].Get("message.errorMessage").String(); got != "stream stall: the provider sent nothing for 0.1s" {
		t.Fatalf("the stalled reply: %s\nevents: %s", ends[1].Raw, types(frames))
	}
	if n := len(find(frames, "auto_retry_start")); n != 1 {
		t.Fatalf("events: %s", types(frames))
	}
	if got := find(frames, "auto_retry_end")[0].Get("success").Bool(); !got {
		t.Errorf("retry did not succeed: %s", types(frames))
	}
}

type providerFunc func(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error

func (f providerFunc) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	return f(ctx, req, fn)
}

// A continue-as-new at compaction carries the rules injected, the todo
// list (without its finished tasks, as a compaction leaves it in process)
// and the reminders' count.
func TestTTSRAndTodosCarriedAtCompaction(t *testing.T) {
	acts := testActivities(t, t.TempDir())
	acts.Model.ContextWindow = 400 // threshold 200 tokens; the demo counts 4 characters a token
	r := &engine.Rule{Name: "no-first", Path: "/p/r.md", Content: "Never say first.", Condition: []string{`You said: first`}}
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	acts.Rules = []*engine.Rule{r}
	acts.TodoClearDelay = 24 * time.Hour // the compaction drops the finished task, not the clear delay
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateSetTodos, "", &testsuite.TestUpdateCallback{OnAccept: func() {},
			OnReject: func(err error) { t.Errorf("set_todos refused: %v", err) }, OnComplete: func(any, error) {}},
			[]engine.TodoPhase{{ID: "phase-1", Name: "Work", Tasks: []engine.TodoItem{
				{ID: "task-1", Content: "Open", Status: engine.TodoPending}, {ID: "task-2", Content: "Shipped", Status: engine.TodoCompleted}}}})
	}, 0)
	env.RegisterDelayedCallback(func() { prompt(t, "first, short", "")(env) }, time.Second)
	env.RegisterDelayedCallback(func() { prompt(t, strings.Repeat("the parser walks the token list once. ", 25), "")(env) }, time.Minute)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", HeartbeatMs: 3000})
	next := continuedAs(t, env)
	frames := logFrames(t, env)
	if len(find(frames, "ttsr_triggered")) != 1 || len(next.TTSRInjected) != 1 || next.TTSRInjected[0] != "no-first" {
		t.Errorf("carried rules %v; events %s", next.TTSRInjected, types(frames))
	}
	if len(next.Todos) != 1 || len(next.Todos[0].Tasks) != 1 || next.Todos[0].Tasks[0].ID != "task-1" {
		t.Errorf("carried todos %+v", next.Todos)
	}
	// Three reminders after the first prompt; the long prompt, a user
	// prompt, counts from 0 again.
	if len(find(frames, "todo_reminder")) != engine.TodoReminderMax || len(find(frames, "todo_auto_clear")) != 0 || next.TodoReminders != 0 {
		t.Errorf("carried count %d; events %s", next.TodoReminders, types(frames))
	}
}
