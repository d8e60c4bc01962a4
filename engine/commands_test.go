package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fixedCommands is a CommandSource with one expansion per name.
type fixedCommands map[string]string

func (f fixedCommands) Commands() []SlashCommand {
	var out []SlashCommand
	for _, n := range []string{"review", "skill:x"} {
		if _, ok := f[n]; ok {
			out = append(out, SlashCommand{Name: n, Source: CommandPrompt})
		}
	}
	return out
}

func (f fixedCommands) Expand(name, args string) (string, bool) {
	t, ok := f[name]
	return t + "|" + args, ok
}

// The resources arrive in the background: Ready opens once they are
// installed, the prompt is rebuilt with them, and a prompt naming a
// template is expanded; extension sources come first in the listing.
func TestResourcesInstalledThenExpanded(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	var seen []string
	var mu sync.Mutex
	prov := funcProvider(func(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
		mu.Lock()
		seen = append(seen, req.SystemPrompt+"/"+textOf(req.Messages[len(req.Messages)-1]))
		mu.Unlock()
		return textReply("ok")(ctx, req, fn)
	})
	s := startSession(t, Config{Provider: prov,
		Commands: []CommandSource{fixedCommands{"skill:x": "ext"}},
		LoadResources: func(context.Context) Resources {
			<-gate
			return Resources{Context: []ContextFile{{Path: "AGENTS.md"}}, Skills: []PromptSkill{{Name: "s"}},
				Commands: fixedCommands{"review": "Review", "skill:x": "shadowed"}}
		},
		RebuildPrompt: func(p PromptParts) string {
			return fmt.Sprintf("%d context, %d skills", len(p.Context), len(p.Skills))
		}})
	select {
	case <-s.Ready():
		t.Fatal("ready before the resources")
	default:
	}
	close(gate)
	<-s.Ready()
	s.Call(func() {
		if got := s.Commands(); len(got) != 2 || got[0].Name != "skill:x" || got[1].Name != "review" {
			t.Errorf("commands %+v", got)
		}
		if err := s.Prompt("/review a b", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
	s.Call(func() {
		if err := s.Prompt("/skill:x y", PromptOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitIdle(s)
	mu.Lock()
	defer mu.Unlock()
	if want := "1 context, 1 skills/Review|a b,1 context, 1 skills/ext|y"; strings.Join(seen, ",") != want {
		t.Errorf("requests %q, want %q", seen, want)
	}
}

// A tool group is replaced whole; a name another tool has is skipped;
// groups sort by name between the session's own tools and host tools.
func TestSetToolGroup(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("x"), Tools: []Tool{&namedTool{name: "read"}}})
	obj := []byte(`{"type":"object"}`)
	names := func() string {
		var out []string
		for _, t := range s.set.tools {
			out = append(out, t.Name())
		}
		return strings.Join(out, ",")
	}
	s.Call(func() {
		if _, err := s.SetHostTools([]HostToolDef{{Name: "host", Description: "d", Parameters: obj}}); err != nil {
			t.Fatal(err)
		}
		skipped := s.SetToolGroup("mcp:b", []Tool{&namedTool{name: "b1"}, &namedTool{name: "read"}, &namedTool{name: "host"}})
		if len(skipped) != 2 || skipped[0].Name != "read" || skipped[1].Name != "host" ||
			!errors.Is(skipped[0].Err, ErrToolNameTaken) || !errors.Is(skipped[1].Err, ErrToolNameTaken) {
			t.Errorf("skipped %v", skipped)
		}
		s.SetToolGroup("mcp:a", []Tool{&namedTool{name: "a1"}, &namedTool{name: "b1"}})
		if got := names(); got != "read,a1,b1,host" {
			t.Errorf("tools %s", got)
		}
		s.SetToolGroup("mcp:b", []Tool{&namedTool{name: "b2"}})
		if got := names(); got != "read,a1,b2,host" {
			t.Errorf("after replace: %s", got)
		}
		if _, err := s.SetHostTools([]HostToolDef{{Name: "a1", Description: "d", Parameters: obj}}); err == nil {
			t.Error("a host tool took an MCP tool's name")
		}
		s.SetToolGroup("mcp:a", nil)
		if got := names(); got != "read,b2,host" {
			t.Errorf("after removal: %s", got)
		}
	})
}

// refuseSchema is a Validator whose Check refuses the schemas that
// contain "$ref" (as the real one refuses those that refer outside
// themselves) and counts its checks.
type refuseSchema struct{ checks atomic.Int32 }

var errRefused = errors.New("it refers to a document outside itself")

func (v *refuseSchema) Check(schema []byte) error {
	v.checks.Add(1)
	if strings.Contains(string(schema), "$ref") {
		return errRefused
	}
	return nil
}

func (*refuseSchema) Validate(schema, args []byte) []string { return nil }

// schemaTool is a tool with the given schema.
type schemaTool struct {
	namedTool
	schema string
}

func (t *schemaTool) Schema() []byte { return []byte(t.schema) }

// Every registration from outside the binary asks the Validator about the
// schema: a refused host tool fails set_host_tools with the reason, a
// refused group tool is skipped with it while the group's others are
// installed; the built-in tools are never checked.
func TestRegistrationChecksSchemas(t *testing.T) {
	t.Parallel()
	v := &refuseSchema{}
	s := startSession(t, Config{Provider: textReply("x"), Validator: v, Tools: []Tool{&schemaTool{namedTool{"read"}, `{"$ref":"builtin.json"}`}}})
	bad := []byte(`{"$ref":"f.fifo"}`)
	s.Call(func() {
		_, err := s.SetHostTools([]HostToolDef{{Name: "ok", Description: "d", Parameters: []byte(`{}`)}, {Name: "h", Description: "d", Parameters: bad}})
		var he *HostToolError
		if !errors.As(err, &he) || he.Problem != HostToolBadSchema || he.Index != 1 || he.Name != "h" || !errors.Is(err, errRefused) {
			t.Fatalf("SetHostTools: %v", err)
		}
		if got := err.Error(); got != `host tool "h" has an unusable JSON Schema: it refers to a document outside itself` {
			t.Errorf("text %q", got)
		}
		if len(s.set.tools) != 1 {
			t.Errorf("a refused set_host_tools changed the tools: %d", len(s.set.tools))
		}
		skipped := s.SetToolGroup("mcp:s", []Tool{&schemaTool{namedTool{"good"}, `{}`}, &schemaTool{namedTool{"peek"}, string(bad)}})
		if len(skipped) != 1 || skipped[0].Name != "peek" || !errors.Is(skipped[0].Err, errRefused) {
			t.Errorf("skipped %v", skipped)
		}
		var names []string
		for _, t := range s.set.tools {
			names = append(names, t.Name())
		}
		if got := strings.Join(names, ","); got != "read,good" {
			t.Errorf("tools %s", got)
		}
	})
	if n := v.checks.Load(); n != 4 {
		t.Errorf("%d checks, want 4 (two host tools, two group tools, no built-in)", n)
	}
}

// textOf is a message's text blocks, concatenated.
func textOf(m Message) string {
	if u, ok := m.(*UserMessage); ok {
		var b strings.Builder
		for _, c := range u.Content {
			b.WriteString(c.Text)
		}
		return b.String()
	}
	return ""
}

// TestUnknownSkillRefused: "/skill:name" naming no loaded skill fails the
// prompt, steer and follow-up with the skills there are; a known skill
// and other slash text pass.
func TestUnknownSkillRefused(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("ok"),
		LoadResources: func(context.Context) Resources {
			return Resources{Commands: namedCommands{"review", "skill:deploy", "skill:lint"}}
		}})
	<-s.Ready()
	s.Call(func() {
		var ue *UnknownSkillError
		err := s.Prompt("/skill:deplyo now", PromptOptions{})
		if !errors.As(err, &ue) || ue.Name != "deplyo" || err.Error() != `Unknown skill "deplyo"; the skills are: deploy, lint` {
			t.Errorf("prompt: %v", err)
		}
		if err := s.Steer("/skill:x", nil); !errors.As(err, &ue) {
			t.Errorf("steer: %v", err)
		}
		if err := s.FollowUp("/skill:", nil); !errors.As(err, &ue) || ue.Name != "" {
			t.Errorf("follow-up: %v", err)
		}
		if err := s.Prompt("/not-a-command here", PromptOptions{}); err != nil {
			t.Errorf("other slash text: %v", err)
		}
	})
	waitIdle(s)
	s.Call(func() {
		if err := s.Prompt("/skill:deploy", PromptOptions{}); err != nil {
			t.Errorf("known skill: %v", err)
		}
	})
	empty := startSession(t, Config{Provider: textReply("ok")})
	empty.Call(func() {
		if err := empty.Prompt("/skill:deploy", PromptOptions{}); err == nil || err.Error() != `Unknown skill "deploy": no skills are loaded (docs/skills.md says where they are found)` {
			t.Errorf("no skills: %v", err)
		}
	})
}

// namedCommands is a CommandSource of these names, each expanding to its
// name.
type namedCommands []string

func (n namedCommands) Commands() []SlashCommand {
	out := make([]SlashCommand, 0, len(n))
	for _, name := range n {
		out = append(out, SlashCommand{Name: name})
	}
	return out
}

func (n namedCommands) Expand(name, _ string) (string, bool) {
	for _, c := range n {
		if c == name {
			return name, true
		}
	}
	return "", false
}
