//go:build temporal

package main

import (
	"context"

	"github.com/xcsh-go/xcsh/engine"
)

// workerSetup is the user's setup as a worker's sessions see it: an
// in-process session reads its resources (context files, skills, rules)
// in the background and rebuilds its system prompt with them
// (engine/setup.go installResources); a worker builds no Session, so it
// reads them once at its start, before it polls, and takes the same
// prompt (engine.PromptPartsOf, the session's RebuildPrompt) and the same
// TTSR rules (engine.ResourceRules).
func workerSetup(ctx context.Context, cfg engine.Config) (systemPrompt string, rules []*engine.Rule) {
	var res engine.Resources
	if cfg.LoadResources != nil {
		res = cfg.LoadResources(ctx)
	}
	systemPrompt = cfg.SystemPrompt
	if cfg.LoadResources != nil && cfg.RebuildPrompt != nil {
		systemPrompt = cfg.RebuildPrompt(engine.PromptPartsOf(cfg.Tools, res))
	}
	return systemPrompt, engine.ResourceRules(cfg.Rules, res)
}
