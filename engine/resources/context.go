package resources

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/project"
)

// contextNames are the instruction files looked for in a directory: the
// first that exists is the directory's (CLAUDE.md counts only where no
// AGENTS.md sits beside it), as in the original.
var contextNames = []string{"AGENTS.md", "CLAUDE.md"}

// loadContext finds the user-level instruction file under agentDir, then
// the project ones from the repository root down to cwd, so the most
// specific instructions come last. Empty and unreadable files are skipped
// (an unreadable one with a warning).
func (l *loader) loadContext() []engine.ContextFile {
	var out []engine.ContextFile
	seen := map[string]bool{}
	add := func(dir string) {
		for _, name := range contextNames {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if seen[p] {
				return
			}
			seen[p] = true
			b, err := readFile(p)
			if err != nil {
				l.warnf("context file %s: %v", p, err)
				return
			}
			if strings.TrimSpace(string(b)) != "" {
				out = append(out, engine.ContextFile{Path: p, Content: string(b)})
			}
			return
		}
	}
	if l.o.AgentDir != "" {
		add(l.o.AgentDir)
	}
	dirs := l.projectDirs()
	for i := len(dirs) - 1; i >= 0; i-- {
		add(dirs[i])
	}
	return out
}

// projectDirs are cwd and its parents up to the project root, nearest
// first (engine/project: the one rule every project resource follows).
func (l *loader) projectDirs() []string {
	if l.dirs == nil {
		l.dirs = project.Dirs(l.o.Cwd)
	}
	return l.dirs
}
