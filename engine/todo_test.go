package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTodoRemindersAtMostThreeThenReset(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lastMsgs []string
	p := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		if d, ok := req.Messages[len(req.Messages)-1].(*DeveloperMessage); ok {
			lastMsgs = append(lastMsgs, d.Content[0].Text)
		}
		mu.Unlock()
		return textReply("ok")(ctx, req, fn)
	})
	rec := &recorder{}
	s := newTestSession(t, p, rec)
	s.Call(func() {
		s.SetTodos([]TodoPhase{{ID: "phase-1", Name: "Work", Tasks: []TodoItem{
			{ID: "task-1", Content: "Done already", Status: "completed"},
			{ID: "task-2", Content: "Write tests", Status: "in_progress"},
			{ID: "task-3", Content: "Ship", Status: "pending"},
		}}})
		if err := s.Prompt("go", PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitIdle(s)
	rec.mu.Lock()
	types := strings.Join(rec.types, " ")
	var reminders []string
	for _, f := range rec.frames {
		if strings.HasPrefix(f, `{"type":"todo_reminder"`) {
			reminders = append(reminders, f)
		}
	}
	rec.mu.Unlock()
	if n := strings.Count(types, "agent_end"); n != 4 {
		t.Fatalf("%d runs, want 4: %s", n, types)
	}
	want := `{"type":"todo_reminder","todos":[{"id":"task-2","content":"Write tests","status":"in_progress"},{"id":"task-3","content":"Ship","status":"pending"}],"attempt":1,"maxAttempts":3}`
	if len(reminders) != 3 || reminders[0] != want || !strings.Contains(reminders[2], `"attempt":3`) {
		t.Fatalf("reminders:\n%s", strings.Join(reminders, "\n"))
	}
	if !strings.Contains(types, "agent_end todo_reminder agent_start turn_start message_start") {
		t.Errorf("order: %s", types)
	}
	mu.Lock()
	if len(lastMsgs) != 3 || !strings.Contains(lastMsgs[0], "You stopped with 2 incomplete todo item(s):\n- Work\n  - Write tests\n  - Ship\n\nPlease continue") ||
		!strings.HasSuffix(lastMsgs[2], "(Reminder 3/3)\n</system-reminder>") {
		t.Errorf("reminder messages: %q", lastMsgs)
	}
	mu.Unlock()
	// Never recorded: the hidden messages are not in the store.
	s.Call(func() {
		for _, e := range s.rec.store.(*MemoryStore).Entries() {
			if _, ok := e.Message.(*DeveloperMessage); ok {
				t.Errorf("reminder recorded")
			}
		}
		// A new user prompt resets the count.
		if err := s.Prompt("again", PromptOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitIdle(s)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if n := strings.Count(strings.Join(rec.types, " "), "todo_reminder"); n != 6 {
		t.Errorf("%d reminders after a second prompt, want 6", n)
	}
}

func TestTodoAutoClearOnTheClock(t *testing.T) {
	t.Parallel()
	clock := NewManualClock(1000)
	rec := &recorder{notify: make(chan string, 16)}
	m := Model{ID: "m", API: "fake", Provider: "fake"}
	s := New(Config{Provider: textReply("x"), Model: &m, Clock: clock, IDs: &SequentialIDs{}, Sink: rec})
	go s.Loop()
	defer func() { s.Stop(); s.Close() }()
	s.Call(func() {
		s.SetTodos([]TodoPhase{{ID: "phase-1", Name: "A", Tasks: []TodoItem{
			{ID: "task-1", Content: "a", Status: "completed"},
			{ID: "task-2", Content: "b", Status: "abandoned"},
		}}, {ID: "phase-2", Name: "B", Tasks: []TodoItem{{ID: "task-3", Content: "c", Status: "pending"}}}})
	})
	for clock.Waiters() != 2 {
		time.Sleep(time.Millisecond)
	}
	// task-2 comes back: its timer stops.
	s.Call(func() {
		s.SetTodos([]TodoPhase{{ID: "phase-1", Name: "A", Tasks: []TodoItem{
			{ID: "task-1", Content: "a", Status: "completed"},
			{ID: "task-2", Content: "b", Status: "pending"},
		}}, {ID: "phase-2", Name: "B", Tasks: []TodoItem{{ID: "task-3", Content: "c", Status: "pending"}}}})
	})
	clock.Advance(59 * time.Second)
	s.Call(func() {
		if n := len(s.todo.phases[0].Tasks); n != 2 {
			t.Errorf("cleared early: %+v", s.todo.phases)
		}
	})
	clock.Advance(time.Second)
	if ev := <-rec.notify; ev != "todo_auto_clear" {
		t.Fatalf("event %s", ev)
	}
	s.Call(func() {
		got := s.Todos()
		if len(got) != 2 || len(got[0].Tasks) != 1 || got[0].Tasks[0].ID != "task-2" {
			t.Errorf("after clear: %+v", got)
		}
	})
	select {
	case ev := <-rec.notify:
		t.Errorf("extra event %s", ev)
	default:
	}
}

func TestTodosRestoredFromLastTodoWrite(t *testing.T) {
	t.Parallel()
	s := newTestSession(t, textReply("x"), &recorder{})
	s.Call(func() {
		s.appendMessage(&ToolResultMessage{ToolName: TodoWriteTool, Details: []byte(`{"phases":[{"id":"phase-1","name":"Old","tasks":[{"id":"task-1","content":"old","status":"pending"}]}]}`)})
		s.appendMessage(&ToolResultMessage{ToolName: TodoWriteTool, IsError: true, Details: []byte(`{}`)})
		s.appendMessage(&ToolResultMessage{ToolName: TodoWriteTool, Details: []byte(`{"phases":[{"id":"phase-1","name":"Done","tasks":[{"id":"task-1","content":"a","status":"completed"}]},{"id":"phase-2","name":"Next","tasks":[{"id":"task-2","content":"b","status":"abandoned"},{"id":"task-3","content":"c","status":"in_progress","details":"d"}]}]}`)})
		s.appendMessage(&ToolResultMessage{ToolName: "read", Details: []byte(`{"phases":[]}`)})
		s.SetTodos(nil)
		s.restoreTodos()
		got, _ := MarshalJSON(s.Todos())
		if want := `[{"id":"phase-2","name":"Next","tasks":[{"id":"task-3","content":"c","status":"in_progress","details":"d"}]}]`; string(got) != want {
			t.Errorf("restored %s\nwant %s", got, want)
		}
	})
}
