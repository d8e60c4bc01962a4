package fakeprovider

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidScript matches (with errors.Is) every error Parse and Load
// return for a script that is not valid JSON or breaks the format.
var ErrInvalidScript = errors.New("invalid fake script")

// ScriptError is a problem found while parsing a script. Turn and Step are
// 1-based; zero means the problem is not inside a turn (or a step).
type ScriptError struct {
	Name string // the name given to Parse, or the path given to Load
	Turn int
	Step int
	Err  error
}

// Error formats the problem as "fake script <name>: turn <t> step <s>: <err>".
func (e *ScriptError) Error() string {
	var b strings.Builder
	b.WriteString("fake script")
	if e.Name != "" {
		b.WriteString(" ")
		b.WriteString(e.Name)
	}
	if e.Turn > 0 {
		fmt.Fprintf(&b, ": turn %d", e.Turn)
		if e.Step > 0 {
			fmt.Fprintf(&b, " step %d", e.Step)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *ScriptError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidScript.
func (e *ScriptError) Is(target error) bool { return target == ErrInvalidScript }
