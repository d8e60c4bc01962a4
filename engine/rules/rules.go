// Package rules finds and reads the rules a project (or the user) wrote
// for xcsh or for another coding agent, and applies each as its tool
// means it, so that rules written for Cursor, Windsurf, Claude Code or
// Cline work unchanged. A rule is a Markdown file (*.md, *.mdc) with an
// optional YAML frontmatter. They are looked for in these folders, in
// this order (the first rule of a name wins; a rule's name is its file
// name without the extension):
//
//	.xcsh/rules/     <agentDir>/rules/    .omp/rules/
//	.cursor/rules/   .windsurf/rules/     .clinerules (a file, or a folder)
//	.claude/rules/
//
// each project folder kind in the working directory and each parent up to
// the project root, nearest first (engine/project).
//
// What a rule becomes (Kind, decided by classify from the frontmatter
// and the folder's family):
//
//   - a TTSR rule (agent-core.md §11.1): a condition (or the legacy
//     ttsr_trigger / ttsrTrigger) is watched while the model streams;
//   - always applied (engine.RuleAlways): Cursor's alwaysApply: true,
//     Windsurf's trigger: always_on, and a plain file (no frontmatter
//     saying otherwise) in a folder whose tool applies those always:
//     ours, Cline's and Claude's;
//   - attached to the files it names (engine.RuleFiles): Cursor's and
//     Windsurf's globs, Claude's and Cline's paths;
//   - requested (engine.RuleRequested): only a description (Cursor's
//     "agent requested", Windsurf's model_decision): the model reads it
//     when a task matches.
//
// A rule that cannot be used is a warning naming its file, never fatal:
// a manual rule (Cursor's rule with none of those fields, Windsurf's
// trigger: manual, applied only when @-mentioned in those editors), a
// glob trigger without globs, bad YAML, a bad regular expression, an
// unknown scope, trigger or interrupt mode. enabled: false turns a rule
// off quietly.
package rules

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/project"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// maxRuleBytes bounds a rule file: a rule is a page of text.
const maxRuleBytes = 1 << 20

// readRuleFile is the one place rule files are read: a regular file
// only, at most maxRuleBytes, opened safely (never blocking on a FIFO,
// never a device or the agent's own streams).
func readRuleFile(path string) ([]byte, error) { return safefile.ReadFile(path, maxRuleBytes) }

// family is whose format a rules folder holds; it decides what a file
// that says nothing of when it applies means.
type family int

const (
	familyXcsh     family = iota // .xcsh/rules, <agentDir>/rules: plain means always
	familyOmp                    // .omp/rules: Cursor's fields
	familyCursor                 // .cursor/rules: plain means manual
	familyWindsurf               // .windsurf/rules: trigger, plain means manual
	familyCline                  // .clinerules: plain means always, paths scopes
	familyClaude                 // .claude/rules: plain means always, paths scopes
)

// plainAlways reports whether the family's tool applies a file with no
// frontmatter (or none that says when) to every request.
func (f family) plainAlways() bool {
	return f == familyXcsh || f == familyCline || f == familyClaude
}

// Source is one place rules are looked for.
type Source struct {
	Path   string // a folder of rules, or (.clinerules) a single file
	Base   string // the folder a rule's globs are relative to
	family family
}

// Sources lists the places rules are looked for, in order: each project
// folder kind in the working directory and each parent up to the project
// root, nearest first (engine/project), the agent's own after ours. A
// user rule's globs are relative to the project root.
func Sources(cwd, agentDir string) []Source {
	dirs := project.Dirs(cwd)
	var out []Source
	each := func(f family, elem ...string) {
		for _, d := range dirs {
			out = append(out, Source{Path: filepath.Join(append([]string{d}, elem...)...), Base: d, family: f})
		}
	}
	each(familyXcsh, ".xcsh", "rules")
	if agentDir != "" {
		out = append(out, Source{Path: filepath.Join(agentDir, "rules"), Base: dirs[len(dirs)-1], family: familyXcsh})
	}
	each(familyOmp, ".omp", "rules")
	each(familyCursor, ".cursor", "rules")
	each(familyWindsurf, ".windsurf", "rules")
	each(familyCline, ".clinerules")
	each(familyClaude, ".claude", "rules")
	return out
}

// Found are the rules of a project and user, each name once, in source
// order.
type Found struct {
	TTSR   []*engine.Rule      // compiled
	Prompt []engine.PromptRule // always, requested and file rules
}

// Discover returns the rules of cwd and agentDir. Problems are written to
// log, one line per file: "xcsh: rule <path>: <why>; skipped".
func Discover(cwd, agentDir string, log io.Writer) Found {
	var out Found
	seen := map[string]bool{}
	for _, src := range Sources(cwd, agentDir) {
		for _, path := range ruleFiles(src.Path) {
			name := ruleName(path)
			if seen[name] {
				continue
			}
			r, err := load(path, name, src)
			if err != nil {
				fmt.Fprintf(log, "xcsh: rule %s: %v; skipped\n", path, err)
				continue
			}
			if r.warning != "" {
				fmt.Fprintf(log, "xcsh: rule %s: %s\n", path, r.warning)
			}
			switch {
			case r.ttsr != nil:
				out.TTSR = append(out.TTSR, r.ttsr)
			case r.prompt != nil:
				out.Prompt = append(out.Prompt, *r.prompt)
			default:
				continue // turned off
			}
			seen[name] = true
		}
	}
	return out
}

// ruleName is a rule's name: its file name without the extension (a
// single .clinerules file is "clinerules").
func ruleName(path string) string {
	base := filepath.Base(path)
	if name := strings.TrimSuffix(base, filepath.Ext(base)); name != "" {
		return name
	}
	return strings.TrimPrefix(base, ".")
}

// ruleFiles lists the rule files of a source: the *.md and *.mdc files
// under a folder (sorted), or the source itself when it is a file.
func ruleFiles(src string) []string {
	fi, err := os.Stat(src)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		return []string{src}
	}
	var out []string
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".mdc")) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
