package engine

import (
	"context"
	"encoding/json"
	"time"
)

// Todos (agent-core.md §11.2, rpc-protocol.md §8). The session holds the
// todo list in memory, as actor state. Its sources are the host
// (set_todos: a projection, nothing validated or generated, never
// persisted) and the model (every successful todo_write result, whose
// details.phases is the new list). On a switch, a branch, a resume and
// after a compaction the list is restored from the last successful
// todo_write result of the branch, without its completed and abandoned
// tasks. A task that becomes completed or abandoned is removed after the
// clear delay (todo_auto_clear), on the session's clock.

// The todo statuses the engine reads (set_todos may store any other).
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoAbandoned  = "abandoned"
)

// TodoWriteTool is the name of the model's todo tool; its successful
// results carry the new list in details.phases.
const TodoWriteTool = "todo_write"

// DefaultTodoClearDelay is how long a finished task stays in the list
// (tasks.todoClearDelay).
const DefaultTodoClearDelay = 60 * time.Second

// TodoAutoClear is emitted once per finished task the clear delay removed.
type TodoAutoClear struct{}

// EventType implements Event.
func (TodoAutoClear) EventType() string { return "todo_auto_clear" }

// AppendJSON implements Event.
func (TodoAutoClear) AppendJSON(dst []byte) []byte {
	return append(appendType(dst, "todo_auto_clear"), '}')
}

// todoTimer is one pending auto-clear; stop ends its wait.
type todoTimer struct{ stop func() }

// todoState is the actor state of the todo list.
type todoState struct {
	phases []TodoPhase
	// timers are the pending auto-clears, by task id (tasks without an id
	// share the key "", as in the original).
	timers map[string]*todoTimer
	// reminders counts the todo reminders sent since the last user
	// prompt.
	reminders int
}

func todoDone(status string) bool { return status == TodoCompleted || status == TodoAbandoned }

func todoOpen(status string) bool { return status == TodoPending || status == TodoInProgress }

// cloneTodos copies a list deeply enough that the copy can be changed or
// handed out (tasks slices are never nil in the copy: they encode as []).
func cloneTodos(in []TodoPhase) []TodoPhase {
	out := make([]TodoPhase, len(in))
	for i, p := range in {
		out[i] = p
		out[i].Tasks = append(make([]TodoItem, 0, len(p.Tasks)), p.Tasks...)
	}
	return out
}

// Todos returns a copy of the todo list. (actor)
func (s *Session) Todos() []TodoPhase { return cloneTodos(s.todo.phases) }

// todosNow reads the todo list from a goroutine other than the executor's
// (a tool call's).
func (s *Session) todosNow() []TodoPhase {
	var out []TodoPhase
	s.Call(func() { out = s.Todos() })
	return out
}

// SetTodos replaces the todo list with the host's (set_todos) and returns
// it as stored: each task keeps its id, content, status and notes, and
// nothing else (details are dropped); nothing is validated, generated or
// removed. The list is not recorded in the session. (actor)
func (s *Session) SetTodos(phases []TodoPhase) []TodoPhase {
	s.setTodos(HostTodos(phases))
	return s.Todos()
}

// HostTodos is the host's list (set_todos) as a session stores it: a
// copy whose tasks keep their id, content, status and notes, and nothing
// else (details are dropped).
func HostTodos(phases []TodoPhase) []TodoPhase {
	out := cloneTodos(phases)
	for i := range out {
		for j := range out[i].Tasks {
			out[i].Tasks[j].Details = ""
		}
	}
	return out
}

// setTodos installs a new list (owned by the session from now on) and
// arms or disarms the auto-clear timers for it. (actor)
func (s *Session) setTodos(phases []TodoPhase) {
	s.todo.phases = phases
	s.armTodoTimers()
}

// armTodoTimers starts a clear timer for every finished task that has
// none, and stops the timers of tasks that are no longer finished (or no
// longer there). (actor)
func (s *Session) armTodoTimers() {
	done := map[string]bool{}
	for _, id := range FinishedTodoIDs(s.todo.phases) {
		done[id] = true
	}
	for id, t := range s.todo.timers {
		if !done[id] {
			t.stop()
			delete(s.todo.timers, id)
		}
	}
	delay := s.cfg.TodoClearDelay
	if delay == 0 {
		delay = DefaultTodoClearDelay
	}
	if delay < 0 {
		return
	}
	for id := range done {
		if _, armed := s.todo.timers[id]; armed {
			continue
		}
		if s.todo.timers == nil {
			s.todo.timers = map[string]*todoTimer{}
		}
		s.todo.timers[id] = s.startTodoTimer(id, delay)
	}
}

