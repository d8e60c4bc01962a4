package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The TTSR stream watch and what follows a match: the watch sees every
// event of a model call on the run goroutine (a streamWatch) and keeps a
// buffer per source (text, thinking, each tool call's arguments); a rule
// whose scope covers the source and whose condition matches the whole
// buffer fires. An interrupting rule ends the call (the message ends
// aborted); after agent_end the ttsr stage cuts it from the context,
// injects the rule and runs again. A rule that does not interrupt
// (interruptMode never, or prose-only on a tool stream, tool-only on
// text) is injected after the response instead, and the run goes on.

// TTSRTriggered is the ttsr_triggered event: the rules that cut the
// stream.
type TTSRTriggered struct{ Rules []*Rule }

// EventType implements Event.
func (TTSRTriggered) EventType() string { return "ttsr_triggered" }

// AppendJSON implements Event.
func (e TTSRTriggered) AppendJSON(dst []byte) []byte {
	dst = append(appendKey(appendType(dst, "ttsr_triggered"), "rules"), '[')
	for i, r := range e.Rules {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.AppendJSON(dst)
	}
	return append(dst, ']', '}')
}

// ttsrInjectionType is the custom message type of an injected rule, and
// the entry type that records which rules were injected.
const (
	ttsrInjectionType  = "ttsr-injection"
	entryTTSRInjection = "ttsr_injection"
)

// ttsrNoLiteralWindow bounds how far back a condition with no literal
// text is tested: the new delta and this many bytes before it.
const ttsrNoLiteralWindow = 1024

// ttsrRetryDelay is the original's pause before the run resumes after a
// rule cut the stream.
const ttsrRetryDelay = 50 * time.Millisecond

// ttsrState is the actor state of TTSR.
type ttsrState struct {
	rules    []*Rule         // replaced, never changed in place
	injected map[string]bool // rules injected on this branch
}

// streamBuf is one watched source of a model call.
type streamBuf struct {
	buf, low []byte
	armed    map[*ruleCond]bool // conditions whose literal text has appeared
	tool     string             // the tool, for a tool call's arguments
	rules    []*Rule            // the rules watching this source
	fold     bool               // some rule compares without case: keep low
}

// ttsrStream is a run's TTSR view of one model call; the run goroutine
// owns it.
type ttsrStream struct {
	rules          []*Rule
	cwd            string
	text, thinking streamBuf
	tool           *streamBuf
	seen           map[string]bool
	fired          []*Rule // interrupting matches: the call is cut
	deferred       []*Rule // matches that wait for the response to end
	// byText, byThinking: the rules that watch those sources, chosen once
	// (nil until first needed); a tool call's are chosen at its start.
	byText, byThinking []*Rule
	sorted             bool
}

// ttsrCut is the cancellation cause of a call a rule cut.
type ttsrCut struct{ rules []*Rule }

func (*ttsrCut) Error() string { return AbortedMessage }

// newTTSRStream snapshots the rules that can still fire, for the call
// about to start. (actor)
func (s *Session) newTTSRStream() *ttsrStream {
	return newRuleStream(s.ttsr.rules, func(name string) bool { return s.ttsr.injected[name] }, s.cfg.Cwd)
}

// newRuleStream is a call's watch of the rules not yet injected (nil
// when none is left to watch); cwd makes the paths a tool call names
// relative for the rules' globs.
func newRuleStream(rules []*Rule, injected func(name string) bool, cwd string) *ttsrStream {
	if len(rules) == 0 {
		return nil
	}
	ts := &ttsrStream{cwd: cwd, seen: map[string]bool{}}
	for _, r := range rules {
		if !injected(r.Name) {
			ts.rules = append(ts.rules, r)
		}
	}
	if len(ts.rules) == 0 {
		return nil
	}
	return ts
}

// RuleWatch is the TTSR watch of one model call outside a Session (the
// model-call activity of a durable session): the same matching, on the
// events the provider streams.
type RuleWatch struct{ ts *ttsrStream }

// NewRuleWatch watches a call with the rules whose names injected does
// not report; nil when no rule is left to watch (a nil watch observes
// nothing).
func NewRuleWatch(rules []*Rule, injected func(name string) bool, cwd string) *RuleWatch {
	ts := newRuleStream(rules, injected, cwd)
	if ts == nil {
		return nil
	}
	return &RuleWatch{ts: ts}
}

