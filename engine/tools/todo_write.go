package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

type todoWriteTool struct{ spec }

// NewTodoWrite returns the todo_write tool (agent-core.md §4.8): the model
// keeps a phased task list by operations on it. The session takes the
// list of every successful result (details.phases) as its todo list.
func NewTodoWrite(Options) engine.Tool { return &todoWriteTool{spec: todoWriteSpec} }

var todoWriteSpec = spec{
	name: engine.TodoWriteTool,
	// Exclusive: each call reads the list the previous one wrote.
	concurrency: engine.Exclusive,
	description: "Keep a phased todo list of the work. Ops apply in order: " +
		"replace (phases: the whole list, ids restart), add_phase (name, tasks), add_task (phase id, content), " +
		"update (task id and any of status, content, notes, details), remove_task (task id). " +
		"Statuses: pending, in_progress, completed, abandoned; keep exactly one task in progress. " +
		"Use short task labels; put specifics in details.",
	schema: []byte(`{"type":"object","properties":{"ops":{"type":"array","minItems":1,"items":{"type":"object","properties":{` +
		`"op":{"type":"string","enum":["replace","add_phase","add_task","update","remove_task"]},` +
		`"phases":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"tasks":{"type":"array","items":` + todoTaskSchema + `}},"required":["name"],"additionalProperties":false}},` +
		`"name":{"type":"string","description":"add_phase: the phase name"},` +
		`"tasks":{"type":"array","items":` + todoTaskSchema + `},` +
		`"phase":{"type":"string","description":"add_task: the phase id (phase-N)"},` +
		`"id":{"type":"string","description":"update, remove_task: the task id (task-N)"},` +
		`"content":{"type":"string"},"status":{"type":"string"},"notes":{"type":"string"},"details":{"type":"string"}` +
		`},"required":["op"],"additionalProperties":false}}},"required":["ops"],"additionalProperties":false}`),
}

const todoTaskSchema = `{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string"},` +
	`"notes":{"type":"string"},"details":{"type":"string"}},"required":["content"],"additionalProperties":false}`

type todoTaskArg struct {
	Content string  `json:"content"`
	Status  string  `json:"status"`
	Notes   *string `json:"notes"`
	Details *string `json:"details"`
}

type todoOp struct {
	Op     string `json:"op"`
	Phases []struct {
		Name  string        `json:"name"`
		Tasks []todoTaskArg `json:"tasks"`
	} `json:"phases"`
	Name    string        `json:"name"`
	Tasks   []todoTaskArg `json:"tasks"`
	Phase   string        `json:"phase"`
	ID      string        `json:"id"`
	Content *string       `json:"content"`
	Status  *string       `json:"status"`
	Notes   *string       `json:"notes"`
	Details *string       `json:"details"`
}

// Run applies the ops to the session's list. Unknown ids and phases are
// reported in the text (the model fixes them); the call still succeeds
// with what applied.
func (t *todoWriteTool) Run(_ context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a struct {
		Ops []todoOp `json:"ops"`
	}
	if r, ok := decodeArgs(engine.TodoWriteTool, call.Arguments, &a); !ok {
		return r, nil
	}
	var phases []engine.TodoPhase
	if call.Todos != nil {
		phases = call.Todos()
	}
	phases, errs := applyTodoOps(phases, a.Ops)
	details := mustJSON(struct {
		Phases  []engine.TodoPhase `json:"phases"`
		Storage string             `json:"storage"`
	}{phases, "session"})
	return textResult(todoText(phases, errs), details), nil
}

