package main

import (
	"context"
	"io"
	"os"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/resources"
	"github.com/xcsh-go/xcsh/engine/rules"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// resourceLoader is the session's LoadResources: the context files,
// skills, prompt templates and rules the flags allow, read in the
// background after ready; warnings go to stderr.
func resourceLoader(o *options, cwd string, env func(string) string, stderr io.Writer) func(context.Context) engine.Resources {
	opts := resources.Options{
		Cwd: cwd, AgentDir: sessionfile.AgentDir(env), Home: home(env),
		NoContext: o.noContextFiles, NoSkills: o.noSkills, NoTemplates: o.noTemplates,
		SkillPaths: o.skills, TemplatePaths: o.templates, Log: stderr,
	}
	return func(context.Context) engine.Resources {
		res := resources.Load(opts)
		if !o.noRules {
			found := rules.Discover(cwd, opts.AgentDir, stderr)
			res.Rules, res.PromptRules = found.TTSR, found.Prompt
		}
		return res
	}
}

// home is the user's home directory ($HOME first, as the agent dir does).
func home(env func(string) string) string {
	if h := env("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}
