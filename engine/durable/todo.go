package durable

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Todos in the workflow (engine/todo.go, todo_reminder.go in process):
// the list is workflow state, taken from every successful todo_write
// result (engine.TodoWriteList) and sent with a todo_write call for its
// ops; get_state shows it. After a run that stopped with tasks open the
// workflow reminds the model as the session does (engine.TodoReminderDue:
// the todo_reminder event and the hidden developer message, at most
// engine.TodoReminderMax times between two user prompts). A finished task
// leaves the list after the clear delay, on workflow time.

// todoTimer is one pending auto-clear.
type todoTimer struct {
	id     string
	cancel workflow.CancelFunc
}

// noteTodoWrite takes the list of a successful todo_write result.
func (s *session) noteTodoWrite(name string, res engine.ToolResult) {
	if phases, ok := engine.TodoWriteList(name, res); ok {
		s.setTodos(phases)
	}
}

// setTodos installs a new list and arms or disarms the auto-clears for
// it (engine armTodoTimers).
func (s *session) setTodos(phases []engine.TodoPhase) {
	s.todos = phases
	done := engine.FinishedTodoIDs(phases)
	kept := s.todoTimers[:0]
	for _, t := range s.todoTimers {
		if contains(done, t.id) {
			kept = append(kept, t)
		} else {
			t.cancel()
		}
	}
	s.todoTimers = kept
	delay := s.setup.TodoClearDelay
	if delay == 0 {
		delay = engine.DefaultTodoClearDelay
	}
	if delay < 0 || len(done) == 0 || s.root == nil {
		return
	}
	if workflow.GetVersion(s.root, versionTodoClear, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	for _, id := range done {
		if s.todoArmed(id) {
			continue
		}
		s.startTodoTimer(id, delay)
	}
}

func (s *session) todoArmed(id string) bool {
	for _, t := range s.todoTimers {
		if t.id == id {
			return true
		}
	}
	return false
}

// startTodoTimer waits for delay on workflow time, then removes the
// finished tasks with this id (engine.ClearFinishedTodos), one
// todo_auto_clear each, unless the timer was stopped meanwhile.
func (s *session) startTodoTimer(id string, delay time.Duration) {
	tctx, cancel := workflow.WithCancel(s.root)
	t := &todoTimer{id: id, cancel: cancel}
	s.todoTimers = append(s.todoTimers, t)
	workflow.Go(tctx, func(ctx workflow.Context) {
		if workflow.Sleep(ctx, delay) != nil {
			return
		}
		for i, x := range s.todoTimers {
			if x == t {
				s.todoTimers = append(s.todoTimers[:i:i], s.todoTimers[i+1:]...)
				kept, removed := engine.ClearFinishedTodos(s.todos, id)
				s.todos = kept
				for range removed {
					s.emit(engine.TodoAutoClear{})
				}
				return
			}
		}
	})
}

// todoPhases is get_state's todoPhases (never null).
func (s *session) todoPhases() []engine.TodoPhase {
	out := cloneTodos(s.todos)
	if out == nil {
		out = []engine.TodoPhase{}
	}
	return out
}

// todosCompacted is what a compaction does to the list, as in process:
// the finished tasks go (the session restores the list without them).
func (s *session) todosCompacted() {
	s.setTodos(engine.OpenTodos(s.todos))
}

// todoStage is the session's todoStage: the reminder's event now, its
// hidden message once the new run has started.
func (s *session) todoStage(ctx workflow.Context, last *engine.AssistantMessage) func() {
	ev, body, ok := engine.TodoReminderDue(last, s.aborted, s.todos, s.todoReminders)
	if !ok || workflow.GetVersion(ctx, versionTodoReminder, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	s.todoReminders = ev.Attempt
	s.emit(ev)
	return func() {
		// Hidden: no events; it stays in the context (a compaction drops it).
		s.messages = append(s.messages, &engine.DeveloperMessage{Content: []engine.ContentBlock{engine.TextBlock(body)},
			Attribution: "agent", Timestamp: workflow.Now(ctx).UnixMilli()})
	}
}

// cloneTodos copies a list deep enough to hand out (tasks never nil).
func cloneTodos(in []engine.TodoPhase) []engine.TodoPhase {
	if in == nil {
		return nil
	}
	out := make([]engine.TodoPhase, len(in))
	for i, p := range in {
		out[i] = p
		out[i].Tasks = append(make([]engine.TodoItem, 0, len(p.Tasks)), p.Tasks...)
	}
	return out
}

// hostTodos is the set_todos update: the host's list, stored as the
// session stores it (engine.HostTodos), answered as stored.
func (s *session) hostTodos(ctx workflow.Context, phases []engine.TodoPhase) ([]engine.TodoPhase, error) {
	// The clear delay is the worker's: known once the set-up has run.
	if err := workflow.Await(ctx, func() bool { return s.ready }); err != nil {
		return nil, err
	}
	s.setTodos(engine.HostTodos(phases))
	return s.todoPhases(), nil
}

// setTodos forwards set_todos: the list read by RPC's rule
// (FrontOptions.TodoList), stored by the workflow; the answer is RPC's
// ({"todoPhases":[…]}).
func (f *front) setTodos(ctx context.Context, line []byte) ([]byte, error) {
	list, err := f.o.TodoList(line)
	if err != nil {
		return nil, err
	}
	h, err := f.o.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: f.id, UpdateName: UpdateSetTodos,
		Args: []any{list}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return nil, updateError(err)
	}
	var stored []engine.TodoPhase
	if err := h.Get(ctx, &stored); err != nil {
		return nil, updateError(err)
	}
	if stored == nil {
		stored = []engine.TodoPhase{}
	}
	return engine.MarshalJSON(struct {
		TodoPhases []engine.TodoPhase `json:"todoPhases"`
	}{stored})
}

// withTodos gives a todo_write call the workflow's list as it stands
// (ToolInput.Todos), as a session gives it its own.
func withTodos(tc *engine.ToolCall, in ToolInput) {
	if in.Name == engine.TodoWriteTool {
		tc.Todos = func() []engine.TodoPhase { return cloneTodos(in.Todos) }
	}
}