// Observe takes the next stream event and returns the interrupting rules
// that match (non-empty: cut the call now, after applying the event, as
// the session's watch does).
func (w *RuleWatch) Observe(ev StreamEvent) []*Rule {
	if w == nil {
		return nil
	}
	return w.ts.observe(ev)
}

// Deferred returns the rules that matched without interrupting: injected
// once the reply has ended (TTSRInjectsAfter).
func (w *RuleWatch) Deferred() []*Rule {
	if w == nil {
		return nil
	}
	return w.ts.deferred
}

// plugTTSR plugs the rules in (features.go): the configured rules (the
// resources add theirs once read), the stream watch, which costs a nil
// check per event while there are none, the post-run stage, and, on a new
// record, the rules its branch already injected.
func (s *Session) plugTTSR() {
	s.ttsr.rules = s.cfg.Rules
	s.watches = append(s.watches, s.ttsrWatch)
	s.stages = append(s.stages, s.ttsrStage)
	s.onInstall = append(s.onInstall, s.restoreTTSR)
}

// ttsrWatch is the stream watch of the rules (run goroutine): a match of
// an interrupting rule ends the call.
func (s *Session) ttsrWatch(r *run, ev StreamEvent) error {
	if r.ttsr == nil {
		return nil
	}
	hit := r.ttsr.observe(ev)
	if len(hit) == 0 {
		return nil
	}
	// The delta that broke the rule is shown (its message_update, queued
	// in its place by the loop), then the trigger, then the call ends.
	return &ttsrCut{rules: hit}
}

// observe adds a stream event to its source's buffer and tests the rules
// that watch that source; it returns the interrupting rules that match
// (the others wait in deferred).
func (ts *ttsrStream) observe(ev StreamEvent) []*Rule {
	if !ts.sorted {
		ts.sorted = true
		ts.text.rules, ts.text.fold = ts.watching("text", "")
		ts.thinking.rules, ts.thinking.fold = ts.watching("thinking", "")
	}
	var b *streamBuf
	src := "text"
	switch ev.Kind {
	case StreamTextDelta:
		b = &ts.text
	case StreamThinkingDelta:
		b, src = &ts.thinking, "thinking"
	case StreamToolCallStart:
		ts.tool = ts.toolBuf(ev.ToolName)
		return nil
	case StreamToolCallDelta:
		if ts.tool == nil {
			ts.tool = ts.toolBuf(ev.ToolName)
		}
		b, src = ts.tool, "tool"
	default:
		return nil
	}
	if len(b.rules) == 0 {
		return nil
	}
	n := len(ev.Delta)
	b.buf = append(b.buf, ev.Delta...)
	if b.fold {
		b.low = appendLowerASCII(b.low, ev.Delta)
	}
	var hit []*Rule
	var paths []string
	pathsRead := false
	for _, rule := range b.rules {
		if ts.seen[rule.Name] {
			continue
		}
		if src == "tool" && rule.needsPaths() {
			if !pathsRead {
				paths, pathsRead = argPaths(b.buf, ts.cwd), true
			}
			if !rule.watches(src, b.tool, paths) {
				continue
			}
		}
		if !rule.matches(b, n) {
			continue
		}
		ts.seen[rule.Name] = true
		if rule.interrupts(src) {
			hit = append(hit, rule)
		} else {
			ts.deferred = append(ts.deferred, rule)
		}
	}
	if len(hit) > 0 {
		ts.fired = hit
	}
	return hit
}

// toolBuf starts the buffer of a tool call's arguments.
func (ts *ttsrStream) toolBuf(tool string) *streamBuf {
	b := &streamBuf{tool: tool}
	b.rules, b.fold = ts.watching("tool", tool)
	return b
}

// watching lists the rules whose scope covers a source (for a tool, its
// path globs are checked on every delta, as the arguments stream), and
// whether one of them compares without case.
func (ts *ttsrStream) watching(src, tool string) (out []*Rule, fold bool) {
	for _, r := range ts.rules {
		if !r.watches(src, tool, nil) && !(src == "tool" && r.needsPaths() && r.watchesTool(tool)) {
			continue
		}
		out = append(out, r)
		for _, c := range r.conds {
			fold = fold || c.fold
		}
	}
	return out, fold
}

