package resources

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
)

// Skill is one Agent Skill: a SKILL.md (or, at the top of a skills
// directory, any *.md) with name and description frontmatter.
type Skill struct {
	Name, Description string
	Path              string // the file the model reads
	BaseDir           string // the skill's directory: references resolve from it
	// Hidden skills (disable-model-invocation: true) are not listed in the
	// system prompt; /skill:name still invokes them.
	Hidden bool
	Body   string // the content after the frontmatter, trimmed
	Info   engine.SourceInfo
}

// skillRoots are the places skills are discovered, in precedence order
// (the first of a name wins): ours, the Agent Skills standard's, then
// those of the agents a user may come from.
var skillRoots = []rootSpec{
	{agent: "skills"},
	{project: ".xcsh/skills"},
	{project: ".agents/skills"},
	{home: ".agents/skills"},
	{project: ".pi/skills"},
	{home: ".pi/agent/skills"},
	{project: ".omp/skills"},
	{project: ".claude/skills"},
	{home: ".claude/skills"},
}

// Limits of the Agent Skills standard; exceeding them is a warning.
const (
	maxSkillName        = 64
	maxSkillDescription = 1024
	maxSkillDepth       = 6 // directories below a root (symlink loops end here)
)

var skillNameRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// loadSkills discovers the skills of every root, then those named with
// --skill. Duplicated names keep the first, with a warning; a file reached
// twice (through a link) is kept once, silently.
func (l *loader) loadSkills() []Skill {
	var out []Skill
	byName := map[string]Skill{}
	files := map[string]bool{}
	// real is the file's path with links resolved: the same file reached
	// twice (a linked skills directory) is kept once, silently.
	add := func(sk Skill, real string) {
		if files[real] {
			return
		}
		if first, ok := byName[sk.Name]; ok {
			l.warnf("skill %q at %s ignored: the name is taken by %s", sk.Name, sk.Path, first.Path)
			return
		}
		files[real] = true
		byName[sk.Name] = sk
		out = append(out, sk)
	}
	if !l.o.NoSkills {
		for _, r := range l.roots(skillRoots) {
			l.scanSkills(r, r.dir, r.real, 0, add)
		}
	}
	for _, p := range l.o.SkillPaths {
		path := l.resolve(p)
		fi, err := os.Stat(path)
		r := root{dir: path, scope: "temporary", source: "cli"}
		real, rerr := filepath.EvalSymlinks(path)
		if rerr != nil {
			real = path
		}
		switch {
		case err != nil:
			l.warnf("skill path %s: does not exist", path)
		case fi.IsDir():
			l.scanSkills(r, path, real, 0, add)
		case strings.HasSuffix(path, ".md"):
			r.dir = filepath.Dir(path)
			if sk, ok := l.loadSkill(r, path, filepath.Base(filepath.Dir(path))); ok {
				add(sk, real)
			}
		default:
			l.warnf("skill path %s: not a markdown file", path)
		}
	}
	return out
}

// scanSkills walks dir (real: dir with its links resolved): at the top of
// a root every *.md is a skill, below it every SKILL.md is (its directory
// names it). Hidden entries and node_modules are skipped; os.ReadDir's
// name order keeps the result deterministic. Only links cost a stat.
func (l *loader) scanSkills(r root, dir, real string, depth int, add func(Skill, string)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if depth == 0 && !os.IsNotExist(err) {
			l.warnf("skills directory %s: %v", dir, err)
		}
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		p, rp := filepath.Join(dir, name), filepath.Join(real, name)
		mode := e.Type()
		if mode&os.ModeSymlink != 0 {
			fi, err := os.Stat(p) // a broken link is skipped
			if err != nil {
				continue
			}
			mode = fi.Mode().Type()
			if rp, err = filepath.EvalSymlinks(p); err != nil {
				continue
			}
		}
		switch {
		case mode.IsDir():
			if depth < maxSkillDepth {
				l.scanSkills(r, p, rp, depth+1, add)
			}
		case !mode.IsRegular():
		case depth == 0 && strings.HasSuffix(name, ".md"):
			if sk, ok := l.loadSkill(r, p, strings.TrimSuffix(name, ".md")); ok {
				add(sk, rp)
			}
		case depth > 0 && name == "SKILL.md":
			if sk, ok := l.loadSkill(r, p, filepath.Base(dir)); ok {
				add(sk, rp)
			}
		}
	}
}

// loadSkill reads one skill file. dirName is the name the standard
// expects (the skill's directory). Problems are warnings; only a file
// that cannot be read or has no description is skipped.
func (l *loader) loadSkill(r root, path, dirName string) (Skill, bool) {
	b, err := readFile(path)
	if err != nil {
		l.warnf("skill %s: %v; skipped", path, err)
		return Skill{}, false
	}
	d := parseDocument(string(b))
	if d.problem != "" {
		l.warnf("skill %s: %s", path, d.problem)
	}
	desc := d.str("description")
	if desc == "" {
		l.warnf("skill %s: description is required; skipped", path)
		return Skill{}, false
	}
	if n := len([]rune(desc)); n > maxSkillDescription {
		l.warnf("skill %s: description exceeds %d characters (%d)", path, maxSkillDescription, n)
	}
	name := d.str("name")
	if name == "" {
		name = dirName
	}
	for _, p := range nameProblems(name, dirName) {
		l.warnf("skill %s: %s", path, p)
	}
	return Skill{
		Name: name, Description: desc, Path: path, BaseDir: filepath.Dir(path),
		Hidden: d.flag("disable-model-invocation"), Body: d.body,
		Info: engine.SourceInfo{Path: path, Source: r.source, Scope: r.scope, BaseDir: r.dir},
	}, true
}

// nameProblems checks a skill name against the Agent Skills standard.
func nameProblems(name, dirName string) []string {
	var out []string
	if name != dirName {
		out = append(out, fmt.Sprintf("name %q does not match its directory %q", name, dirName))
	}
	if n := len(name); n > maxSkillName {
		out = append(out, fmt.Sprintf("name exceeds %d characters (%d)", maxSkillName, n))
	}
	if !skillNameRule().MatchString(name) {
		out = append(out, fmt.Sprintf("name %q is not lowercase letters, digits and single inner hyphens", name))
	}
	return out
}

// expand is the text "/skill:name args" becomes: the skill's content in
// the block the original sends, then the arguments.
func (sk Skill) expand(args string) string {
	var b strings.Builder
	b.WriteString(`<skill name="` + sk.Name + `" location="` + sk.Path + "\">\n")
	b.WriteString("References are relative to " + sk.BaseDir + ".\n\n")
	b.WriteString(sk.Body + "\n</skill>")
	if args = strings.TrimSpace(args); args != "" {
		b.WriteString("\n\n")
		b.WriteString(args)
	}
	return b.String()
}
