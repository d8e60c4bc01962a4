package engine

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"strings"
)

// TTSR, "time-traveling streamed rules" (agent-core.md §11.1): project
// rules whose condition is a regular expression over what the model
// streams. When the model's text, its thinking (only where a rule's scope
// says so) or a tool call's arguments match, the call is cut at once
// (ttsr_triggered), the aborted message leaves the context (it stays
// recorded), the rule is injected as a hidden ttsr-injection message
// (recorded as a custom_message entry) and the request goes on, as if the
// model had known the rule before it went wrong. A rule fires once per
// branch (ttsr_injection entries remember it across restarts).

// Rule is a TTSR rule as its file gives it (engine/rules reads them).
// Compile it before use.
type Rule struct {
	Name        string
	Path        string
	Content     string
	Description string   // omitted when ""
	Globs       []string // file paths a tool stream must touch; omitted when empty
	AlwaysApply bool     // omitted when false
	Condition   []string // regular expressions (RE2 syntax)
	Scope       []string // what is watched (see compileScope); omitted when empty
	// InterruptMode is "never", "prose-only", "tool-only" or "always"
	// (""); omitted when "".
	InterruptMode string

	conds  []ruleCond
	scopes []ruleScope
}

// ruleCond is one compiled condition and, when its regular expression
// requires some literal text, the texts one of which must be in the
// stream before it can match (so most deltas cost a substring search).
type ruleCond struct {
	re       *regexp.Regexp
	literals [][]byte // nil: no prefilter
	fold     bool     // literals are lower case, compared with the lowered stream
	// alphabet, for a condition without literal text, holds the bytes a
	// match can contain: new bytes outside it cannot complete one, so a
	// delta made only of those is not tested. nil: any byte.
	alphabet *[256]bool
}

// ruleScope is one compiled scope token.
type ruleScope struct {
	kind string // "text", "thinking" or "tool"
	tool string // a tool name; "" for any tool
	glob string // a path glob the tool's arguments must name; "" for any
}

// AppendJSON appends the rule as ttsr_triggered lists it.
func (r *Rule) AppendJSON(dst []byte) []byte {
	dst = AppendJSONString(append(dst, `{"name":`...), r.Name)
	dst = appendStringField(dst, "path", r.Path)
	dst = appendStringField(dst, "content", r.Content)
	strs := func(dst []byte, key string, l []string) []byte {
		dst = append(appendKey(dst, key), '[')
		for i, s := range l {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, s)
		}
		return append(dst, ']')
	}
	if len(r.Globs) > 0 {
		dst = strs(dst, "globs", r.Globs)
	}
	if r.AlwaysApply {
		dst = appendBoolField(dst, "alwaysApply", true)
	}
	if r.Description != "" {
		dst = appendStringField(dst, "description", r.Description)
	}
	dst = strs(dst, "condition", r.Condition)
	if len(r.Scope) > 0 {
		dst = strs(dst, "scope", r.Scope)
	}
	if r.InterruptMode != "" {
		dst = appendStringField(dst, "interruptMode", r.InterruptMode)
	}
	return append(dst, '}')
}

// Compile checks the rule and prepares it for matching: every condition
// must be a valid regular expression, the scope tokens known, the
// interrupt mode one of the four. A rule without a condition is not a
// TTSR rule.
func (r *Rule) Compile() error {
	if len(r.Condition) == 0 {
		return errors.New("no condition")
	}
	switch r.InterruptMode {
	case "", "never", "prose-only", "tool-only", "always":
	default:
		return fmt.Errorf("unknown interruptMode %q (want never, prose-only, tool-only or always)", r.InterruptMode)
	}
	r.conds = r.conds[:0]
	for _, c := range r.Condition {
		rc, err := compileCond(c)
		if err != nil {
			return fmt.Errorf("condition %q: %w", c, err)
		}
		r.conds = append(r.conds, rc)
	}
	r.scopes = r.scopes[:0]
	scope := r.Scope
	if len(scope) == 0 {
		scope = []string{"text", "tool"}
	}
	for _, tok := range scope {
		sc, err := compileScope(tok)
		if err != nil {
			return err
		}
		r.scopes = append(r.scopes, sc)
	}
	return nil
}

// compileCond compiles a condition and finds its literal prefilter.
func compileCond(expr string) (ruleCond, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return ruleCond{}, err
	}
	c := ruleCond{re: re}
	if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		tree = tree.Simplify()
		lits, fold := requiredLiterals(tree)
		for _, l := range lits {
			c.literals = append(c.literals, []byte(l))
		}
		c.fold = fold
		if lits == nil {
			var a [256]bool
			if alphabet(tree, &a) {
				c.alphabet = &a
			}
		}
	}
	return c, nil
}

