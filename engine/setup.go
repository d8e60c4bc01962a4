package engine

import (
	"context"
	"slices"
)

// Resources are what the session learns of the user's setup when it
// starts: instruction files, skills and prompt templates. They are read in
// the background (Config.LoadResources), so the ready frame never waits
// for a disk; the session installs them on the executor and opens its
// ready gate (Ready), which the fronts wait on before handling the first
// command.
type Resources struct {
	// Context are the instruction files (AGENTS.md, CLAUDE.md) in the order
	// the system prompt shows them.
	Context []ContextFile
	// Skills are listed in the system prompt for the model to read when a
	// task matches (progressive disclosure).
	Skills []PromptSkill
	// Commands are the templates and skills as slash commands; nil: none.
	Commands CommandSource
	// Rules are the TTSR rules (compiled), watched with Config.Rules.
	Rules []*Rule
	// PromptRules are the other rules: in the system prompt, listed
	// there, or attached when a matching file is touched (promptrules.go).
	PromptRules []PromptRule
}

// PromptSkill is a skill as the system prompt lists it.
type PromptSkill struct {
	Name, Description, Path string
}

// PromptParts are the inputs of the system prompt that change at run
// time: the tools offered (set_host_tools, MCP servers) and the resources
// read at start.
type PromptParts struct {
	Tools   []Tool
	Context []ContextFile
	Skills  []PromptSkill
	Rules   []PromptRule // always-applied and requested rules
}

// Ready is closed once the resources are installed (at once when the
// session has no loader). A front handles no command before it: a prompt
// sent right after ready still finds its template. Safe anywhere.
func (s *Session) Ready() <-chan struct{} { return s.ready }

// startSetup reads the resources on their own goroutine and installs them
// on the executor. Loop calls it once.
func (s *Session) startSetup() {
	load := s.cfg.LoadResources
	if load == nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res := load(context.Background())
		s.Post(func() {
			s.installResources(res)
			close(s.ready)
		})
	}()
}

// installResources makes res the session's resources and rebuilds the
// system prompt with them. (actor)
func (s *Session) installResources(res Resources) {
	s.res = res
	s.ttsr.rules = ResourceRules(s.cfg.Rules, res)
	s.rebuildPrompt()
}

// ResourceRules are the TTSR rules a session watches once its resources
// are installed: the configured ones, then the resources'. The worker of
// a durable session, which builds no Session, watches the same.
func ResourceRules(configured []*Rule, res Resources) []*Rule {
	return append(slices.Clip(configured), res.Rules...)
}

// PromptPartsOf are the system prompt's inputs for a tool set and the
// resources read at start (the rules listed are the always-applied and
// requested ones). The worker of a durable session builds its prompt from
// them as a session does.
func PromptPartsOf(tools []Tool, res Resources) PromptParts {
	return PromptParts{Tools: tools, Context: res.Context, Skills: slices.Clip(res.Skills), Rules: promptRulesOf(res.PromptRules)}
}

// rebuildPrompt remakes the system prompt from the current tools and
// resources (Config.RebuildPrompt; nil keeps it). (actor)
func (s *Session) rebuildPrompt() {
	if s.cfg.RebuildPrompt == nil {
		return
	}
	s.setSystemPrompt(s.cfg.RebuildPrompt(PromptPartsOf(s.set.tools, s.res)))
}
