package durable

import (
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/xcsh-go/xcsh/engine"
)

const todoPlan = `{"toolCall":{"id":"call_1","name":"todo_write","arguments":{"ops":[{"op":"replace","phases":[{"name":"Work","tasks":[{"content":"Write the tests"},{"content":"Fix the bug"}]}]}]}}}`

// A todo_write result becomes the list (get_state.todoPhases); a run that
// stops with tasks open is reminded as in process, at most three times
// between two user prompts, with the hidden reminder in the context.
func TestTodoReminders(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[
 {"steps":[`+todoPlan+`]},
 {"steps":[{"text":"I stopped early."}]},
 {"expect":{"contextContains":"You stopped with 2 incomplete todo item(s):\\n- Work\\n  - Write the tests\\n  - Fix the bug\\n\\nPlease continue working on these tasks or mark them complete if finished.\\n(Reminder 1/3)"},"steps":[{"text":"Still stopping."}]},
 {"expect":{"contextContains":"(Reminder 2/3)"},"steps":[{"text":"Still stopping."}]},
 {"expect":{"contextContains":"(Reminder 3/3)"},"steps":[{"text":"Done for now."}]},
 {"steps":[{"text":"A new prompt."}]},
 {"expect":{"contextContains":"(Reminder 1/3)"},"steps":[{"text":"Counted again from the prompt."}]},
 {"steps":[{"text":"Still stopping."}]},
 {"steps":[{"text":"Still stopping."}]}
]}`)
	var state string
	env, frames := runWorkflow(t, acts,
		step{0, prompt(t, "plan", "")},
		step{time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
			state = queryJSON(t, env, QueryState).Get("todoPhases").Raw
		}},
		step{2 * time.Minute, prompt(t, "again", "")})
	rem := find(frames, "todo_reminder")
	if len(rem) != 6 {
		t.Fatalf("%d reminders: %s\n%s", len(rem), types(frames), find(frames, "message_end")[4].Raw)
	}
	if r := rem[0]; r.Get("attempt").Int() != 1 || r.Get("maxAttempts").Int() != 3 || r.Get("todos.#").Int() != 2 ||
		r.Get("todos.0.id").String() != "task-1" || r.Get("todos.0.status").String() != "in_progress" {
		t.Errorf("first reminder %s", r.Raw)
	}
	if rem[3].Get("attempt").Int() != 1 {
		t.Errorf("the count does not start again at a user prompt: %s", rem[3].Raw)
	}
	// The reminder follows agent_end; the run it starts shows no message
	// of its own before the reply.
	if got := types(frames); !strings.Contains(got, "agent_end todo_reminder agent_start turn_start message_start message_end turn_end agent_end") {
		t.Errorf("events: %s", got)
	}
	if !strings.Contains(state, `"content":"Write the tests","status":"in_progress"`) {
		t.Errorf("get_state todoPhases %s", state)
	}
	for _, m := range queryJSON(t, env, QueryMessages).Array() {
		if m.Get("role").String() == "developer" && !strings.Contains(m.Get("content.0.text").String(), "<system-reminder>") {
			t.Errorf("developer message %s", m.Raw)
		}
	}
}

// A finished task leaves the list after the clear delay, on workflow
// time, one todo_auto_clear each; a phase left empty goes too.
func TestTodoAutoClear(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[
 {"steps":[{"toolCall":{"id":"call_1","name":"todo_write","arguments":{"ops":[{"op":"replace","phases":[{"name":"Done","tasks":[{"content":"Shipped"}]},{"name":"Open","tasks":[{"content":"Still to do"}]}]}]}}}]},
 {"steps":[{"toolCall":{"id":"call_2","name":"todo_write","arguments":{"ops":[{"op":"update","id":"task-1","status":"completed"}]}}}]},
 {"steps":[{"text":"Done."}]},
 {"steps":[{"text":"Still."}]},
 {"steps":[{"text":"Still."}]},
 {"steps":[{"text":"Still."}]}
]}`)
	acts.TodoClearDelay = 30 * time.Second
	var before, after string
	_, frames := runWorkflow(t, acts,
		step{0, prompt(t, "plan", "")},
		step{10 * time.Second, func(env *testsuite.TestWorkflowEnvironment) {
			before = queryJSON(t, env, QueryState).Get("todoPhases.#").Raw
		}},
		step{time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
			after = queryJSON(t, env, QueryState).Get("todoPhases").Raw
		}})
	if n := len(find(frames, "todo_auto_clear")); n != 1 {
		t.Fatalf("%d todo_auto_clear: %s", n, types(frames))
	}
	if before != "2" || !strings.HasPrefix(after, `[{"id":"phase-2"`) || strings.Count(after, `"id":"phase-`) != 1 {
		t.Errorf("todoPhases before %s, after %s", before, after)
	}
}

// Start carries the list and the reminders' count across continue-as-new.
func TestTodosCarried(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[{"steps":[{"text":"Stopping."}]}]}`)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts.Register(env)
	// A continue message starts the run (not a user prompt): the count
	// carried stands, and the last reminder was sent.
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(WorkflowName, Start{SessionID: "s1", Continue: true, TodoReminders: engine.TodoReminderMax,
		Todos: []engine.TodoPhase{{ID: "phase-1", Name: "Work", Tasks: []engine.TodoItem{{ID: "task-1", Content: "Open", Status: engine.TodoPending}}}}})
	frames := logFrames(t, env)
	if n := len(find(frames, "todo_reminder")); n != 0 {
		t.Fatalf("reminded past the carried count: %s", types(frames))
	}
	if got := queryJSON(t, env, QueryState).Get("todoPhases.0.tasks.0.id").String(); got != "task-1" {
		t.Errorf("the carried list is lost: %q", got)
	}
}

// set_todos stores the host's list as a session does (details dropped,
// nothing else changed), answers it as stored, and the reminders read it.
func TestSetTodos(t *testing.T) {
	acts := scriptedActivities(t, `{"turns":[{"steps":[{"text":"Stopping."}]},{"steps":[{"text":"Reminded."}]},{"steps":[{"text":"Reminded."}]},{"steps":[{"text":"Reminded."}]}]}`)
	var stored []engine.TodoPhase
	_, frames := runWorkflow(t, acts,
		step{0, func(env *testsuite.TestWorkflowEnvironment) {
			env.UpdateWorkflow(UpdateSetTodos, "", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("set_todos refused: %v", err) },
				OnComplete: func(v any, err error) {
					if err != nil {
						t.Errorf("set_todos: %v", err)
					}
					stored, _ = v.([]engine.TodoPhase)
				}}, []engine.TodoPhase{{ID: "phase-1", Name: "Work", Tasks: []engine.TodoItem{
				{ID: "task-1", Content: "Open", Status: "pending", Notes: "n", Details: "dropped"}}}})
		}},
		step{time.Second, prompt(t, "go", "")})
	if len(stored) != 1 || stored[0].Tasks[0].Details != "" || stored[0].Tasks[0].Notes != "n" {
		t.Fatalf("stored %+v", stored)
	}
	if rem := find(frames, "todo_reminder"); len(rem) != engine.TodoReminderMax || rem[0].Get("todos.0.id").String() != "task-1" {
		t.Fatalf("events: %s", types(frames))
	}
}