// alphabet marks in a the bytes a match of re can contain (every byte of
// a multi-byte character counts as >= 0x80); false when any byte can.
func alphabet(re *syntax.Regexp, a *[256]bool) bool {
	mark := func(lo, hi rune) {
		if hi >= 0x80 {
			for b := 0x80; b < 256; b++ {
				a[b] = true
			}
			hi = 0x7f
		}
		for r := lo; r <= hi; r++ {
			a[r] = true
			if re.Flags&syntax.FoldCase != 0 {
				a[unicodeASCIIFold(r)] = true
			}
		}
	}
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			mark(r, r)
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			mark(re.Rune[i], re.Rune[i+1])
		}
	}
	for _, sub := range re.Sub {
		if !alphabet(sub, a) {
			return false
		}
	}
	return true
}

// unicodeASCIIFold is the other case of an ASCII letter (r itself
// otherwise).
func unicodeASCIIFold(r rune) rune {
	switch {
	case 'a' <= r && r <= 'z':
		return r - 'a' + 'A'
	case 'A' <= r && r <= 'Z':
		return r - 'A' + 'a'
	}
	return r
}

// requiredLiterals returns texts one of which every match contains (nil
// when it cannot tell), and whether they are to be compared without case
// (ASCII only).
func requiredLiterals(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold {
			for _, r := range re.Rune {
				if r >= 0x80 {
					return nil, false
				}
			}
			s = strings.ToLower(s)
		}
		return []string{s}, fold
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// The sub-expression with the longest shortest literal filters best.
		var best []string
		var bestFold bool
		bestLen := 0
		for _, sub := range re.Sub {
			lits, fold := requiredLiterals(sub)
			if lits == nil {
				continue
			}
			short := len(lits[0])
			for _, l := range lits {
				short = min(short, len(l))
			}
			if short > bestLen {
				best, bestFold, bestLen = lits, fold, short
			}
		}
		return best, bestFold
	case syntax.OpAlternate:
		var all []string
		fold := false
		for i, sub := range re.Sub {
			lits, f := requiredLiterals(sub)
			if lits == nil || (i > 0 && f != fold) {
				return nil, false
			}
			fold = f
			all = append(all, lits...)
		}
		return all, fold
	}
	return nil, false
}

// compileScope reads one scope token: text, thinking, tool or toolcall
// (any tool), tool:<name> or a bare tool name, each tool form optionally
// with a path glob in parentheses (tool:edit(*.ts), write(src/**)).
func compileScope(tok string) (ruleScope, error) {
	t := strings.TrimSpace(tok)
	var glob string
	if i := strings.IndexByte(t, '('); i > 0 && strings.HasSuffix(t, ")") {
		t, glob = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:len(t)-1])
	}
	switch {
	case t == "text" || t == "thinking":
		if glob != "" {
			return ruleScope{}, fmt.Errorf("scope %q: only tool scopes take a path glob", tok)
		}
		return ruleScope{kind: t}, nil
	case t == "tool" || t == "toolcall":
		return ruleScope{kind: "tool", glob: glob}, nil
	case strings.HasPrefix(t, "tool:"):
		t = strings.TrimPrefix(t, "tool:")
	}
	if t == "" || strings.ContainsAny(t, " \t:()") {
		return ruleScope{}, fmt.Errorf("unknown scope %q", tok)
	}
	return ruleScope{kind: "tool", tool: t, glob: glob}, nil
}

// globMatch reports whether a path matches a rule glob: "**" crosses
// directories, "*" and "?" do not; a glob without "/" also matches the
// path's base name.
func globMatch(glob, p string) bool {
	re, err := regexp.Compile("^" + globRegexp(glob) + "$")
	if err != nil {
		return false
	}
	if re.MatchString(p) {
		return true
	}
	return !strings.Contains(glob, "/") && re.MatchString(path.Base(p))
}

// globRegexp translates a glob: * within a path segment, ** across
// them (a leading **/ may match nothing), ? one character, {a,b}
// alternatives (Cursor's **/*.{ts,tsx}); the rest literally.
func globRegexp(glob string) string {
	var b strings.Builder
	depth := 0 // open { groups
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '{':
			if strings.IndexByte(glob[i:], '}') < 0 {
				b.WriteString(regexp.QuoteMeta("{"))
				continue
			}
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				b.WriteString(regexp.QuoteMeta("}"))
				continue
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth == 0 {
				b.WriteString(",")
				continue
			}
			b.WriteString("|")
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				i++
				if i+1 < len(glob) && glob[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(strings.Repeat(")", depth)) // an unclosed nested {
	return b.String()
}
