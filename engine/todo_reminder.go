package engine

import (
	"context"
	"fmt"
	"strings"
)

// Todo completion reminders (agent-core.md §11.2): when the model stops
// (no tool call, no failure) while tasks are still open, the session tells
// the host (todo_reminder), adds a hidden developer message listing them
// to the context (in memory only: not recorded, no message events) and
// runs again; at most TodoReminderMax times between two user prompts.

// TodoReminderMax is todo.reminders.max.
const TodoReminderMax = 3

// TodoReminder is the todo_reminder event: the open tasks, and which
// reminder this is.
type TodoReminder struct {
	Todos       []TodoItem // id, content and status are sent
	Attempt     int
	MaxAttempts int
}

// EventType implements Event.
func (TodoReminder) EventType() string { return "todo_reminder" }

// AppendJSON implements Event.
func (e TodoReminder) AppendJSON(dst []byte) []byte {
	dst = append(appendKey(appendType(dst, "todo_reminder"), "todos"), '[')
	for i, t := range e.Todos {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		dst = AppendJSONString(append(dst, `"id":`...), t.ID)
		dst = appendStringField(dst, "content", t.Content)
		dst = appendStringField(dst, "status", t.Status)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	dst = appendIntField(dst, "attempt", int64(e.Attempt))
	dst = appendIntField(dst, "maxAttempts", int64(e.MaxAttempts))
	return append(dst, '}')
}

// plugTodos plugs the todo list in (features.go): the reminders' post-run
// stage, and, on a new record, the list its branch last wrote with no
// reminder sent yet.
func (s *Session) plugTodos() {
	s.stages = append(s.stages, s.todoStage)
	s.onInstall = append(s.onInstall, func() {
		s.restoreTodos()
		s.todo.reminders = 0
	})
}

// todoStage is the post-run decision of the reminders, after retry and
// compaction. (actor)
func (s *Session) todoStage(r *run, aborted bool) *postRun {
	ev, body, ok := TodoReminderDue(r.lastAssistant(), aborted, s.todo.phases, s.todo.reminders)
	if !ok {
		return nil
	}
	s.todo.reminders = ev.Attempt
	s.emit(ev)
	return &postRun{phase: PhaseRunning, act: ActRun,
		work: func(ctx context.Context) bool { return ctx.Err() == nil },
		resume: func(*run) {
			// Hidden and never recorded: it lives in the context until the
			// context is derived again (a reload, a compaction).
			s.rec.context = append(s.rec.context, &DeveloperMessage{
				Content: []ContentBlock{TextBlock(body)}, Attribution: "agent", Timestamp: s.now(),
			})
		}}
}

// TodoReminderDue is the reminders' decision once a run has ended (last:
// its last reply; aborted: the run was; sent: the reminders sent since
// the last user prompt): when the model stopped (no tool call, no
// failure) with tasks of phases still open and fewer than
// TodoReminderMax reminders were sent, the todo_reminder event to emit
// and the text of the hidden developer message the new run's context
// ends with. The session's stage and the workflow of a durable session
// both take it.
func TodoReminderDue(last *AssistantMessage, aborted bool, phases []TodoPhase, sent int) (TodoReminder, string, bool) {
	if aborted || last == nil || last.StopReason == StopError || last.StopReason == StopAborted ||
		len(last.ToolCalls()) > 0 || sent >= TodoReminderMax {
		return TodoReminder{}, "", false
	}
	var open []TodoItem
	var text strings.Builder
	for _, p := range phases {
		first := true
		for _, t := range p.Tasks {
			if !todoOpen(t.Status) {
				continue
			}
			if first {
				fmt.Fprintf(&text, "- %s\n", p.Name)
				first = false
			}
			fmt.Fprintf(&text, "  - %s\n", t.Content)
			open = append(open, t)
		}
	}
	if len(open) == 0 {
		return TodoReminder{}, "", false
	}
	attempt := sent + 1
	body := fmt.Sprintf("<system-reminder>\nYou stopped with %d incomplete todo item(s):\n%s\nPlease continue working on these tasks or mark them complete if finished.\n(Reminder %d/%d)\n</system-reminder>",
		len(open), text.String(), attempt, TodoReminderMax)
	return TodoReminder{Todos: open, Attempt: attempt, MaxAttempts: TodoReminderMax}, body, true
}
