package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/extension"
	"github.com/xcsh-go/xcsh/engine/mcp"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// askHost answers every dialog with reply and records what it was asked.
type askHost struct {
	reply engine.DialogReply
	asked []engine.DialogRequest
}

func (h *askHost) Call(fn func())                                          { fn() }
func (h *askHost) SetToolGroup(string, []engine.Tool) []engine.SkippedTool { return nil }
func (h *askHost) Dialog(_ context.Context, req engine.DialogRequest) (engine.DialogReply, error) {
	h.asked = append(h.asked, req)
	return h.reply, nil
}

func testPolicy(mode string, network bool, log *bytes.Buffer) *projectPolicy {
	net := "namespace"
	if network {
		net = "open"
	}
	sb := sandboxSetup{policy: &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: network}, confine: func(*exec.Cmd) error { return nil },
		state: &engine.SandboxState{Enforcement: engine.SandboxEnforcement{Network: net}}}
	return newProjectPolicy(&sandboxFlags{projectCode: mode}, sb, log)
}

// What --project-code decides for a project's MCP servers, and what it
// says: every refusal names the file and the flag.
func TestProjectPolicyMCP(t *testing.T) {
	stdio := mcp.ProjectServer{Name: "evil", File: "/p/.mcp.json", Transport: "stdio", Command: "sh -c run"}
	web := mcp.ProjectServer{Name: "web", File: "/p/.mcp.json", Transport: "http", Command: "https://web/***"}
	for _, c := range []struct {
		name    string
		mode    string
		network bool
		canAsk  bool
		reply   engine.DialogReply
		server  mcp.ProjectServer
		run     bool
		wrapped bool
		asked   bool
		says    string // in the log, or the reason
	}{
		{name: "no host", mode: projectAsk, server: stdio, says: `MCP server "evil" of /p/.mcp.json not started: under --sandbox workspace-write a project's own MCP servers run only when allowed: --project-code sandbox runs them in the sandbox, --project-code trust outside it, or a host that answers dialogs (--ui) is asked`},
		{name: "allowed", mode: projectAsk, canAsk: true, reply: engine.DialogReply{Confirmed: true}, server: stdio, run: true, wrapped: true, asked: true, says: "runs in the sandbox (workspace-write, no network)"},
		{name: "declined", mode: projectAsk, canAsk: true, server: stdio, asked: true, says: "not started: the user declined"},
		{name: "timed out", mode: projectAsk, canAsk: true, reply: engine.DialogReply{Cancelled: true, TimedOut: true}, server: stdio, asked: true, says: "did not answer in time"},
		{name: "remote allowed", mode: projectAsk, canAsk: true, reply: engine.DialogReply{Confirmed: true}, server: web, run: true, asked: true, says: "reached at https://web/*** by the agent"},
		{name: "sandbox", mode: projectSandbox, server: stdio, run: true, wrapped: true, says: "runs in the sandbox"},
		{name: "sandbox remote, network off", mode: projectSandbox, server: web, says: "which the sandbox keeps off"},
		{name: "sandbox remote, network on", mode: projectSandbox, network: true, server: web, run: true},
		{name: "trust", mode: projectTrust, server: stdio, run: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			h := &askHost{reply: c.reply}
			got := testPolicy(c.mode, c.network, &log).mcpAdmit(c.canAsk, time.Second)(context.Background(), h, []mcp.ProjectServer{c.server})[0]
			if got.Run != c.run || (got.Wrap != nil) != c.wrapped || (len(h.asked) > 0) != c.asked {
				t.Fatalf("%+v asked %d", got, len(h.asked))
			}
			if !strings.Contains(log.String()+got.Reason, c.says) {
				t.Fatalf("log %q reason %q, want %q", log.String(), got.Reason, c.says)
			}
			if c.asked {
				q := h.asked[0]
				if q.Method != engine.DialogConfirm || q.Timeout != time.Second || !strings.Contains(q.Title, c.server.Name) || !strings.Contains(q.Message, c.server.Command) {
					t.Fatalf("question %+v", q)
				}
			}
		})
	}
	if testPolicy(projectAsk, false, nil) == nil || (*projectPolicy)(nil).mcpAdmit(true, 0) != nil {
		t.Fatal("without a sandbox there is no admission")
	}
}

func TestProjectPolicyExtensions(t *testing.T) {
	specs := []extension.Spec{{Path: "/u/mine"}, {Path: "/p/.xcsh/extensions/x", Project: true}}
	var log bytes.Buffer
	kept, problems := testPolicy(projectAsk, false, &log).extensions(specs, nil)
	if len(kept) != 1 || kept[0].Path != "/u/mine" || len(problems) != 1 || !strings.Contains(problems[0].Error, "--project-code sandbox") ||
		!strings.Contains(log.String(), "warning: extension /p/.xcsh/extensions/x not started") {
		t.Fatalf("ask: %+v %+v %q", kept, problems, log.String())
	}
	kept, _ = testPolicy(projectSandbox, false, &log).extensions(specs, nil)
	if len(kept) != 2 || kept[0].Wrap != nil || kept[1].Wrap == nil {
		t.Fatalf("sandbox: %+v", kept)
	}
	kept, _ = testPolicy(projectTrust, false, &log).extensions(specs, nil)
	if len(kept) != 2 || kept[1].Wrap != nil {
		t.Fatalf("trust: %+v", kept)
	}
	var none *projectPolicy
	if kept, _ := none.extensions(specs, nil); len(kept) != 2 {
		t.Fatalf("off: %+v", kept)
	}
	if _, err := parseProjectCode("yes"); err == nil || !strings.Contains(err.Error(), "ask, sandbox or trust") {
		t.Fatalf("bad value: %v", err)
	}
}
