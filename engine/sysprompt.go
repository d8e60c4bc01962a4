package engine

import (
	"fmt"
	"strings"
	"time"
)

// SystemPromptOptions are the inputs of the default system prompt.
type SystemPromptOptions struct {
	Tools  []Tool
	Cwd    string
	OS     string
	Now    int64  // Unix ms; the date line uses it
	Custom string // replaces the built-in base text when non-empty
	Append string // appended after everything else
}

// BuildSystemPrompt returns the effective system prompt: a concise base
// describing the active tools and the environment, then any appended text.
func BuildSystemPrompt(o SystemPromptOptions) string {
	var b strings.Builder
	if o.Custom != "" {
		b.WriteString(o.Custom)
	} else {
		b.WriteString("You are xcsh, a coding agent working in the user's project through tools. ")
		b.WriteString("Be concise; read before you edit; prefer small, verifiable changes.\n")
		if len(o.Tools) > 0 {
			b.WriteString("\nAvailable tools:\n")
			for _, t := range o.Tools {
				fmt.Fprintf(&b, "- %s: %s\n", t.Name(), firstLine(t.Description()))
			}
		} else {
			b.WriteString("\nNo tools are available in this session.\n")
		}
	}
	date := time.UnixMilli(o.Now).UTC().Format("2006-01-02")
	fmt.Fprintf(&b, "\nWorking directory: %s\nDate: %s\nOS: %s\n", o.Cwd, date, o.OS)
	if o.Append != "" {
		b.WriteString("\n")
		b.WriteString(o.Append)
		b.WriteString("\n")
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
