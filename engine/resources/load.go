package resources

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/xcsh-go/xcsh/engine"
)

// Options say where to look and what to skip.
type Options struct {
	Cwd      string
	AgentDir string // <agentDir>: ~/.xcsh/agent, or PI_CODING_AGENT_DIR
	Home     string // the user's home: ~/.agents, ~/.pi, ~/.claude
	// NoContext, NoSkills and NoTemplates turn the kinds off
	// (--no-context-files, --no-skills, --no-prompt-templates); the paths
	// named on the command line are read even then.
	NoContext, NoSkills, NoTemplates bool
	// SkillPaths (--skill) and TemplatePaths (--prompt-template) are files
	// or directories, relative to Cwd unless absolute; ~ is the home.
	SkillPaths, TemplatePaths []string
	// Log receives the warnings, one line each; nil discards them.
	Log io.Writer
}

// Load reads the instruction files, skills and templates that o names and
// returns them as the session's resources. It never fails: what cannot be
// read is a warning.
func Load(o Options) engine.Resources {
	l := &loader{o: o}
	if l.o.Log == nil {
		l.o.Log = io.Discard
	}
	var res engine.Resources
	if !o.NoContext {
		res.Context = l.loadContext()
	}
	cat := &catalog{}
	if !o.NoTemplates || len(o.TemplatePaths) > 0 {
		cat.templates = l.loadTemplates()
	}
	if !o.NoSkills || len(o.SkillPaths) > 0 {
		cat.skills = l.loadSkills()
	}
	for _, sk := range cat.skills {
		if !sk.Hidden {
			res.Skills = append(res.Skills, engine.PromptSkill{Name: sk.Name, Description: sk.Description, Path: sk.Path})
		}
	}
	if len(cat.templates)+len(cat.skills) > 0 {
		res.Commands = cat
	}
	return res
}

// loader carries one Load.
type loader struct {
	o    Options
	dirs []string // projectDirs, once computed
}

func (l *loader) warnf(format string, args ...any) {
	fmt.Fprintf(l.o.Log, "Warning: "+format+"\n", args...)
}

// resolve makes a command-line path absolute: ~ is the home, a relative
// path is taken from the working directory.
func (l *loader) resolve(p string) string {
	switch {
	case p == "~":
		return l.o.Home
	case len(p) > 1 && p[0] == '~' && p[1] == '/':
		return filepath.Join(l.o.Home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(l.o.Cwd, p)
}

// root is one directory resources are discovered in.
type root struct {
	dir    string
	real   string // dir with its links resolved ("" when unknown)
	scope  string // "user" or "project"
	source string // "auto"
}

// roots builds the discovery list: for each entry, the user-level
// directory (home-relative, or under the agent dir) or the project-level
// one in every project directory, nearest first. A directory met twice
// (the agent dir is ~/.pi/agent, say) is kept once.
func (l *loader) roots(entries []rootSpec) []root {
	var out []root
	seen := map[string]bool{}
	add := func(dir, scope string) {
		if _, err := os.Stat(dir); err != nil {
			return // missing: nothing to discover (most are)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		out = append(out, root{dir: dir, real: real, scope: scope, source: "auto"})
	}
	for _, e := range entries {
		switch {
		case e.agent != "":
			if l.o.AgentDir != "" {
				add(filepath.Join(l.o.AgentDir, e.agent), "user")
			}
		case e.home != "":
			if l.o.Home != "" {
				add(filepath.Join(l.o.Home, e.home), "user")
			}
		default:
			for _, d := range l.projectDirs() {
				add(filepath.Join(d, e.project), "project")
			}
		}
	}
	return out
}

// rootSpec names one discovery location: exactly one field is set.
type rootSpec struct {
	agent   string // under the agent dir
	home    string // under the home directory
	project string // under each project directory
}
