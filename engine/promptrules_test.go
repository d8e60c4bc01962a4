package engine

import (
	"context"
	"strings"
	"testing"
)

func TestSystemPromptRules(t *testing.T) {
	t.Parallel()
	rules := []PromptRule{
		{Name: "style", Path: "/p/.cursor/rules/style.mdc", Content: "Use tabs.\n", Apply: RuleAlways},
		{Name: "sql", Path: "/p/.cursor/rules/sql.mdc", Description: "Writing SQL & migrations", Content: "Use goose.", Apply: RuleRequested},
		{Name: "ts", Path: "/p/.cursor/rules/ts.mdc", Content: "Strict.", Apply: RuleFiles, Globs: []string{"*.ts"}},
	}
	read := &namedTool{"read"}
	got := BuildSystemPrompt(SystemPromptOptions{Tools: []Tool{read}, Cwd: "/p", OS: "linux", Rules: rules,
		Context: []ContextFile{{Path: "/p/AGENTS.md", Content: "ctx"}}})
	want := "\n## /p/AGENTS.md\n\nctx\n" +
		"\n# Rules\n\nThe user's rules for this project; follow them:\n\n## /p/.cursor/rules/style.mdc\n\nUse tabs.\n" +
		"\nThe following rules apply to particular tasks.\nUse the read tool to load a rule's file when the task matches its description, and follow it.\n\n" +
		"<available_rules>\n  <rule>\n    <name>sql</name>\n    <description>Writing SQL &amp; migrations</description>\n    <location>/p/.cursor/rules/sql.mdc</location>\n  </rule>\n</available_rules>\n"
	if !strings.Contains(got, want) {
		t.Errorf("prompt:\n%s\nwant to contain:\n%s", got, want)
	}
	if strings.Contains(got, "Strict.") {
		t.Error("a file rule is in the system prompt")
	}
	// Without a read tool the requested rules cannot be opened: not listed.
	got = BuildSystemPrompt(SystemPromptOptions{Cwd: "/p", OS: "linux", Rules: rules})
	if !strings.Contains(got, "Use tabs.") || strings.Contains(got, "available_rules") {
		t.Errorf("without read:\n%s", got)
	}
}

// TestFileRuleAttachedOnce: a read naming a file a rule's globs match
// attaches the rule before the next model call, once per branch; a file
// outside the rule's base or of another kind attaches nothing.
func TestFileRuleAttachedOnce(t *testing.T) {
	t.Parallel()
	rule := PromptRule{Name: "ts", Path: "/p/.cursor/rules/ts.mdc", Content: "Strict types.", Apply: RuleFiles,
		Globs: []string{"src/**/*.{ts,tsx}"}, Base: "/p"}
	read := funcTool{name: "read", run: func(ToolCall) ToolResult { return ToolResult{Content: []ContentBlock{TextBlock("file")}} }}
	call := func(id, path string) StreamEvent {
		return StreamEvent{Kind: StreamToolCallEnd, ToolCallID: id, ToolName: "read", Arguments: []byte(`{"path":"` + path + `"}`)}
	}
	toolTurn := func(evs ...StreamEvent) []StreamEvent {
		out := []StreamEvent{}
		for _, ev := range evs {
			out = append(out, StreamEvent{Kind: StreamToolCallStart, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName}, ev)
		}
		return append(out, StreamEvent{Kind: StreamDone, StopReason: StopToolUse})
	}
	p := &ruleProvider{turns: [][]StreamEvent{
		toolTurn(call("c1", "README.md"), call("c2", "/elsewhere/src/a.ts")),
		toolTurn(call("c3", "src/web/a.tsx"), call("c4", "/p/src/b.ts")),
		toolTurn(call("c5", "src/c.ts")),
		textTurn("done"),
	}}
	s := startSession(t, Config{Provider: p, Cwd: "/p/app/..", Tools: []Tool{read},
		LoadResources: func(context.Context) Resources { return Resources{PromptRules: []PromptRule{rule}} }})
	<-s.Ready()
	s.Call(func() { _ = s.Prompt("look", PromptOptions{}) })
	waitIdle(s)
	if len(p.reqs) != 4 {
		t.Fatalf("%d calls", len(p.reqs))
	}
	attached := func(req *Request) []string {
		var out []string
		for _, m := range req.Messages {
			if u, ok := m.(*UserMessage); ok && strings.Contains(u.Text(), "<rule name=") {
				out = append(out, u.Text())
			}
		}
		return out
	}
	if got := attached(p.reqs[1]); len(got) != 0 {
		t.Errorf("attached for README.md or a file outside the base: %q", got)
	}
	got := attached(p.reqs[2])
	want := "<rule name=\"ts\" path=\"/p/.cursor/rules/ts.mdc\" files=\"src/web/a.tsx, src/b.ts\">\n" +
		"This rule of the user's project applies to the files you are working with; follow it for them.\n\nStrict types.\n</rule>"
	if len(got) != 1 || got[0] != want {
		t.Errorf("second call: %q", got)
	}
	if got := attached(p.reqs[3]); len(got) != 1 {
		t.Errorf("attached again (or lost) on the third call: %d", len(got))
	}
	s.Call(func() {
		n := 0
		for _, e := range s.rec.entries {
			if names := attachedFileRules(e); names != nil {
				n++
				if e.CustomMessage.Display || strings.Join(names, ",") != "ts" {
					t.Errorf("entry %s", e.AppendJSON(nil))
				}
			}
		}
		if n != 1 {
			t.Errorf("%d file-rule entries", n)
		}
		s.ttsr.injected = nil
		s.restoreTTSR()
		if !s.ttsr.injected["ts"] {
			t.Error("not restored from the record")
		}
	})
}
