package engine

import (
	"fmt"
	"os"
	"path/filepath"
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
	// Context are project and user instruction files, in the order they
	// are shown (see LoadContextFiles).
	Context []ContextFile
}

// ContextFile is an instruction file included in the system prompt.
type ContextFile struct {
	Path    string
	Content string
}

// contextNames are the instruction files looked for in each directory,
// in order.
var contextNames = []string{"AGENTS.md", "CLAUDE.md"}

// LoadContextFiles finds the user-level AGENTS.md/CLAUDE.md under agentDir,
// then the project ones from the repository root (the nearest directory
// with .git, else the filesystem root) down to cwd, so the most specific
// instructions come last. read reads a file (cmd wires engine/safefile's
// capped reader, so a FIFO or /dev/zero named AGENTS.md cannot block or
// exhaust the start); files it cannot read are skipped.
func LoadContextFiles(cwd, agentDir string, read func(path string) ([]byte, error)) []ContextFile {
	var out []ContextFile
	add := func(dir string) {
		for _, name := range contextNames {
			p := filepath.Join(dir, name)
			b, err := read(p)
			if err != nil || len(strings.TrimSpace(string(b))) == 0 {
				continue
			}
			out = append(out, ContextFile{Path: p, Content: string(b)})
		}
	}
	if agentDir != "" {
		add(agentDir)
	}
	var dirs []string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		if parent := filepath.Dir(d); parent == d {
			// No repository: only the working directory itself counts, so
			// files in unrelated parents (a home directory) do not leak in.
			dirs = dirs[:1]
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		add(dirs[i])
	}
	return out
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
	if len(o.Context) > 0 {
		b.WriteString("\n# Project context\n")
		for _, c := range o.Context {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", c.Path, strings.TrimRight(c.Content, "\n"))
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
