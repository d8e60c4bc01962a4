package tools

import (
	"fmt"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// Names lists the built-in tools in the order they are offered to the
// model (and reported by get_state's dumpTools).
var Names = []string{"read", "write", "edit", "bash", "grep", "find", "todo_write"}

var constructors = map[string]func(Options) engine.Tool{
	"read":  NewRead,
	"write": NewWrite,
	"edit":  NewEdit,
	"bash":  NewBash,
	"grep":  NewGrep,
	"find":  NewFind,
	// The agent's plan (DECISIONS: part of the built-in set).
	"todo_write": NewTodoWrite,
}

// Builtins returns every built-in tool, and ask when the host has a UI.
func Builtins(o Options) []engine.Tool {
	out := make([]engine.Tool, 0, len(Names)+1)
	for _, n := range Names {
		out = append(out, constructors[n](o))
	}
	if o.HostUI {
		out = append(out, NewAsk(o))
	}
	return out
}

// Select returns the named tools in the order given, for --tools a,b. An
// unknown name is an error that lists the valid ones; duplicates are
// dropped; an empty list selects nothing.
func Select(o Options, names []string) ([]engine.Tool, error) {
	var out []engine.Tool
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		c, ok := constructors[n]
		if n == "ask" && o.HostUI {
			c, ok = NewAsk, true
		}
		if !ok {
			return nil, fmt.Errorf("unknown tool %q (available: %s)", n, strings.Join(Names, ", "))
		}
		seen[n] = true
		out = append(out, c(o))
	}
	return out, nil
}