// startTodoTimer waits for delay on the clock, then removes the finished
// tasks with this id, unless the timer was stopped meanwhile (the task
// reopened, the list replaced, the session closed). (actor)
func (s *Session) startTodoTimer(id string, delay time.Duration) *todoTimer {
	ctx, cancel := context.WithCancel(s.timers)
	t := &todoTimer{stop: cancel}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		if Sleep(ctx, s.cfg.Clock, delay) != nil {
			return
		}
		s.Post(func() {
			if s.todo.timers[id] != t {
				return // stopped, or replaced by a newer timer
			}
			delete(s.todo.timers, id)
			s.clearFinished(id)
		})
	}()
	return t
}

// clearFinished removes the finished tasks with this id (and the phases
// left empty by that), one todo_auto_clear per task removed. (actor)
func (s *Session) clearFinished(id string) {
	kept, removed := ClearFinishedTodos(s.todo.phases, id)
	if removed == 0 {
		return
	}
	s.todo.phases = kept
	for range removed {
		s.emit(TodoAutoClear{})
	}
}

// FinishedTodoIDs are the ids of the finished (completed or abandoned)
// tasks of a list, in its order, each once: the tasks an auto-clear
// timer waits for.
func FinishedTodoIDs(phases []TodoPhase) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range phases {
		for _, t := range p.Tasks {
			if todoDone(t.Status) && !seen[t.ID] {
				seen[t.ID] = true
				out = append(out, t.ID)
			}
		}
	}
	return out
}

// ClearFinishedTodos is an auto-clear's effect: the list without the
// finished tasks with this id and without the phases that leaves empty,
// and how many tasks went (one todo_auto_clear each; 0: the list is
// unchanged).
func ClearFinishedTodos(phases []TodoPhase, id string) (kept []TodoPhase, removed int) {
	for _, p := range phases {
		tasks := make([]TodoItem, 0, len(p.Tasks))
		for _, t := range p.Tasks {
			if t.ID == id && todoDone(t.Status) {
				removed++
				continue
			}
			tasks = append(tasks, t)
		}
		if len(tasks) == 0 && len(p.Tasks) > 0 {
			continue
		}
		p.Tasks = tasks
		kept = append(kept, p)
	}
	if removed == 0 {
		return phases, 0
	}
	return kept, removed
}

// stopTodoTimers stops every pending auto-clear (the list is replaced or
// the session closes). (actor)
func (s *Session) stopTodoTimers() {
	for id, t := range s.todo.timers {
		t.stop()
		delete(s.todo.timers, id)
	}
}

// todoWriteDetails reads the list a todo_write result carries in
// details.phases; ok is false when it has none.
func todoWriteDetails(details []byte) ([]TodoPhase, bool) {
	var d struct {
		Phases *[]TodoPhase `json:"phases"`
	}
	if len(details) == 0 || json.Unmarshal(details, &d) != nil || d.Phases == nil {
		return nil, false
	}
	return cloneTodos(*d.Phases), true
}

// noteTodoWrite takes the list of a successful todo_write result as the
// session's. (actor)
func (s *Session) noteTodoWrite(name string, res ToolResult) {
	if phases, ok := TodoWriteList(name, res); ok {
		s.setTodos(phases)
	}
}

// TodoWriteList is the list a tool result makes the session's: that of
// a successful todo_write result (details.phases); ok is false for any
// other result. The session and the workflow of a durable session both
// read results with it.
func TodoWriteList(name string, res ToolResult) ([]TodoPhase, bool) {
	if name != TodoWriteTool || res.IsError {
		return nil, false
	}
	return todoWriteDetails(res.Details)
}

// restoreTodos makes the todo list the one of the last successful
// todo_write result on the current branch, without its finished tasks and
// the phases they leave empty (none when there is no such result). It
// walks back from the leaf and stops at the first result it finds. (actor)
func (s *Session) restoreTodos() {
	s.stopTodoTimers()
	s.todo.phases = nil
	t := &s.rec
	for id := t.leaf; id != ""; {
		i, ok := t.index[id]
		if !ok {
			break
		}
		e := t.entries[i]
		id = e.ParentID
		tr, ok := e.Message.(*ToolResultMessage)
		if e.Type != EntryMessage || !ok || tr.ToolName != TodoWriteTool || tr.IsError {
			continue
		}
		phases, ok := todoWriteDetails(tr.Details)
		if !ok {
			continue
		}
		s.todo.phases = OpenTodos(phases)
		return
	}
}

// OpenTodos is a list without its finished tasks and the phases they
// leave empty: what is restored after a compaction (and carried by a
// durable session's continue-as-new after one).
func OpenTodos(phases []TodoPhase) []TodoPhase {
	var open []TodoPhase
	for _, p := range phases {
		tasks := make([]TodoItem, 0, len(p.Tasks))
		for _, task := range p.Tasks {
			if !todoDone(task.Status) {
				tasks = append(tasks, task)
			}
		}
		if len(tasks) > 0 {
			p.Tasks = tasks
			open = append(open, p)
		}
	}
	return open
}
