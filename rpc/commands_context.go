package rpc

import (
	"encoding/json"

	"github.com/xcsh-go/xcsh/engine"
)

// The context commands: set_todos, compact and set_auto_compaction.

type todoPhaseArg struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Tasks json.RawMessage `json:"tasks"`
}

// cmdSetTodos replaces the todo list with the host's and answers it as
// stored ({"todoPhases":[…]}): the original's projection, nothing
// validated or generated. phases must be an array, and so must every
// phase's tasks (the original throws a TypeError there).
func (s *Server) cmdSetTodos(c *command) {
	list, err := TodoList(c.line)
	if err != nil {
		s.fail(c, err)
		return
	}
	stored := s.sess.SetTodos(list)
	s.okJSON(c, todosData{stored})
}

// TodoList reads the list of a set_todos command line, with the Server's
// rule and refusals (a durable front, engine/durable, reads it with it).
func TodoList(line []byte) ([]engine.TodoPhase, error) {
	const typ = "set_todos"
	raw := member(line, "phases")
	var phases []json.RawMessage
	if raw == nil || raw[0] != '[' || readExact(raw, &phases) != nil {
		return nil, errMustBe(typ, "phases", "an array")
	}
	list := make([]engine.TodoPhase, 0, len(phases))
	for _, rp := range phases {
		var p todoPhaseArg
		if rp[0] != '{' || readExact(rp, &p) != nil {
			return nil, errMustBe(typ, "phases[]", "an object with id, name and tasks")
		}
		var tasks []engine.TodoItem
		if len(p.Tasks) == 0 || p.Tasks[0] != '[' {
			return nil, errMustBe(typ, "tasks", "an array")
		}
		if err := readExact(p.Tasks, &tasks); err != nil {
			return nil, errInvalid(typ, "a task's id, content, status and notes must be strings")
		}
		if tasks == nil {
			tasks = []engine.TodoItem{}
		}
		list = append(list, engine.TodoPhase{ID: p.ID, Name: p.Name, Tasks: tasks})
	}
	return list, nil
}

// cmdCompact summarises the context by hand. It answers when the summary
// is in place (or failed); the input behind it is held until then, except
// what passes an abort's hold (get_state, abort, replies): abort cancels
// the compaction ("Compaction cancelled").
func (s *Server) cmdCompact(c *command) {
	var a compactArgs
	if err := decode(c, &a); err != nil {
		s.fail(c, errMustBe(c.typ, "customInstructions", "a string"))
		return
	}
	custom := ""
	if a.CustomInstructions != nil {
		custom = *a.CustomInstructions
	}
	release := c.later()
	s.sess.Compact(custom, func(res *engine.CompactionResult, err error) {
		if err != nil {
			s.fail(c, err)
		} else {
			s.ok(c, res.AppendJSON(nil))
		}
		release()
	})
}

// cmdSetAutoCompaction turns automatic compaction on or off for this
// session (never written to the user's settings, DECISIONS "Sessions").
func (s *Server) cmdSetAutoCompaction(c *command) {
	on, ok := s.boolArg(c, "enabled")
	if !ok {
		return
	}
	s.sess.SetAutoCompaction(on)
	s.ok(c, nil)
}
