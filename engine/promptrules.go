package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Rules that are not TTSR rules: the project rules other tools write
// (Cursor, Windsurf, Claude Code, Cline) and that reach the model as
// their tool means them. engine/rules reads them and says how each
// applies; the session puts them where they belong:
//
//   - RuleAlways: the rule's text is in the system prompt (a "Rules"
//     section after the context files);
//   - RuleRequested: the rule is listed in the system prompt with its
//     description and file, for the model to read when a task matches
//     (Cursor's "agent requested", Windsurf's model_decision), like a
//     skill;
//   - RuleFiles: the rule's text is attached once a read, write or edit
//     call names a file its globs match (Cursor's auto-attached rules,
//     Windsurf's glob trigger, Claude's and Cline's paths): after that
//     turn's tool results, before the next model call, as a hidden custom
//     message (customType "file-rule", recorded as a custom_message entry
//     whose details name the rules), once per branch, as a TTSR rule is.

// How a PromptRule reaches the model.
const (
	RuleAlways    = "always"
	RuleRequested = "requested"
	RuleFiles     = "files"
)

// PromptRule is a project or user rule whose text reaches the model as
// Apply says.
type PromptRule struct {
	Name        string // unique among all rules (the file name, no extension)
	Path        string // the rule's file
	Description string
	Content     string // the body, without the frontmatter
	Apply       string // RuleAlways, RuleRequested or RuleFiles
	// Globs are the file patterns of a RuleFiles rule, relative to Base:
	// "*" within a folder, "**" across folders, {a,b} alternatives; a
	// pattern without "/" matches a file name in any folder.
	Globs []string
	// Base is the folder Globs are relative to: the project folder that
	// holds the rule's folder.
	Base string
}

// fileRuleType is the custom message type of attached file rules.
const fileRuleType = "file-rule"

// fileRuleTools are the tools whose calls "touch" the files they name.
var fileRuleTools = map[string]bool{"read": true, "write": true, "edit": true}

// writeRules adds the rules to a system prompt: the always-applied ones
// in full, under their paths; the requested ones as a list of names,
// descriptions and files (only with a read tool, which opens them).
func writeRules(b *strings.Builder, rules []PromptRule, canRead bool) {
	var always, requested []PromptRule
	for _, r := range rules {
		switch r.Apply {
		case RuleAlways:
			always = append(always, r)
		case RuleRequested:
			requested = append(requested, r)
		}
	}
	if len(always) > 0 {
		b.WriteString("\n# Rules\n\nThe user's rules for this project; follow them:\n")
		for _, r := range always {
			fmt.Fprintf(b, "\n## %s\n\n%s\n", r.Path, strings.TrimRight(r.Content, "\n"))
		}
	}
	if len(requested) > 0 && canRead {
		b.WriteString("\nThe following rules apply to particular tasks.\n")
		b.WriteString("Use the read tool to load a rule's file when the task matches its description, and follow it.\n\n")
		b.WriteString("<available_rules>\n")
		for _, r := range requested {
			b.WriteString("  <rule>\n")
			fmt.Fprintf(b, "    <name>%s</name>\n", escapeXML(r.Name))
			fmt.Fprintf(b, "    <description>%s</description>\n", escapeXML(r.Description))
			fmt.Fprintf(b, "    <location>%s</location>\n", escapeXML(r.Path))
			b.WriteString("  </rule>\n")
		}
		b.WriteString("</available_rules>\n")
	}
}

// promptRulesOf are the rules the system prompt shows (always and
// requested).
func promptRulesOf(rules []PromptRule) []PromptRule {
	var out []PromptRule
	for _, r := range rules {
		if r.Apply != RuleFiles {
			out = append(out, r)
		}
	}
	return out
}

// attachFileRules attaches the file rules a turn's tool calls brought
// into play: a read, write or edit naming a file that a rule's globs
// match. Each rule is attached once per branch, in one hidden message
// after the turn's tool results (so the next model call sees it).
// (actor)
func (s *Session) attachFileRules(calls []ContentBlock) {
	if len(s.res.PromptRules) == 0 || len(calls) == 0 {
		return
	}
	var hit []PromptRule
	var touched [][]string // per hit rule, the files that matched
	for _, r := range s.res.PromptRules {
		if r.Apply != RuleFiles || s.ttsr.injected[r.Name] {
			continue
		}
		var files []string
		for _, c := range calls {
			if !fileRuleTools[c.Name] {
				continue
			}
			for _, p := range argPaths(c.Arguments, "") {
				if rel, ok := r.matchFile(p, s.cfg.Cwd); ok && !slices.Contains(files, rel) {
					files = append(files, rel)
				}
			}
		}
		if len(files) > 0 {
			hit = append(hit, r)
			touched = append(touched, files)
		}
	}
	if len(hit) == 0 {
		return
	}
	names := make([]string, 0, len(hit))
	parts := make([]string, 0, len(hit))
	for i, r := range hit {
		names = append(names, r.Name)
		parts = append(parts, "<rule name=\""+r.Name+"\" path=\""+r.Path+"\" files=\""+strings.Join(touched[i], ", ")+"\">\n"+
			"This rule of the user's project applies to the files you are working with; follow it for them.\n\n"+
			strings.TrimSpace(r.Content)+"\n</rule>")
	}
	details, _ := MarshalJSON(struct {
		Rules []string `json:"rules"`
	}{names})
	s.appendEntry(&Entry{Type: EntryCustomMessage, CustomMessage: &CustomMessage{
		CustomType: fileRuleType, Content: []ContentBlock{TextBlock(strings.Join(parts, "\n\n"))}, StringContent: true,
		Details: details, Attribution: "agent",
	}})
	if s.ttsr.injected == nil {
		s.ttsr.injected = map[string]bool{}
	}
	for _, n := range names {
		s.ttsr.injected[n] = true
	}
}

// matchFile reports whether a path a tool call named (relative to cwd,
// or absolute) matches one of the rule's globs, and returns it relative
// to the rule's base. A file outside the base matches nothing.
func (r *PromptRule) matchFile(p, cwd string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	rel, err := filepath.Rel(r.Base, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	for _, g := range r.Globs {
		if globMatch(g, rel) {
			return rel, true
		}
	}
	return "", false
}

// attachedFileRules reads which file rules an entry attached (nil when it
// attached none).
func attachedFileRules(e *Entry) []string {
	if e.Type != EntryCustomMessage || e.CustomMessage == nil || e.CustomMessage.CustomType != fileRuleType {
		return nil
	}
	var d struct {
		Rules []string `json:"rules"`
	}
	if json.Unmarshal(e.CustomMessage.Details, &d) != nil {
		return nil
	}
	return d.Rules
}