// applyTodoOps applies todo_write operations to a list and normalises the
// result: ids continue from the highest number in use (replace restarts
// them at 1), statuses are read leniently, and exactly one task ends in
// progress when any is open (the first of several keeps it; with none,
// the first pending task takes it). errs lists what could not apply.
func applyTodoOps(phases []engine.TodoPhase, ops []todoOp) (out []engine.TodoPhase, errs []string) {
	out = append([]engine.TodoPhase{}, phases...)
	for i := range out {
		out[i].Tasks = append([]engine.TodoItem{}, out[i].Tasks...)
	}
	nextPhase, nextTask := maxTodoID(out)
	newTask := func(a todoTaskArg) engine.TodoItem {
		nextTask++
		t := engine.TodoItem{ID: "task-" + strconv.Itoa(nextTask), Content: a.Content, Status: engine.TodoPending}
		if st, ok := normaliseTodoStatus(a.Status); ok {
			t.Status = st
		}
		if a.Notes != nil {
			t.Notes = *a.Notes
		}
		if a.Details != nil {
			t.Details = *a.Details
		}
		return t
	}
	newPhase := func(name string, tasks []todoTaskArg) engine.TodoPhase {
		nextPhase++
		p := engine.TodoPhase{ID: "phase-" + strconv.Itoa(nextPhase), Name: name, Tasks: []engine.TodoItem{}}
		for _, a := range tasks {
			p.Tasks = append(p.Tasks, newTask(a))
		}
		return p
	}
	findTask := func(id string) (int, int) {
		for i := range out {
			for j := range out[i].Tasks {
				if out[i].Tasks[j].ID == id {
					return i, j
				}
			}
		}
		return -1, -1
	}
	for n, op := range ops {
		switch op.Op {
		case "replace":
			out, nextPhase, nextTask = []engine.TodoPhase{}, 0, 0
			for _, p := range op.Phases {
				out = append(out, newPhase(p.Name, p.Tasks))
			}
		case "add_phase":
			out = append(out, newPhase(op.Name, op.Tasks))
		case "add_task":
			i := -1
			for k := range out {
				if out[k].ID == op.Phase {
					i = k
				}
			}
			if i < 0 {
				errs = append(errs, fmt.Sprintf("op %d (add_task): phase %q not found", n+1, op.Phase))
				continue
			}
			a := todoTaskArg{Notes: op.Notes, Details: op.Details}
			if op.Content != nil {
				a.Content = *op.Content
			}
			if op.Status != nil {
				a.Status = *op.Status
			}
			out[i].Tasks = append(out[i].Tasks, newTask(a))
		case "update":
			i, j := findTask(op.ID)
			if i < 0 {
				errs = append(errs, fmt.Sprintf("op %d (update): task %q not found", n+1, op.ID))
				continue
			}
			t := &out[i].Tasks[j]
			if op.Status != nil {
				st, ok := normaliseTodoStatus(*op.Status)
				if !ok {
					errs = append(errs, fmt.Sprintf("op %d (update): unknown status %q for %s", n+1, *op.Status, op.ID))
				} else {
					t.Status = st
				}
			}
			if op.Content != nil {
				t.Content = *op.Content
			}
			if op.Notes != nil {
				t.Notes = *op.Notes
			}
			if op.Details != nil {
				t.Details = *op.Details
			}
		case "remove_task":
			i, j := findTask(op.ID)
			if i < 0 {
				errs = append(errs, fmt.Sprintf("op %d (remove_task): task %q not found", n+1, op.ID))
				continue
			}
			out[i].Tasks = append(out[i].Tasks[:j], out[i].Tasks[j+1:]...)
		default:
			errs = append(errs, fmt.Sprintf("op %d: unknown op %q", n+1, op.Op))
		}
	}
	oneInProgress(out)
	return out, errs
}

// maxTodoID returns the highest phase and task numbers in use.
func maxTodoID(phases []engine.TodoPhase) (phase, task int) {
	num := func(id, prefix string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(id, prefix))
		if err != nil || !strings.HasPrefix(id, prefix) {
			return 0
		}
		return n
	}
	for _, p := range phases {
		phase = max(phase, num(p.ID, "phase-"))
		for _, t := range p.Tasks {
			task = max(task, num(t.ID, "task-"))
		}
	}
	return phase, task
}

