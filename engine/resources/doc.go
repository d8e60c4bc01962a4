// Package resources reads the user's existing agent setup so it works
// unchanged: instruction files (AGENTS.md, CLAUDE.md), Agent Skills
// (SKILL.md directories shared by Claude Code, Codex, pi and others) and
// prompt templates (*.md files invoked as /name). Load finds them in the
// places the family and its neighbours keep them and returns them as
// engine.Resources: the context files and skills for the system prompt,
// and a CommandSource that lists and expands /skill:name and /name.
//
// Everything here runs once, in the background, when a session starts
// (engine.Config.LoadResources); every file is read through readFile and
// its content kept, so expanding a command later does no I/O on the
// session's executor. Problems are warnings on the log, never fatal: a
// broken skill is skipped with its reason, a duplicate name keeps the
// first and names the loser.
package resources
