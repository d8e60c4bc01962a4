package engine

import (
	"fmt"
	"strings"
)

// HostToolProblem says what is wrong with a host tool definition.
type HostToolProblem int

// The problems SetHostTools reports, in the order it checks them.
const (
	HostToolNoName        HostToolProblem = iota + 1 // Index set
	HostToolNoDescription                            // Name set
	HostToolNoSchema                                 // Name set: parameters is not a JSON object
	HostToolBadSchema                                // Name, Err set: Validator.Check refused parameters
	HostToolNotUnique                                // two definitions share a name
	HostToolConflict                                 // Name set: a tool that is not the host's has it
)

// HostToolError is a host tool registration refused by SetHostTools.
type HostToolError struct {
	Problem HostToolProblem
	Index   int
	Name    string
	Err     error // why the schema was refused (HostToolBadSchema)
}

func (e *HostToolError) Unwrap() error { return e.Err }

func (e *HostToolError) Error() string {
	switch e.Problem {
	case HostToolNoName:
		return fmt.Sprintf("host tool at index %d has no name", e.Index)
	case HostToolNoDescription:
		return fmt.Sprintf("host tool %q has no description", e.Name)
	case HostToolNoSchema:
		return fmt.Sprintf("host tool %q has no JSON Schema object", e.Name)
	case HostToolBadSchema:
		return fmt.Sprintf("host tool %q has an unusable JSON Schema: %v", e.Name, e.Err)
	case HostToolNotUnique:
		return "host tool names are not unique"
	}
	return fmt.Sprintf("host tool %q conflicts with an existing tool", e.Name)
}

// SetHostTools registers the host's tools (rpc-protocol §7.2), checked in
// the original's order: each definition has a name, a description and a
// JSON Schema object of parameters (names and labels are trimmed; a
// missing label is the name), names are unique, and none is taken by a
// tool that is not the host's. Ours beside the original's: the Validator
// (when there is one) accepts each schema (Validator.Check), so a schema
// that refers outside itself is refused here rather than at the tool's
// first call. The previous host tools are replaced (an empty list removes
// them); hidden tools are registered but not offered.
// The model is offered the new set from its next call, with the system
// prompt rebuilt for it (Config.RebuildPrompt). It returns the registered
// names. (actor)
func (s *Session) SetHostTools(defs []HostToolDef) ([]string, error) {
	var tools []Tool
	var others []string
	for _, t := range s.set.tools {
		if !IsHostTool(t) {
			tools = append(tools, t)
			others = append(others, t.Name())
		}
	}
	clean, err := CheckHostTools(defs, s.cfg.Validator, others)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(clean))
	for _, d := range clean {
		names = append(names, d.Name)
		if !d.Hidden {
			tools = append(tools, s.newHostTool(d))
		}
	}
	s.SetActiveTools(tools)
	return names, nil
}

// CheckHostTools is SetHostTools' check of the definitions (v nil: the
// schemas are not checked by a Validator; others: the names of the tools
// that are not the host's, in order), shared with the durable session. It
// returns the definitions trimmed, each with a label.
func CheckHostTools(defs []HostToolDef, v Validator, others []string) ([]HostToolDef, error) {
	clean := make([]HostToolDef, 0, len(defs))
	for i, d := range defs {
		d.Name = strings.TrimSpace(d.Name)
		switch {
		case d.Name == "":
			return nil, &HostToolError{Problem: HostToolNoName, Index: i}
		case strings.TrimSpace(d.Description) == "":
			return nil, &HostToolError{Problem: HostToolNoDescription, Index: i, Name: d.Name}
		case !strings.HasPrefix(strings.TrimSpace(string(d.Parameters)), "{"):
			return nil, &HostToolError{Problem: HostToolNoSchema, Index: i, Name: d.Name}
		}
		if v != nil {
			if err := v.Check(d.Parameters); err != nil {
				return nil, &HostToolError{Problem: HostToolBadSchema, Index: i, Name: d.Name, Err: err}
			}
		}
		if d.Label = strings.TrimSpace(d.Label); d.Label == "" {
			d.Label = d.Name
		}
		clean = append(clean, d)
	}
	seen := make(map[string]bool, len(clean))
	for _, d := range clean {
		if seen[d.Name] {
			return nil, &HostToolError{Problem: HostToolNotUnique}
		}
		seen[d.Name] = true
	}
	for _, name := range others {
		if seen[name] {
			return nil, &HostToolError{Problem: HostToolConflict, Name: name}
		}
	}
	return clean, nil
}
