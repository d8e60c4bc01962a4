package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

func compiled(t *testing.T, r Rule) *Rule {
	t.Helper()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestRuleCompile(t *testing.T) {
	t.Parallel()
	bad := []Rule{
		{Name: "none"},
		{Name: "re", Condition: []string{"("}},
		{Name: "mode", Condition: []string{"x"}, InterruptMode: "sometimes"},
		{Name: "scope", Condition: []string{"x"}, Scope: []string{"text(*.go)"}},
	}
	for _, r := range bad {
		if err := r.Compile(); err == nil {
			t.Errorf("%s compiled", r.Name)
		}
	}
	r := compiled(t, Rule{Name: "r", Condition: []string{`console\.log\(`, `(?i)debugger`, `\d{6}`, `foo|barbaz`}})
	want := []string{"console.log(|false", "debugger|true", "|false", "foo,barbaz|false"}
	for i, c := range r.conds {
		var lits []string
		for _, l := range c.literals {
			lits = append(lits, string(l))
		}
		if got := strings.Join(lits, ",") + "|" + map[bool]string{true: "true", false: "false"}[c.fold]; got != want[i] {
			t.Errorf("cond %d literals %s, want %s", i, got, want[i])
		}
	}
	for _, tt := range []struct {
		glob, path string
		want       bool
	}{{"*.ts", "src/a.ts", true}, {"src/**", "src/x/y.go", true}, {"src/*.go", "src/x/y.go", false}, {"**/*.go", "a.go", true}, {"*.ts", "a.tsx", false},
		{"**/*.{ts,tsx}", "web/a.tsx", true}, {"**/*.{ts,tsx}", "web/a.js", false}, {"src/{api,web}/*.go", "src/web/h.go", true},
		{"a{b", "a{b", true}, {"x}", "x}", true}, {"{a,{b,c}", "c", true}} {
		if got := globMatch(tt.glob, tt.path); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v", tt.glob, tt.path, got)
		}
	}
}

func TestRuleMatchesIncrementally(t *testing.T) {
	t.Parallel()
	r := compiled(t, Rule{Name: "r", Condition: []string{`(?i)console\.LOG\(\w+`}})
	var b streamBuf
	feed := func(d string) bool {
		b.buf = append(b.buf, d...)
		b.low = appendLowerASCII(b.low, d)
		return r.matches(&b, len(d))
	}
	for _, d := range []string{"we call Con", "sole.log", "(", ")"} {
		if feed(d) {
			t.Fatalf("matched early at %q", d)
		}
	}
	if !feed(" and console.log(x") {
		t.Fatal("no match")
	}
}

// ruleProvider streams the next of its scripted turns and records the
// requests.
type ruleProvider struct {
	mu    sync.Mutex
	turns [][]StreamEvent
	reqs  []*Request
}

