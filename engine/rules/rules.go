// Package rules finds and reads the project and user rules that TTSR
// enforces (agent-core.md §11.1): Markdown files (*.md, *.mdc) whose YAML
// frontmatter has a condition. They are looked for in the agent's own
// folders and, so that rules written for other tools work unchanged, in
// theirs, in this order (the first rule of a name wins):
//
//	.xcsh/rules/     <agentDir>/rules/    .omp/rules/
//	.cursor/rules/   .windsurf/rules/     .clinerules (a file, or a folder)
//
// each project folder kind in the working directory and each parent up to
// the project root, nearest first (engine/project).
//
// A rule's name is its file name without the extension. Files without a
// condition are ordinary rules, not TTSR rules, and are skipped quietly;
// a malformed one (bad YAML, a bad regular expression, an unknown scope
// or interrupt mode) is reported and skipped.
package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

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

// Sources lists the places rules are looked for, in order: each project
// folder kind in the working directory and each parent up to the project
// root, nearest first (engine/project), the agent's own after ours.
func Sources(cwd, agentDir string) []string {
	dirs := project.Dirs(cwd)
	var out []string
	each := func(elem ...string) {
		for _, d := range dirs {
			out = append(out, filepath.Join(append([]string{d}, elem...)...))
		}
	}
	each(".xcsh", "rules")
	if agentDir != "" {
		out = append(out, filepath.Join(agentDir, "rules"))
	}
	each(".omp", "rules")
	each(".cursor", "rules")
	each(".windsurf", "rules")
	each(".clinerules")
	return out
}

// Discover returns the compiled TTSR rules of cwd and agentDir, each name
// once. Problems are written to log, one line per file.
func Discover(cwd, agentDir string, log io.Writer) []*engine.Rule {
	var out []*engine.Rule
	seen := map[string]bool{}
	for _, src := range Sources(cwd, agentDir) {
		for _, path := range ruleFiles(src) {
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			if seen[name] {
				continue
			}
			r, err := load(path, name)
			if err != nil {
				fmt.Fprintf(log, "xcsh: rule %s: %v; skipped\n", path, err)
				continue
			}
			if r == nil {
				continue
			}
			seen[name] = true
			out = append(out, r)
		}
	}
	return out
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

// frontmatter is what a rule file's header may say.
type frontmatter struct {
	Description   string  `yaml:"description"`
	Globs         strList `yaml:"globs"`
	AlwaysApply   bool    `yaml:"alwaysApply"`
	Condition     strList `yaml:"condition"`
	TTSRTrigger   strList `yaml:"ttsr_trigger"`
	TTSRTrigger2  strList `yaml:"ttsrTrigger"`
	Scope         strList `yaml:"scope"`
	InterruptMode string  `yaml:"interruptMode"`
	Enabled       *bool   `yaml:"enabled"`
}

// strList reads a string or a list of strings; a string of
// comma-separated globs (Cursor's form) is split by load.
type strList []string

func (l *strList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = strList{n.Value}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = s
		return nil
	}
	return errors.New("want a string or a list of strings")
}

// load reads one rule file; nil (and no error) when it is not a TTSR rule.
func load(path, name string) (*engine.Rule, error) {
	b, err := readRuleFile(path)
	if err != nil {
		return nil, err
	}
	head, body, ok := split(b)
	if !ok {
		return nil, nil // no frontmatter: not a TTSR rule
	}
	var fm frontmatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	cond := clean(fm.Condition)
	if cond == nil {
		cond = clean(fm.TTSRTrigger)
	}
	if cond == nil {
		cond = clean(fm.TTSRTrigger2)
	}
	if cond == nil || (fm.Enabled != nil && !*fm.Enabled) {
		return nil, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	r := &engine.Rule{
		Name: name, Path: abs, Content: strings.TrimSpace(string(body)),
		Description: fm.Description, AlwaysApply: fm.AlwaysApply,
		Condition: cond, InterruptMode: fm.InterruptMode,
	}
	for _, g := range fm.Globs {
		for _, p := range strings.Split(g, ",") {
			if p = strings.TrimSpace(p); p != "" {
				r.Globs = append(r.Globs, p)
			}
		}
	}
	for _, s := range fm.Scope {
		r.Scope = append(r.Scope, splitScope(s)...)
	}
	if err := r.Compile(); err != nil {
		return nil, err
	}
	return r, nil
}

// clean trims the entries and drops empty ones and repeats; nil when
// nothing is left.
func clean(l strList) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range l {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// splitScope splits "text, tool:edit(a,b)" at the commas outside
// parentheses.
func splitScope(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(':
				depth++
				continue
			case ')':
				depth = max(0, depth-1)
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if tok := strings.Trim(strings.TrimSpace(s[start:i]), `"'`); tok != "" {
			out = append(out, tok)
		}
		start = i + 1
	}
	return out
}

// split cuts a file into its YAML frontmatter (between two --- lines at
// the top) and its body.
func split(b []byte) (head, body []byte, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(b, []byte("---\n")) {
		return nil, b, false
	}
	rest := b[4:]
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return nil, bytes.TrimPrefix(rest, []byte("---")), true
	}
	i := bytes.Index(rest, []byte("\n---"))
	if i < 0 {
		return nil, b, false
	}
	end := i + 4
	if end < len(rest) && rest[end] != '\n' {
		return nil, b, false
	}
	return rest[:i+1], rest[min(end+1, len(rest)):], true
}
