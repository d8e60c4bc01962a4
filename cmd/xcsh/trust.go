package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/extension"
	"github.com/xcsh-go/xcsh/engine/mcp"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// The values of --project-code: what runs of the MCP servers and
// extensions a project brings itself (its .mcp.json, .xcsh/mcp.json,
// .xcsh/extensions/, .xcsh/settings.json) while a sandbox is on. Under a
// sandbox the model may have written those files (a command can create a
// file that did not exist, and an ACP session may start in a directory
// the model filled), so they are not run as the user unasked. The user's
// own configuration (the agent dir, --mcp-config, --extension, an ACP
// client's servers) runs as before. docs/sandbox.md, "Project code".
const (
	// projectAsk (the default) asks the host before a project's MCP
	// server starts (RPC with --ui: a confirm dialog; ACP: a permission
	// request); allowed, it runs in the sandbox. Without a host to ask,
	// and for extensions (they load before the session can ask), nothing
	// of the project's runs and a warning names the file and this flag.
	projectAsk = "ask"
	// projectSandbox runs them in the sandbox the commands run in
	// (Landlock, the network rule, the mounts or the filter), unasked.
	projectSandbox = "sandbox"
	// projectTrust runs them as the user, outside the sandbox, as with
	// --sandbox off.
	projectTrust = "trust"
)

func parseProjectCode(s string) (string, error) {
	switch s {
	case projectAsk, projectSandbox, projectTrust:
		return s, nil
	case "":
		return projectAsk, nil
	}
	return "", fmt.Errorf("unknown value %q (expected ask, sandbox or trust)", s)
}

// projectPolicy applies --project-code. A nil one (no sandbox) lets
// everything run as it always did.
type projectPolicy struct {
	mode    string
	sandbox sandbox.Mode
	// network says the sandbox leaves the network open (--sandbox-network,
	// or a fallback that could not close it); netNote says so in words.
	network bool
	netNote string
	// confine starts a process in the commands' sandbox (sandbox.go).
	confine func(*exec.Cmd) error
	log     io.Writer
}

// newProjectPolicy returns the policy of the flags for the sandbox sb;
// nil when the sandbox is off.
func newProjectPolicy(s *sandboxFlags, sb sandboxSetup, log io.Writer) *projectPolicy {
	if !sb.policy.On() {
		return nil
	}
	mode, _ := parseProjectCode(s.projectCode) // checked in setupSandbox
	p := &projectPolicy{mode: mode, sandbox: sb.policy.Mode, network: sb.policy.Network, netNote: "with the network", confine: sb.confine, log: log}
	if !p.network && sb.state != nil {
		// As enforced: --sandbox-fallback may have left it open.
		switch sb.state.Enforcement.Network {
		case "namespace":
			p.netNote = "no network"
		case "landlock-tcp":
			p.netNote = "no TCP"
		default:
			p.network = true
		}
	}
	return p
}

// where names the sandbox a confined process runs in.
func (p *projectPolicy) where() string {
	return fmt.Sprintf("the sandbox (%s, %s)", p.sandbox, p.netNote)
}

// notAllowed is why a project's code did not start without a question.
func (p *projectPolicy) notAllowed(what string) string {
	return fmt.Sprintf("under --sandbox %s a project's own %s run only when allowed: --project-code sandbox runs them in the sandbox, --project-code trust outside it", p.sandbox, what)
}

// extensions applies the policy to the discovered extensions: a
// project's is kept and confined (sandbox), kept as it is (trust), or
// dropped with a problem (an extension_error frame) and a warning (ask:
// extensions load before the session exists, so nobody can be asked).
func (p *projectPolicy) extensions(specs []extension.Spec, problems []engine.ExtensionError) ([]extension.Spec, []engine.ExtensionError) {
	if p == nil || p.mode == projectTrust {
		return specs, problems
	}
	kept := specs[:0:0]
	for _, s := range specs {
		switch {
		case !s.Project:
			kept = append(kept, s)
		case p.mode == projectSandbox:
			s.Wrap = p.confine
			fmt.Fprintf(p.log, "xcsh: extension %s runs in %s\n", s.Path, p.where())
			kept = append(kept, s)
		default:
			why := "not started: " + p.notAllowed("extensions")
			fmt.Fprintf(p.log, "xcsh: warning: extension %s %s\n", s.Path, why)
			problems = append(problems, engine.ExtensionError{ExtensionPath: s.Path, Event: "load", Error: why})
		}
	}
	return kept, problems
}

// mcpAdmit is the MCP manager's Admit (nil without a sandbox); canAsk
// says whether the session's host answers dialogs (RPC with --ui, ACP);
// a question not answered within timeout is declined (0: it waits, as
// --confirm-timeout says).
func (p *projectPolicy) mcpAdmit(canAsk bool, timeout time.Duration) func(context.Context, mcp.Host, []mcp.ProjectServer) []mcp.Admission {
	if p == nil {
		return nil
	}
	return func(ctx context.Context, host mcp.Host, servers []mcp.ProjectServer) []mcp.Admission {
		out := make([]mcp.Admission, len(servers))
		for i, s := range servers {
			out[i] = p.admit(ctx, host, canAsk, timeout, s)
		}
		return out
	}
}

// admit decides about one project server.
func (p *projectPolicy) admit(ctx context.Context, host mcp.Host, canAsk bool, timeout time.Duration, s mcp.ProjectServer) mcp.Admission {
	name := fmt.Sprintf("MCP server %q of %s", s.Name, s.File)
	remote := s.Transport != "stdio"
	refuse := func(why string) mcp.Admission {
		fmt.Fprintf(p.log, "xcsh: warning: %s not started: %s\n", name, why)
		return mcp.Admission{Reason: "not started: " + why}
	}
	run := func() mcp.Admission {
		if remote {
			fmt.Fprintf(p.log, "xcsh: %s is reached at %s by the agent, outside the sandbox\n", name, s.Command)
			return mcp.Admission{Run: true}
		}
		fmt.Fprintf(p.log, "xcsh: %s runs in %s\n", name, p.where())
		return mcp.Admission{Run: true, Wrap: p.confine}
	}
	switch p.mode {
	case projectTrust:
		return mcp.Admission{Run: true}
	case projectSandbox:
		if remote && !p.network {
			// The agent would reach it on the model's behalf: a way out of
			// a sandbox without the network.
			return refuse("it is reached over the network, which the sandbox keeps off (--sandbox-network, or --project-code trust)")
		}
		return run()
	}
	if !canAsk {
		return refuse(p.notAllowed("MCP servers") + ", or a host that answers dialogs (--ui) is asked")
	}
	msg := fmt.Sprintf("%s runs: %s. It would run in %s; --project-code trust runs a project's servers outside it.", s.File, s.Command, p.where())
	if remote {
		msg = fmt.Sprintf("%s connects to: %s, from the agent, outside the sandbox.", s.File, s.Command)
	}
	reply, err := host.Dialog(ctx, engine.DialogRequest{Method: engine.DialogConfirm,
		Title: fmt.Sprintf("Start the project's MCP server %q?", s.Name), Message: msg, Timeout: timeout})
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		return refuse("the question failed: " + err.Error())
	case reply.TimedOut:
		return refuse("the user did not answer in time")
	case err != nil, !reply.Confirmed, reply.Cancelled:
		return refuse("the user declined")
	}
	return run()
}
