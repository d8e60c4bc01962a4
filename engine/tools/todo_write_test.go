package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func runTodo(t *testing.T, state []engine.TodoPhase, args string) (engine.ToolResult, []engine.TodoPhase) {
	t.Helper()
	call := engine.ToolCall{Arguments: []byte(args), Todos: func() []engine.TodoPhase { return state }}
	res, err := NewTodoWrite(Options{}).Run(context.Background(), call, nil)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Phases  []engine.TodoPhase `json:"phases"`
		Storage string             `json:"storage"`
	}
	if !res.IsError {
		if err := json.Unmarshal(res.Details, &d); err != nil || d.Storage != "session" {
			t.Fatalf("details %s: %v", res.Details, err)
		}
	}
	return res, d.Phases
}

func taskLine(ps []engine.TodoPhase) string {
	var out []string
	for _, p := range ps {
		var ts []string
		for _, t := range p.Tasks {
			ts = append(ts, t.ID+"="+t.Status)
		}
		out = append(out, p.ID+"["+strings.Join(ts, ",")+"]")
	}
	return strings.Join(out, " ")
}

func TestTodoWriteOps(t *testing.T) {
	t.Parallel()
	seeded := []engine.TodoPhase{{ID: "phase-1", Name: "A", Tasks: []engine.TodoItem{
		{ID: "task-1", Content: "one", Status: "completed"},
		{ID: "task-4", Content: "four", Status: "pending"},
	}}}
	tests := []struct {
		name, args string
		state      []engine.TodoPhase
		want       string
		text       []string
	}{
		{"replace numbers from 1 and starts the first pending", `{"ops":[{"op":"replace","phases":[{"name":"Investigate","tasks":[{"content":"Map tools"},{"content":"Read code"}]},{"name":"Verify","tasks":[{"content":"Run tests"}]}]}]}`,
			seeded, "phase-1[task-1=in_progress,task-2=pending] phase-2[task-3=pending]",
			[]string{"Remaining items (3):", "  - task-1 Map tools [in_progress] (Investigate)", `Phase 1/2 "Investigate" — 0/2 tasks complete`, "  → task-1 Map tools", "  ○ task-3 Run tests"}},
		{"ids continue from the highest", `{"ops":[{"op":"add_task","phase":"phase-1","content":"five"},{"op":"add_phase","name":"B","tasks":[{"content":"six","status":"done"}]}]}`,
			seeded, "phase-1[task-1=completed,task-4=in_progress,task-5=pending] phase-2[task-6=completed]",
			[]string{"Remaining items (2):", "  ✓ task-6 six"}},
		{"several in progress: the first keeps it", `{"ops":[{"op":"replace","phases":[{"name":"P","tasks":[{"content":"a","status":"In Progress"},{"content":"b","status":"in-progress"}]}]}]}`,
			nil, "phase-1[task-1=in_progress,task-2=pending]", nil},
		{"update, remove and unknown ids", `{"ops":[{"op":"update","id":"task-4","status":"cancelled","details":"no longer needed"},{"op":"remove_task","id":"task-1"},{"op":"update","id":"task-9","status":"done"},{"op":"add_task","phase":"phase-7","content":"x"},{"op":"update","id":"task-4","status":"sideways"}]}`,
			seeded, "phase-1[task-4=abandoned]",
			[]string{"Remaining items (0):", `Phase 1/1 "A" — 1/1 tasks complete`, `Errors: op 3 (update): task "task-9" not found; op 4 (add_task): phase "phase-7" not found; op 5 (update): unknown status "sideways" for task-4`}},
		{"in-progress details shown", `{"ops":[{"op":"replace","phases":[{"name":"P","tasks":[{"content":"a","details":"line one\nline two"}]}]}]}`,
			nil, "phase-1[task-1=in_progress]", []string{"  - task-1 a [in_progress] (P)\n    line one\n    line two\n"}},
		{"cleared", `{"ops":[{"op":"replace","phases":[]}]}`, seeded, "", []string{"Todo list cleared."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, phases := runTodo(t, tt.state, tt.args)
			if res.IsError {
				t.Fatalf("error result: %s", res.Content[0].Text)
			}
			if got := taskLine(phases); got != tt.want {
				t.Errorf("phases %s, want %s", got, tt.want)
			}
			text := res.Content[0].Text
			for _, w := range tt.text {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
		})
	}
	// The session's list is not changed in place.
	if seeded[0].Tasks[0].Status != "completed" || len(seeded[0].Tasks) != 2 {
		t.Errorf("state modified: %+v", seeded)
	}
}

func TestTodoWriteBadArguments(t *testing.T) {
	t.Parallel()
	res, _ := runTodo(t, nil, `{"ops":"replace"}`)
	if !res.IsError || !strings.HasPrefix(res.Content[0].Text, "Invalid todo_write arguments") {
		t.Fatalf("got %+v", res)
	}
}