func (p *ruleProvider) Stream(ctx context.Context, req *Request, fn func(StreamEvent) error) error {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	evs := p.turns[0]
	p.turns = p.turns[1:]
	p.mu.Unlock()
	for _, ev := range evs {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

func textTurn(deltas ...string) []StreamEvent {
	evs := []StreamEvent{{Kind: StreamTextStart}}
	for _, d := range deltas {
		evs = append(evs, StreamEvent{Kind: StreamTextDelta, Delta: d})
	}
	return append(evs, StreamEvent{Kind: StreamTextEnd}, StreamEvent{Kind: StreamDone, StopReason: StopStop})
}

func TestTTSRCutsInjectsAndFiresOnce(t *testing.T) {
	t.Parallel()
	rule := compiled(t, Rule{Name: "no-console", Path: "/p/.xcsh/rules/no-console.md", Content: "Never use console.log; use the logger.", Condition: []string{`console\.log`}})
	p := &ruleProvider{turns: [][]StreamEvent{
		textTurn("I will add ", "console", ".log here", " and more"),
		textTurn("I will use the logger. ", "Not console.log again."),
	}}
	rec := &recorder{}
	m := Model{ID: "m", API: "fake", Provider: "fake"}
	s := New(Config{Provider: p, Model: &m, Clock: DeterministicEpoch, IDs: &SequentialIDs{}, Sink: rec, Rules: []*Rule{rule}})
	go s.Loop()
	defer func() { waitIdle(s); s.Stop(); s.Close() }()
	s.Call(func() { _ = s.Prompt("add logging", PromptOptions{}) })
	waitIdle(s)
	rec.mu.Lock()
	types := strings.Join(rec.types, " ")
	var trig string
	for i, ty := range rec.types {
		if ty == "ttsr_triggered" {
			trig = rec.frames[i]
		}
	}
	rec.mu.Unlock()
	want := "message_update ttsr_triggered message_end turn_end agent_end agent_start turn_start message_start"
	if !strings.Contains(types, want) || strings.Count(types, "ttsr_triggered") != 1 {
		t.Fatalf("events: %s", types)
	}
	if trig != `{"type":"ttsr_triggered","rules":[{"name":"no-console","path":"/p/.xcsh/rules/no-console.md","content":"Never use console.log; use the logger.","condition":["console\\.log"]}]}` {
		t.Errorf("frame %s", trig)
	}
	if len(p.reqs) != 2 {
		t.Fatalf("%d calls", len(p.reqs))
	}
	second := p.reqs[1].Messages
	last := second[len(second)-1].(*UserMessage).Text()
	if len(second) != 1 || !strings.Contains(last, `<system-interrupt reason="rule_violation" rule="no-console" path="/p/.xcsh/rules/no-console.md">`) ||
		!strings.Contains(last, "use the logger.\n</system-interrupt>") || !strings.HasPrefix(last, "add logging") {
		t.Errorf("second request: %d messages, last %q", len(second), last)
	}
	s.Call(func() {
		var kinds []string
		for _, e := range s.rec.entries {
			k := e.Type
			if e.Type == EntryMessage {
				k = e.Message.Role()
				if a, ok := e.Message.(*AssistantMessage); ok {
					k += ":" + string(a.StopReason)
				}
			}
			kinds = append(kinds, k)
		}
		if got := strings.Join(kinds, " "); got != "user assistant:aborted custom_message ttsr_injection assistant:stop" {
			t.Errorf("record: %s", got)
		}
		line := string(s.rec.entries[3].AppendJSON(nil))
		if !strings.HasSuffix(line, `,"injectedRules":["no-console"]}`) {
			t.Errorf("injection entry %s", line)
		}
		// Restored on a reload of the branch.
		s.ttsr.injected = nil
		s.restoreTTSR()
		if !s.ttsr.injected["no-console"] {
			t.Error("not restored")
		}
	})
}

func TestTTSRToolScopeAndGlobs(t *testing.T) {
	t.Parallel()
	rule := compiled(t, Rule{Name: "no-any", Content: "No any in TypeScript.", Condition: []string{`:\s*any\b`}, Scope: []string{"tool:write(*.ts)"}})
	call := func(path string) []StreamEvent {
		args := `{"path":"` + path + `","content":"let x: any = 1"}`
		return []StreamEvent{{Kind: StreamToolCallStart, ToolCallID: "c1", ToolName: "write"},
			{Kind: StreamToolCallDelta, Delta: args[:20]}, {Kind: StreamToolCallDelta, Delta: args[20:]},
			{Kind: StreamToolCallEnd, Arguments: []byte(args)}, {Kind: StreamDone, StopReason: StopToolUse}}
	}
	ts := &ttsrStream{rules: []*Rule{rule}, seen: map[string]bool{}}
	feed := func(evs []StreamEvent) []*Rule {
		for _, ev := range evs {
			if hit := ts.observe(ev); hit != nil {
				return hit
			}
		}
		return nil
	}
	if hit := feed(call("src/a.go")); hit != nil {
		t.Fatal("a .go file cut")
	}
	if hit := feed(textTurn("x: any here")); hit != nil {
		t.Fatal("text cut by a tool rule")
	}
	if hit := feed(call("src/a.ts")); len(hit) != 1 {
		t.Fatal("a .ts file not cut")
	}
}
