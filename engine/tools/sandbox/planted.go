package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// plantWatch is what the sandbox cannot keep a command from doing: create
// a configuration path that did not exist (Landlock grants rights on
// directories, not names, and a mount needs an existing path). It holds
// the configuration names missing at the top of each root when the
// policy was made, so the bash tool can say when one appears (Planted).
type plantWatch struct {
	mu       sync.Mutex
	paths    []string
	reported map[string]bool // guarded by mu
}

// watchMissing records the configuration names missing in p's roots now.
func (p *Policy) watchMissing() {
	w := &plantWatch{reported: map[string]bool{}}
	for _, r := range p.Roots {
		for _, name := range configNames {
			path := filepath.Join(r, name)
			if _, err := os.Lstat(path); os.IsNotExist(err) {
				w.paths = append(w.paths, path)
			}
		}
	}
	p.watch = w
}

// Planted returns the configuration paths that were missing when the
// policy was made and exist now, each once (nil policy, other modes:
// none). It costs a few lstat calls.
func (p *Policy) Planted() []string {
	if p == nil || p.watch == nil {
		return nil
	}
	w := p.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, path := range w.paths {
		if w.reported[path] {
			continue
		}
		if _, err := os.Lstat(path); err == nil {
			w.reported[path] = true
			out = append(out, path)
		}
	}
	return out
}

// PlantedNote is the bash tool's note for paths Planted returned.
func PlantedNote(paths []string) string {
	return "[Sandbox: " + strings.Join(paths, ", ") + " appeared during this session. Agents and git read such a file " +
		"when they start and may run what it names; the sandbox keeps existing ones read-only but cannot keep a command " +
		"from creating a missing one. Under a sandbox xcsh does not run a project's servers or extensions unasked; " +
		"without one it would: tell the user, and do not create such files unless asked.]"
}
