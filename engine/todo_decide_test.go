package engine

import (
	"strings"
	"testing"
)

func TestTodoReminderDue(t *testing.T) {
	t.Parallel()
	phases := []TodoPhase{{Name: "Work", Tasks: []TodoItem{{ID: "a", Content: "A", Status: TodoCompleted}, {ID: "b", Content: "B", Status: TodoPending}}}}
	stop := &AssistantMessage{StopReason: StopStop}
	ev, body, ok := TodoReminderDue(stop, false, phases, 1)
	if !ok || ev.Attempt != 2 || ev.MaxAttempts != TodoReminderMax || len(ev.Todos) != 1 || ev.Todos[0].ID != "b" ||
		!strings.Contains(body, "You stopped with 1 incomplete todo item(s):\n- Work\n  - B\n") || !strings.Contains(body, "(Reminder 2/3)") {
		t.Fatalf("due: %+v %q %v", ev, body, ok)
	}
	for name, tc := range map[string]struct {
		last    *AssistantMessage
		aborted bool
		phases  []TodoPhase
		sent    int
	}{
		"aborted":    {stop, true, phases, 0},
		"failed":     {&AssistantMessage{StopReason: StopError}, false, phases, 0},
		"tool calls": {&AssistantMessage{StopReason: StopToolUse, Content: []ContentBlock{{Type: BlockToolCall, ID: "c", Name: "read"}}}, false, phases, 0},
		"all sent":   {stop, false, phases, TodoReminderMax},
		"none open":  {stop, false, phases[:0], 0},
	} {
		if _, _, ok := TodoReminderDue(tc.last, tc.aborted, tc.phases, tc.sent); ok {
			t.Errorf("%s: a reminder is due", name)
		}
	}
}

func TestClearFinishedTodos(t *testing.T) {
	t.Parallel()
	phases := []TodoPhase{
		{ID: "p1", Tasks: []TodoItem{{ID: "a", Status: TodoCompleted}}},
		{ID: "p2", Tasks: []TodoItem{{ID: "b", Status: TodoAbandoned}, {ID: "c", Status: TodoPending}}},
	}
	if got := FinishedTodoIDs(phases); strings.Join(got, ",") != "a,b" {
		t.Errorf("finished %v", got)
	}
	kept, n := ClearFinishedTodos(phases, "a")
	if n != 1 || len(kept) != 1 || kept[0].ID != "p2" {
		t.Errorf("clear a: %d %+v", n, kept)
	}
	if kept, n := ClearFinishedTodos(phases, "c"); n != 0 || len(kept) != 2 {
		t.Errorf("clear an open task: %d %+v", n, kept)
	}
	if open := OpenTodos(phases); len(open) != 1 || len(open[0].Tasks) != 1 || open[0].Tasks[0].ID != "c" {
		t.Errorf("open %+v", open)
	}
	res := ToolResult{Details: []byte(`{"phases":[{"id":"p","name":"n","tasks":[]}]}`)}
	if l, ok := TodoWriteList(TodoWriteTool, res); !ok || len(l) != 1 || l[0].Tasks == nil {
		t.Errorf("todo_write list %+v %v", l, ok)
	}
	if _, ok := TodoWriteList("read", res); ok {
		t.Error("read's result read as a list")
	}
	res.IsError = true
	if _, ok := TodoWriteList(TodoWriteTool, res); ok {
		t.Error("a failed todo_write's list taken")
	}
	if h := HostTodos([]TodoPhase{{Tasks: []TodoItem{{ID: "x", Details: "d", Notes: "n"}}}}); h[0].Tasks[0].Details != "" || h[0].Tasks[0].Notes != "n" {
		t.Errorf("host list %+v", h)
	}
}