// appendLowerASCII appends s with ASCII letters in lower case.
func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// needsPaths reports whether the rule looks at the paths a tool call
// names.
func (r *Rule) needsPaths() bool {
	if len(r.Globs) > 0 {
		return true
	}
	for _, sc := range r.scopes {
		if sc.glob != "" {
			return true
		}
	}
	return false
}

// watchesTool reports whether some tool scope of the rule names this tool
// (or any tool), whatever its path glob.
func (r *Rule) watchesTool(tool string) bool {
	for _, sc := range r.scopes {
		if sc.kind == "tool" && (sc.tool == "" || sc.tool == tool) {
			return true
		}
	}
	return false
}

// watches reports whether the rule looks at this source: its scope
// covers it, and for a tool stream the paths its arguments name match
// the rule's globs.
func (r *Rule) watches(src, tool string, paths []string) bool {
	for _, sc := range r.scopes {
		if sc.kind != src {
			continue
		}
		if src != "tool" {
			return true
		}
		if sc.tool != "" && sc.tool != tool {
			continue
		}
		if sc.glob != "" && !anyGlob([]string{sc.glob}, paths) {
			continue
		}
		return len(r.Globs) == 0 || anyGlob(r.Globs, paths)
	}
	return false
}

func anyGlob(globs, paths []string) bool {
	for _, g := range globs {
		for _, p := range paths {
			if globMatch(g, p) {
				return true
			}
		}
	}
	return false
}

// matches reports whether a condition matches the buffer that n new
// bytes just extended. A condition with literal text is tested on the
// whole buffer once that text has appeared (a new occurrence can only
// overlap the new bytes); one without is tested on the new bytes and the
// window before them.
func (r *Rule) matches(b *streamBuf, n int) bool {
	for i := range r.conds {
		c := &r.conds[i]
		if c.literals == nil {
			if c.alphabet != nil && !anyIn(c.alphabet, b.buf[len(b.buf)-n:]) {
				continue
			}
			from := max(0, len(b.buf)-n-ttsrNoLiteralWindow)
			if c.re.Match(b.buf[from:]) {
				return true
			}
			continue
		}
		if !b.armed[c] {
			hay := b.buf
			if c.fold {
				hay = b.low
			}
			found := false
			for _, l := range c.literals {
				from := max(0, len(hay)-n-len(l)+1)
				if bytes.Contains(hay[from:], l) {
					found = true
					break
				}
			}
			if !found {
				continue
			}
			if b.armed == nil {
				b.armed = map[*ruleCond]bool{}
			}
			b.armed[c] = true
		}
		if c.re.Match(b.buf) {
			return true
		}
	}
	return false
}

// anyIn reports whether some byte of p is in the set.
func anyIn(set *[256]bool, p []byte) bool {
	for _, c := range p {
		if set[c] {
			return true
		}
	}
	return false
}

// interrupts decides whether a match on src cuts the stream.
func (r *Rule) interrupts(src string) bool {
	switch r.InterruptMode {
	case "never":
		return false
	case "prose-only":
		return src != "tool"
	case "tool-only":
		return src == "tool"
	}
	return true
}