// normaliseTodoStatus reads a status the way models write it ("done",
// "In Progress", "cancelled"); "" and an unknown word are not ok.
func normaliseTodoStatus(s string) (string, bool) {
	k := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
	switch k {
	case "pending", "todo", "open", "not_started":
		return engine.TodoPending, true
	case "in_progress", "inprogress", "active", "doing", "started", "current":
		return engine.TodoInProgress, true
	case "completed", "complete", "done", "finished":
		return engine.TodoCompleted, true
	case "abandoned", "cancelled", "canceled", "skipped", "dropped":
		return engine.TodoAbandoned, true
	}
	return "", false
}

// oneInProgress keeps the first in-progress task and sets the others back
// to pending; with none in progress, the first pending task starts.
func oneInProgress(phases []engine.TodoPhase) {
	seen := false
	var firstPending *engine.TodoItem
	for i := range phases {
		for j := range phases[i].Tasks {
			t := &phases[i].Tasks[j]
			switch t.Status {
			case engine.TodoInProgress:
				if seen {
					t.Status = engine.TodoPending
				}
				seen = true
			case engine.TodoPending:
				if firstPending == nil {
					firstPending = t
				}
			}
		}
	}
	if !seen && firstPending != nil {
		firstPending.Status = engine.TodoInProgress
	}
}

var todoMarkers = map[string]string{
	engine.TodoCompleted:  "✓",
	engine.TodoInProgress: "→",
	engine.TodoAbandoned:  "✗",
	engine.TodoPending:    "○",
}

// todoText is todo_write's result text: the open tasks (with the details
// of the one in progress), where the work stands, every phase with a
// marker per task, and what could not apply.
func todoText(phases []engine.TodoPhase, errs []string) string {
	var b strings.Builder
	total := 0
	for _, p := range phases {
		total += len(p.Tasks)
	}
	if total == 0 {
		b.WriteString("Todo list cleared.")
	} else {
		var open []string
		current := -1
		for i, p := range phases {
			for _, t := range p.Tasks {
				if t.Status != engine.TodoPending && t.Status != engine.TodoInProgress {
					continue
				}
				open = append(open, fmt.Sprintf("  - %s %s [%s] (%s)", t.ID, t.Content, t.Status, p.Name))
				if t.Status == engine.TodoInProgress {
					current = i
					if t.Details != "" {
						open = append(open, "    "+strings.ReplaceAll(t.Details, "\n", "\n    "))
					}
				} else if current < 0 {
					current = i
				}
			}
		}
		if current < 0 {
			current = len(phases) - 1
		}
		fmt.Fprintf(&b, "Remaining items (%d):\n", countOpen(phases))
		for _, l := range open {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		p := phases[current]
		done := 0
		for _, t := range p.Tasks {
			if t.Status == engine.TodoCompleted || t.Status == engine.TodoAbandoned {
				done++
			}
		}
		fmt.Fprintf(&b, "Phase %d/%d %q — %d/%d tasks complete\n", current+1, len(phases), p.Name, done, len(p.Tasks))
		for _, p := range phases {
			fmt.Fprintf(&b, "\n%s:", p.Name)
			for _, t := range p.Tasks {
				m, ok := todoMarkers[t.Status]
				if !ok {
					m = "?"
				}
				fmt.Fprintf(&b, "\n  %s %s %s", m, t.ID, t.Content)
			}
		}
	}
	if len(errs) > 0 {
		b.WriteString("\n\nErrors: ")
		b.WriteString(strings.Join(errs, "; "))
	}
	return b.String()
}

func countOpen(phases []engine.TodoPhase) int {
	n := 0
	for _, p := range phases {
		for _, t := range p.Tasks {
			if t.Status == engine.TodoPending || t.Status == engine.TodoInProgress {
				n++
			}
		}
	}
	return n
}
