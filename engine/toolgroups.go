package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// Tool groups are tools that come and go at run time, owned by a source
// outside the session: each MCP server is one group ("mcp:<server>"). The
// source replaces its group whole with SetToolGroup; the model is offered
// the new set from its next call, with the system prompt rebuilt.

// ToolSource is an owner of tool groups that changes them on its own (an
// MCP client: servers start in the background and announce new tool
// lists). Before each model call the run asks every source to settle, so
// the call offers what the sources know of at that moment.
type ToolSource interface {
	// Settle waits, bounded and honouring ctx, until the changes the
	// source knows of (servers still starting, announced tool lists) are
	// installed with SetToolGroup. It runs on the run goroutine, never on
	// the executor.
	Settle(ctx context.Context)
	// Servers reports the source's servers and their tools (get_mcp_servers).
	// It must not block: it is called on the executor.
	Servers() []ServerStatus
}

// ServerStatus is one tool server as get_mcp_servers reports it. It never
// holds a secret (headers, environment).
type ServerStatus struct {
	Name      string
	Transport string // "stdio", "http" or "sse"
	Status    string // "starting", "connected", "failed", "crashed" or "disabled"
	Tools     []string
	Error     string // why it failed or crashed; "" when none
}

// groupTool is a tool of a group: the group is how SetToolGroup finds the
// tools it replaces.
type groupTool struct {
	Tool
	group string
}

// ToolGroup returns the group of t ("" for the session's own tools and
// host tools).
func ToolGroup(t Tool) string {
	if g, ok := t.(*groupTool); ok {
		return g.group
	}
	return ""
}

// SkippedTool is a tool SetToolGroup did not install, and why.
type SkippedTool struct {
	Name string
	// Err is ErrToolNameTaken, or why the Validator refused the tool's
	// schema (Validator.Check).
	Err error
}

// ErrToolNameTaken: another tool has the name, or the name is empty.
var ErrToolNameTaken = errors.New("another tool has the name")

// SetToolGroup replaces the tools of group with tools, following the rules
// of set_host_tools: names are trimmed and case-sensitive, and a name some
// other tool already has (a built-in, a host tool, another group's), or
// one given twice, is not installed: the tool that was there first keeps
// it. A tool whose schema the Validator refuses (Validator.Check) is not
// installed either. It returns the tools it did not install. (actor)
func (s *Session) SetToolGroup(group string, tools []Tool) (skipped []SkippedTool) {
	var own, grouped, hosts []Tool
	taken := map[string]bool{}
	for _, t := range s.set.tools {
		switch g := ToolGroup(t); {
		case g == group:
			continue
		case IsHostTool(t):
			hosts = append(hosts, t)
		case g != "":
			grouped = append(grouped, t)
		default:
			own = append(own, t)
		}
		taken[t.Name()] = true
	}
	for _, t := range tools {
		name := strings.TrimSpace(t.Name())
		if name == "" || taken[name] {
			skipped = append(skipped, SkippedTool{Name: name, Err: ErrToolNameTaken})
			continue
		}
		if v := s.cfg.Validator; v != nil {
			if err := v.Check(t.Schema()); err != nil {
				skipped = append(skipped, SkippedTool{Name: name, Err: err})
				continue
			}
		}
		taken[name] = true
		grouped = append(grouped, &groupTool{Tool: t, group: group})
	}
	// The session's own tools, then the groups by name (the order servers
	// connect in is a race; the tool list must not be), then host tools.
	slices.SortStableFunc(grouped, func(a, b Tool) int { return strings.Compare(ToolGroup(a), ToolGroup(b)) })
	s.setTools(append(append(own, grouped...), hosts...))
	s.rebuildPrompt()
	return skipped
}

// ToolServers reports the servers of every tool source. (actor)
func (s *Session) ToolServers() []ServerStatus {
	out := []ServerStatus{}
	for _, src := range s.cfg.ToolSources {
		out = append(out, src.Servers()...)
	}
	return out
}

// settleTools lets every tool source install what it knows of before a
// model call. It runs on the run goroutine.
func (s *Session) settleTools(ctx context.Context) {
	for _, src := range s.cfg.ToolSources {
		src.Settle(ctx)
	}
}