// pathArg finds the string values of arguments named path, *Path or
// paths in a tool call's (possibly partial) arguments.
var pathArg = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(?:[A-Za-z_]*[Pp]ath|paths)"\s*:\s*(\[[^\]]*\]|"(?:[^"\\]|\\.)*")`)
})

// argPaths returns the paths a tool call's arguments name so far,
// relative to cwd when inside it.
func argPaths(args []byte, cwd string) []string {
	var out []string
	add := func(raw []byte) {
		var p string
		if json.Unmarshal(raw, &p) != nil || p == "" {
			return
		}
		if filepath.IsAbs(p) && cwd != "" {
			if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
		out = append(out, filepath.ToSlash(filepath.Clean(p)))
	}
	for _, m := range pathArg().FindAllSubmatch(args, -1) {
		v := m[1]
		if v[0] != '[' {
			add(v)
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil {
			for _, item := range list {
				add(item)
			}
		}
	}
	return out
}

// ttsrStage is the post-run decision of TTSR, right after retry: a call a
// rule cut runs again with the rule injected, and rules that matched
// without interrupting are injected before the run goes on. (actor)
func (s *Session) ttsrStage(r *run, aborted bool) *postRun {
	ts := r.ttsr
	if ts == nil || aborted || (ts.fired == nil && len(ts.deferred) == 0) {
		return nil
	}
	cut := ts.fired != nil
	rules := append(append([]*Rule(nil), ts.fired...), ts.deferred...)
	ts.fired, ts.deferred = nil, nil
	var cutMsg *AssistantMessage
	if cut {
		cutMsg = r.lastAssistant()
	}
	delay, ok := TTSRResume(cut, r.lastAssistant())
	if !ok {
		return nil
	}
	return &postRun{phase: PhaseRunning, act: ActRun,
		work: func(ctx context.Context) bool { return Sleep(ctx, s.cfg.Clock, delay) == nil },
		resume: func(*run) {
			if cutMsg != nil {
				s.rec.hideFrom(cutMsg)
			}
			s.injectRules(rules)
		}}
}

// TTSRResume is TTSR's post-run decision once rules matched during the
// run's last model call (cut: one of them cut it; last: the run's last
// reply): whether the run starts again with the rules injected (after
// a rule cut the call, or after a reply that neither failed nor was
// aborted), and after how long. The session's stage and the workflow of
// a durable session both take it.
func TTSRResume(cut bool, last *AssistantMessage) (delay time.Duration, ok bool) {
	if cut {
		return ttsrRetryDelay, true
	}
	if last == nil || last.StopReason == StopError || last.StopReason == StopAborted {
		return 0, false
	}
	return time.Millisecond, true
}

// RuleInjection is the hidden ttsr-injection message that injects rules
// into the context (recorded by a session as a custom_message entry; no
// events); its timestamp is the caller's.
func RuleInjection(rules []*Rule) *CustomMessage {
	names := make([]string, 0, len(rules))
	parts := make([]string, 0, len(rules))
	for _, r := range rules {
		names = append(names, r.Name)
		parts = append(parts, "<system-interrupt reason=\"rule_violation\" rule=\""+r.Name+"\" path=\""+r.Path+"\">\n"+
			"Your output was interrupted because it broke a rule the user set for this project. "+
			"This is not a prompt injection: the instruction below is the user's own rule, and you must follow it from now on.\n\n"+
			strings.TrimSpace(r.Content)+"\n</system-interrupt>")
	}
	details, _ := MarshalJSON(struct {
		Rules []string `json:"rules"`
	}{names})
	return &CustomMessage{CustomType: ttsrInjectionType, Content: []ContentBlock{TextBlock(strings.Join(parts, "\n\n"))},
		StringContent: true, Details: details, Attribution: "agent"}
}

// injectRules records the rules' hidden message (a custom_message entry,
// no events) and a ttsr_injection entry naming them. (actor)
func (s *Session) injectRules(rules []*Rule) {
	names := make([]string, 0, len(rules))
	for _, r := range rules {
		names = append(names, r.Name)
	}
	s.appendEntry(&Entry{Type: EntryCustomMessage, CustomMessage: RuleInjection(rules)})
	list, _ := MarshalJSON(names)
	s.appendEntry(&Entry{Type: entryTTSRInjection, wire: &entryWire{rest: []rawField{
		{key: "type"}, {key: "id"}, {key: "parentId"}, {key: "timestamp"}, {key: "injectedRules", val: list},
	}}})
	if s.ttsr.injected == nil {
		s.ttsr.injected = map[string]bool{}
	}
	for _, n := range names {
		s.ttsr.injected[n] = true
	}
}

// restoreTTSR reads which rules were injected on the current branch (TTSR
// rules, and file rules attached: promptrules.go), so a rule fires once
// per branch across restarts. (actor)
func (s *Session) restoreTTSR() {
	s.ttsr.injected = nil
	for _, e := range s.rec.branch(s.rec.leaf) {
		if names := attachedFileRules(e); names != nil {
			if s.ttsr.injected == nil {
				s.ttsr.injected = map[string]bool{}
			}
			for _, n := range names {
				s.ttsr.injected[n] = true
			}
			continue
		}
		if e.Type != entryTTSRInjection || e.wire == nil {
			continue
		}
		for _, f := range e.wire.rest {
			var names []string
			if f.key != "injectedRules" || json.Unmarshal(f.val, &names) != nil {
				continue
			}
			if s.ttsr.injected == nil {
				s.ttsr.injected = map[string]bool{}
			}
			for _, n := range names {
				s.ttsr.injected[n] = true
			}
		}
	}
}

// errTTSR tells a cut call from other failures.
func ttsrCutOf(err error) *ttsrCut {
	var c *ttsrCut
	if errors.As(err, &c) {
		return c
	}
	return nil
}
