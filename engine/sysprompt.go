package engine

import (
	"fmt"
	"strings"
	"time"
)

// SystemPromptOptions are the inputs of the default system prompt.
type SystemPromptOptions struct {
	Tools  []Tool
	Cwd    string
	OS     string
	Now    int64  // Unix ms; the date line uses it
	Custom string // replaces the built-in base text when non-empty
	Append string // appended after everything else
	// Context are project and user instruction files, in the order they
	// are shown (engine/resources reads them).
	Context []ContextFile
	// Skills are listed for the model to read when a task matches; only
	// when a read tool is offered, as in the original.
	Skills []PromptSkill
	// Rules are the always-applied rules (shown in full) and the
	// requested ones (listed, with a read tool); file rules are attached
	// at run time instead (promptrules.go).
	Rules []PromptRule
}

// ContextFile is an instruction file included in the system prompt.
type ContextFile struct {
	Path    string
	Content string
}

// BuildSystemPrompt returns the effective system prompt: a concise base
// describing the active tools and the environment, then any appended text.
func BuildSystemPrompt(o SystemPromptOptions) string {
	var b strings.Builder
	if o.Custom != "" {
		b.WriteString(o.Custom)
	} else {
		b.WriteString("You are xcsh, a coding agent working in the user's project through tools. ")
		b.WriteString("Be concise; read before you edit; prefer small, verifiable changes.\n")
		if len(o.Tools) > 0 {
			b.WriteString("\nAvailable tools:\n")
			for _, t := range o.Tools {
				fmt.Fprintf(&b, "- %s: %s\n", t.Name(), firstLine(t.Description()))
			}
		} else {
			b.WriteString("\nNo tools are available in this session.\n")
		}
	}
	if len(o.Context) > 0 {
		// The original's section: heading, one line, then each file under
		// its path, the most general first.
		b.WriteString("\n# Project Context\n\nProject-specific instructions and guidelines:\n")
		for _, c := range o.Context {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", c.Path, strings.TrimRight(c.Content, "\n"))
		}
	}
	writeRules(&b, o.Rules, hasTool(o.Tools, "read"))
	if len(o.Skills) > 0 && hasTool(o.Tools, "read") {
		writeSkills(&b, o.Skills)
	}
	date := time.UnixMilli(o.Now).UTC().Format("2006-01-02")
	fmt.Fprintf(&b, "\nWorking directory: %s\nDate: %s\nOS: %s\n", o.Cwd, date, o.OS)
	if o.Append != "" {
		b.WriteString("\n")
		b.WriteString(o.Append)
		b.WriteString("\n")
	}
	return b.String()
}

// writeSkills lists the skills in the Agent Skills format the original
// uses: names, descriptions and the file to read, never the content
// (progressive disclosure).
func writeSkills(b *strings.Builder, skills []PromptSkill) {
	b.WriteString("\nThe following skills provide specialized instructions for specific tasks.\n")
	b.WriteString("Use the read tool to load a skill's file when the task matches its description.\n")
	b.WriteString("Relative paths inside a skill file are resolved from the skill directory (parent of SKILL.md).\n\n")
	b.WriteString("<available_skills>\n")
	for _, sk := range skills {
		b.WriteString("  <skill>\n")
		fmt.Fprintf(b, "    <name>%s</name>\n", escapeXML(sk.Name))
		fmt.Fprintf(b, "    <description>%s</description>\n", escapeXML(sk.Description))
		fmt.Fprintf(b, "    <location>%s</location>\n", escapeXML(sk.Path))
		b.WriteString("  </skill>\n")
	}
	b.WriteString("</available_skills>\n")
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }

func hasTool(tools []Tool, name string) bool {
	for _, t := range tools {
		if t.Name() == name {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
