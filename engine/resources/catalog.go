package resources

import (
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// catalog is the templates and skills as the session's slash commands.
// It is read-only once Load returns, so the executor may use it freely.
type catalog struct {
	templates []Template
	skills    []Skill
}

// Commands implements engine.CommandSource: the templates, then the
// skills as "skill:<name>", each in discovery order.
func (c *catalog) Commands() []engine.SlashCommand {
	out := make([]engine.SlashCommand, 0, len(c.templates)+len(c.skills))
	for _, t := range c.templates {
		out = append(out, engine.SlashCommand{Name: t.Name, Description: t.Description,
			ArgumentHint: t.ArgumentHint, Source: engine.CommandPrompt, Info: t.Info})
	}
	for _, sk := range c.skills {
		out = append(out, engine.SlashCommand{Name: "skill:" + sk.Name, Description: sk.Description,
			Source: engine.CommandSkill, Info: sk.Info})
	}
	return out
}

// Expand implements engine.CommandSource: "skill:<name>" names a skill,
// anything else a template.
func (c *catalog) Expand(name, args string) (string, bool) {
	if sn, ok := strings.CutPrefix(name, "skill:"); ok {
		for _, sk := range c.skills {
			if sk.Name == sn {
				return sk.expand(args), true
			}
		}
		return "", false
	}
	for _, t := range c.templates {
		if t.Name == name {
			return t.expand(args), true
		}
	}
	return "", false
}
