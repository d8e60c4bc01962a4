package rules

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// loaded is what one rule file became: a TTSR rule, a prompt rule, or
// neither (turned off with enabled: false).
type loaded struct {
	ttsr   *engine.Rule
	prompt *engine.PromptRule
	// warning is a problem that did not stop the rule (frontmatter read
	// line by line), for the log.
	warning string
}

// load reads one rule file and decides what it is (the package comment's
// table). An error says why the rule cannot be used.
func load(path, name string, src Source) (loaded, error) {
	b, err := readRuleFile(path)
	if err != nil {
		return loaded{}, err
	}
	head, body, hasFront := split(b)
	var fm frontmatter
	var out loaded
	if hasFront {
		if fm, out.warning, err = parseFrontmatter(head); err != nil {
			return loaded{}, err
		}
	}
	if fm.enabled != nil && !*fm.enabled {
		return out, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	content := strings.TrimSpace(string(body))
	globs := splitGlobs(append(append([]string(nil), fm.globs...), fm.paths...))
	if cond := firstList(fm.condition, fm.ttsrTrigger, fm.ttsrTrigger2); cond != nil {
		r := &engine.Rule{
			Name: name, Path: abs, Content: content, Description: fm.description, AlwaysApply: fm.alwaysApply,
			Condition: cond, InterruptMode: fm.interruptMode, Globs: globs,
		}
		for _, s := range fm.scope {
			r.Scope = append(r.Scope, splitScope(s)...)
		}
		if err := r.Compile(); err != nil {
			return loaded{}, err
		}
		out.ttsr = r
		return out, nil
	}
	apply, err := classify(fm, globs, src.family)
	if err != nil {
		return loaded{}, err
	}
	if content == "" {
		return loaded{}, errors.New("the rule has no text")
	}
	pr := &engine.PromptRule{Name: name, Path: abs, Description: fm.description, Content: content, Apply: apply}
	if apply == engine.RuleFiles {
		pr.Globs, pr.Base = globs, src.Base
	}
	out.prompt = pr
	return out, nil
}

// classify decides how a rule without a condition reaches the model: as
// its family's tool would apply it.
func classify(fm frontmatter, globs []string, f family) (string, error) {
	switch fm.trigger {
	case "":
	case "always_on":
		return engine.RuleAlways, nil
	case "glob":
		if len(globs) == 0 {
			return "", errors.New("trigger: glob needs globs (the files it applies to)")
		}
		return engine.RuleFiles, nil
	case "model_decision":
		if fm.description == "" {
			return "", errors.New("trigger: model_decision needs a description (what tells the model to read it)")
		}
		return engine.RuleRequested, nil
	case "manual":
		return "", errors.New("trigger: manual: Windsurf applies it only when @-mentioned, which xcsh has no way to do (use always_on, glob or model_decision)")
	default:
		return "", fmt.Errorf("unknown trigger %q (want always_on, glob, model_decision or manual)", fm.trigger)
	}
	switch {
	case fm.alwaysApply:
		return engine.RuleAlways, nil
	case len(globs) > 0:
		return engine.RuleFiles, nil
	case fm.description != "":
		return engine.RuleRequested, nil
	case f.plainAlways():
		return engine.RuleAlways, nil
	case f == familyWindsurf:
		return "", errors.New("no trigger: a manual rule, applied only when @-mentioned in Windsurf, which xcsh has no way to do (add trigger: always_on, glob with globs, or model_decision with a description)")
	}
	return "", errors.New("no alwaysApply, globs, description or condition: a manual rule, applied only when @-mentioned in Cursor, which xcsh has no way to do (add alwaysApply: true, globs or a description)")
}

// firstList returns the first non-empty list, cleaned.
func firstList(lists ...[]string) []string {
	for _, l := range lists {
		if c := clean(l); c != nil {
			return c
		}
	}
	return nil
}

// clean trims the entries and drops empty ones and repeats; nil when
// nothing is left.
func clean(l []string) []string {
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

// splitGlobs splits each entry at the commas outside braces (Cursor writes
// "*.ts, *.tsx" in one string; "**/*.{ts,tsx}" is one pattern) and drops
// empty patterns and repeats.
func splitGlobs(entries []string) []string {
	var out []string
	for _, e := range entries {
		out = append(out, splitOutside(e, '{', '}')...)
	}
	return clean(out)
}

// splitScope splits "text, tool:edit(a,b)" at the commas outside
// parentheses, and drops quotes around the tokens.
func splitScope(s string) []string {
	var out []string
	for _, tok := range splitOutside(s, '(', ')') {
		if tok = strings.Trim(strings.TrimSpace(tok), `"'`); tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// splitOutside splits s at the commas that are not between open and
// close.
func splitOutside(s string, open, close byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case close:
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
