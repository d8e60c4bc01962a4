package resources

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// Template is one prompt template: a *.md file invoked as "/name args".
type Template struct {
	Name, Description, ArgumentHint string
	Path                            string
	Body                            string // the content after the frontmatter, trimmed
	Info                            engine.SourceInfo
}

// templateRoots are the directories whose *.md files are templates, in
// precedence order (the first of a name wins); none is searched
// recursively.
var templateRoots = []rootSpec{
	{agent: "prompts"},
	{project: ".xcsh/prompts"},
	{project: ".pi/prompts"},
	{project: ".omp/prompts"},
	{project: ".claude/commands"},
	{home: ".claude/commands"},
}

// maxDescriptionLine bounds a description taken from the body's first
// line, as the original does.
const maxDescriptionLine = 60

// loadTemplates reads every root's templates, then those named with
// --prompt-template (files or directories).
func (l *loader) loadTemplates() []Template {
	var out []Template
	byName := map[string]string{}
	add := func(t Template) {
		if first, ok := byName[t.Name]; ok {
			l.warnf("prompt template %q at %s ignored: the name is taken by %s", t.Name, t.Path, first)
			return
		}
		byName[t.Name] = t.Path
		out = append(out, t)
	}
	if !l.o.NoTemplates {
		for _, r := range l.roots(templateRoots) {
			l.scanTemplates(r, add)
		}
	}
	for _, p := range l.o.TemplatePaths {
		path := l.resolve(p)
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			l.warnf("prompt template path %s: does not exist", path)
		case fi.IsDir():
			l.scanTemplates(root{dir: path, scope: "temporary", source: "cli"}, add)
		case strings.HasSuffix(path, ".md"):
			if t, ok := l.loadTemplate(root{dir: filepath.Dir(path), scope: "temporary", source: "cli"}, path); ok {
				add(t)
			}
		default:
			l.warnf("prompt template path %s: not a markdown file", path)
		}
	}
	return out
}

func (l *loader) scanTemplates(r root, add func(Template)) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		if !os.IsNotExist(err) {
			l.warnf("prompt templates directory %s: %v", r.dir, err)
		}
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".md") {
			continue
		}
		p := filepath.Join(r.dir, name)
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
		} else if !e.Type().IsRegular() {
			continue
		}
		if t, ok := l.loadTemplate(r, p); ok {
			add(t)
		}
	}
}

func (l *loader) loadTemplate(r root, path string) (Template, bool) {
	b, err := readFile(path)
	if err != nil {
		l.warnf("prompt template %s: %v; skipped", path, err)
		return Template{}, false
	}
	d := parseDocument(string(b))
	if d.problem != "" {
		l.warnf("prompt template %s: %s", path, d.problem)
	}
	desc := d.str("description")
	if desc == "" {
		desc = firstLineDescription(d.body)
	}
	return Template{
		Name: strings.TrimSuffix(filepath.Base(path), ".md"), Description: desc,
		ArgumentHint: d.str("argument-hint"), Path: path, Body: d.body,
		Info: engine.SourceInfo{Path: path, Source: r.source, Scope: r.scope, BaseDir: r.dir},
	}, true
}

// firstLineDescription is the body's first non-empty line, cut to
// maxDescriptionLine characters with "..." after a cut.
func firstLineDescription(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > maxDescriptionLine {
				return string(r[:maxDescriptionLine]) + "..."
			}
			return line
		}
	}
	return ""
}

// ParseArgs splits a command's arguments as a shell would for plain
// words and quotes: white space separates, '…' and "…" group (the quotes
// removed, no escapes inside), as the original's parser does.
func ParseArgs(s string) []string {
	var args []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)`) })

// Substitute fills a template's placeholders in one pass (an argument
// holding "$1" stays as it is): $1, $2, … the arguments (missing ones
// empty), $@ and $ARGUMENTS all of them joined by spaces, ${@:N} those
// from the Nth on, ${@:N:L} L of them from the Nth.
func Substitute(body string, args []string) string {
	all := strings.Join(args, " ")
	return placeholder().ReplaceAllStringFunc(body, func(m string) string {
		sub := placeholder().FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			start, _ := strconv.Atoi(sub[1])
			start = max(start-1, 0)
			if start >= len(args) {
				return ""
			}
			end := len(args)
			if sub[2] != "" {
				n, _ := strconv.Atoi(sub[2])
				end = min(start+n, len(args))
			}
			return strings.Join(args[start:end], " ")
		case sub[3] == "ARGUMENTS" || sub[3] == "@":
			return all
		}
		i, err := strconv.Atoi(sub[3])
		if err != nil || i < 1 || i > len(args) {
			return ""
		}
		return args[i-1]
	})
}

// expand is the text "/name args" becomes.
func (t Template) expand(args string) string { return Substitute(t.Body, ParseArgs(args)) }
