package engine

import (
	"fmt"
	"strings"
)

// This file is the one place where the commands a prompt can invoke
// ("/name args") are listed (Session.Commands: get_commands and
// get_available_commands) and where a prompt's text is handled on its way
// to becoming a user message (Session.prepareInput), in the order of the
// family's extension API (extensions.md):
//
//  1. extension commands: "/name args" naming one runs it and consumes
//     the prompt (no run);
//  2. the extension input hook: continue, transform or handled;
//  3. skill ("/skill:name args") and prompt-template ("/name args")
//     expansion, the commandSources below; a "/skill:name" that no
//     source knows is refused (checkSkill) before the stages run.
//
// Steps 1 and 2 belong to the extensions (hooks.go): Prompt takes them
// before the input stages (runExtensionCommand; the Input hook, which
// waits for another process and so runs on the prompt's own goroutine,
// the session counting as busy meanwhile), then runs the stages of
// Session.inputs on the executor. Extension commands are listed by a
// CommandSource in Config.Commands (the extension host), which comes
// before the session's resources in every listing; Hooks.RunCommand runs
// them.

// Sources of slash commands, as get_commands names them.
const (
	CommandExtension = "extension"
	CommandPrompt    = "prompt" // a prompt template
	CommandSkill     = "skill"
)

// SlashCommand is one command a prompt can invoke as "/Name args".
type SlashCommand struct {
	Name         string // without the slash; a skill's is "skill:<name>"
	Description  string
	ArgumentHint string // frontmatter argument-hint; "" for none
	Source       string // CommandExtension, CommandPrompt or CommandSkill
	Info         SourceInfo
}

// SourceInfo says where a command's file was found (pi's sourceInfo).
type SourceInfo struct {
	Path    string // the file
	Source  string // "auto": discovered; "cli": named on the command line
	Scope   string // "user", "project" or "temporary"
	BaseDir string // the directory it was discovered in
}

// CommandSource is one provider of slash commands: the session's
// templates and skills (engine/resources), extension commands. Its methods
// run on the executor: they do no I/O.
type CommandSource interface {
	// Commands lists the source's commands in the order they are offered.
	Commands() []SlashCommand
	// Expand returns the text a prompt naming one of the source's commands
	// becomes: name is the command without its slash, args the rest of the
	// prompt after the first white space ("" when none). ok is false when
	// the source has no command of that name.
	Expand(name, args string) (text string, ok bool)
}

// Input is a prompt's text and images on their way to becoming a user
// message.
type Input struct {
	Text   string
	Images []ContentBlock
}

// inputStage is one step of a prompt's way in: it returns the input for
// the next step, or handled when the prompt is consumed (no run starts).
// Stages run in order on the executor, so a stage does no I/O; a stage
// that must wait for another process (the extension input hook) makes the
// pipeline asynchronous: the stages then run on the prompt's own
// goroutine and the front holds the input behind the prompt until it has
// started (see docs/architecture.md, "Where to add…"). (actor)
type inputStage func(in Input) (out Input, handled bool)

// prepareInput passes a prompt through the input stages. (actor)
func (s *Session) prepareInput(in Input) (Input, bool) {
	for _, stage := range s.inputs {
		var handled bool
		if in, handled = stage(in); handled {
			return in, true
		}
	}
	return in, false
}

// plugCommands plugs the expansion of skills and templates in
// (features.go) as the last input stage. Extension commands and the
// extension input hook come before it, as Prompt's own steps
// (extensions.md).
func (s *Session) plugCommands() {
	s.inputs = append(s.inputs, s.expandCommand)
}

// expandCommand is the last input stage: "/name args" naming a skill or a
// prompt template becomes its text. Text that names no command passes
// unchanged, as in the original. (actor)
func (s *Session) expandCommand(in Input) (Input, bool) {
	if !strings.HasPrefix(in.Text, "/") {
		return in, false
	}
	name, args := splitCommand(in.Text[1:])
	for _, src := range s.commandSources() {
		if text, ok := src.Expand(name, args); ok {
			in.Text = text
			break
		}
	}
	return in, false
}

// UnknownSkillError refuses a prompt, steer or follow-up naming a skill
// that is not loaded ("/skill:nosuch"). The original sends such text to
// the model as typed; but "/skill:" is never prose, and a model handed a
// skill name it has no skill for guesses, so the host is told instead,
// with the skills there are.
type UnknownSkillError struct {
	Name   string
	Skills []string // the loaded skills' names, in listing order
}

func (e *UnknownSkillError) Error() string {
	if len(e.Skills) == 0 {
		return fmt.Sprintf("Unknown skill %q: no skills are loaded (docs/skills.md says where they are found)", e.Name)
	}
	return fmt.Sprintf("Unknown skill %q; the skills are: %s", e.Name, strings.Join(e.Skills, ", "))
}

// checkSkill refuses "/skill:<name>" when no command source expands it.
// (actor)
func (s *Session) checkSkill(text string) error {
	if !strings.HasPrefix(text, "/skill:") {
		return nil
	}
	name, args := splitCommand(text[1:])
	for _, src := range s.commandSources() {
		if _, ok := src.Expand(name, args); ok {
			return nil
		}
	}
	e := &UnknownSkillError{Name: strings.TrimPrefix(name, "skill:")}
	for _, c := range s.Commands() {
		if sk, ok := strings.CutPrefix(c.Name, "skill:"); ok {
			e.Skills = append(e.Skills, sk)
		}
	}
	return e
}

// splitCommand cuts "name args" at the first white space.
func splitCommand(s string) (name, args string) {
	if i := strings.IndexAny(s, " \t\n\r"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// commandSources are the sources in listing order: the fixed ones of the
// configuration (extensions), then the session's resources. (actor)
func (s *Session) commandSources() []CommandSource {
	out := make([]CommandSource, 0, len(s.cfg.Commands)+1)
	out = append(out, s.cfg.Commands...)
	if s.res.Commands != nil {
		out = append(out, s.res.Commands)
	}
	return out
}

// Commands lists every slash command a prompt can invoke, in the order
// get_commands shows them: extension commands, prompt templates, skills.
// A command whose name an earlier one took is left out. (actor)
func (s *Session) Commands() []SlashCommand {
	var out []SlashCommand
	seen := map[string]bool{}
	for _, src := range s.commandSources() {
		for _, c := range src.Commands() {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	if out == nil {
		out = []SlashCommand{}
	}
	return out
}
