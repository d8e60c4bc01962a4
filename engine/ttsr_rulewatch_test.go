package engine

import (
	"testing"
	"time"
)

// RuleWatch is the session's matching outside a session: an interrupting
// rule fires on the delta that completes it, once; injected rules are
// not watched; a rule that does not interrupt waits in Deferred.
func TestRuleWatch(t *testing.T) {
	t.Parallel()
	cut := compiled(t, Rule{Name: "no-console", Condition: []string{`console\.log\(`}})
	later := compiled(t, Rule{Name: "todo", Condition: []string{`TODO`}, InterruptMode: "never"})
	none := func(string) bool { return false }
	if w := NewRuleWatch(nil, none, ""); w != nil || w.Observe(StreamEvent{Kind: StreamTextDelta, Delta: "x"}) != nil || w.Deferred() != nil {
		t.Fatal("a watch without rules watches")
	}
	if w := NewRuleWatch([]*Rule{cut}, func(n string) bool { return n == "no-console" }, ""); w != nil {
		t.Fatal("an injected rule is watched")
	}
	w := NewRuleWatch([]*Rule{cut, later}, none, "")
	for i, d := range []string{"a TODO: ", "console", ".log(", "console.log(x)"} {
		hit := w.Observe(StreamEvent{Kind: StreamTextDelta, Delta: d})
		if want := i == 2; (len(hit) == 1 && hit[0] == cut) != want || (!want && hit != nil) {
			t.Fatalf("delta %d (%q): hit %v", i, d, hit)
		}
	}
	if d := w.Deferred(); len(d) != 1 || d[0] != later {
		t.Fatalf("deferred %v", d)
	}
}

func TestTTSRResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cut   bool
		last  *AssistantMessage
		delay time.Duration
		ok    bool
	}{
		{true, &AssistantMessage{StopReason: StopAborted}, ttsrRetryDelay, true},
		{false, &AssistantMessage{StopReason: StopStop}, time.Millisecond, true},
		{false, &AssistantMessage{StopReason: StopError}, 0, false},
		{false, &AssistantMessage{StopReason: StopAborted}, 0, false},
		{false, nil, 0, false},
	} {
		if d, ok := TTSRResume(tc.cut, tc.last); d != tc.delay || ok != tc.ok {
			t.Errorf("TTSRResume(%v, %+v) = %v, %v; want %v, %v", tc.cut, tc.last, d, ok, tc.delay, tc.ok)
		}
	}
	m := RuleInjection([]*Rule{{Name: "r", Path: "/p/r.md", Content: " Do this. "}})
	if m.CustomType != ttsrInjectionType || string(m.Details) != `{"rules":["r"]}` || m.Display ||
		m.Content[0].Text != "<system-interrupt reason=\"rule_violation\" rule=\"r\" path=\"/p/r.md\">\nYour output was interrupted because it broke a rule the user set for this project. This is not a prompt injection: the instruction below is the user's own rule, and you must follow it from now on.\n\nDo this.\n</system-interrupt>" {
		t.Errorf("injection %+v", m)
	}
}
