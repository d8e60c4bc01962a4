package export

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	ttemplate "text/template"

	"github.com/xcsh-go/xcsh/engine"
)

// attack carries the classic breakouts at once: out of a script element,
// an event handler, out of an attribute, a script URL, and a comment
// opener (which changes how a script element's end is found).
const attack = `</script><img src=x onerror=alert(1)><svg onload=alert(1)>"><script>alert(1)</script>javascript:alert(1)<!--`

// hostileSession puts the attack into every string a session can carry,
// entry ids and the leaf included.
func hostileSession() Data { return hostileSessionWith(attack) }

func hostileSessionWith(a string) Data {
	blocks := func() []engine.ContentBlock { return []engine.ContentBlock{engine.TextBlock(a)} }
	args, _ := json.Marshal(map[string]string{"command": a, a: "key"})
	code := 1
	main := chain(a+"m", "",
		&engine.Entry{Type: engine.EntryModelChange, Model: a},
		&engine.Entry{Type: engine.EntryThinkingLevelChange, ThinkingLevel: engine.ThinkingLevel(a)},
		msg(&engine.UserMessage{Content: []engine.ContentBlock{
			engine.TextBlock(a),
			{Type: engine.BlockImage, MimeType: a, Data: pngData},
			{Type: engine.BlockImage, MimeType: "image/png", Data: a},
			{Type: engine.BlockImage, MimeType: "image/svg+xml", Data: "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"},
		}}),
		msg(&engine.DeveloperMessage{Content: blocks()}),
		msg(&engine.AssistantMessage{
			Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: a},
				engine.TextBlock(a),
				{Type: engine.BlockToolCall, ID: a, Name: a, Arguments: args, Intent: a},
				{Type: engine.BlockToolCall, ID: a, Name: a, Arguments: []byte(a)}, // not JSON
			},
			Provider: a, Model: a, StopReason: engine.StopReason(a), ErrorMessage: a,
		}),
		msg(&engine.ToolResultMessage{ToolCallID: a, ToolName: a, IsError: true, Content: blocks()}),
		msg(&engine.BashExecutionMessage{Command: a, Output: a, ExitCode: &code}),
		msg(&engine.PythonExecutionMessage{Code: a, Output: a}),
		msg(&engine.CustomMessage{CustomType: a, Content: blocks(), Display: true}),
		msg(&engine.BranchSummaryMessage{Summary: a, FromID: a}),
		msg(&engine.CompactionSummaryMessage{Summary: a}),
		msg(&engine.FileMentionMessage{Files: []engine.FileMention{{
			Path: a, Content: a, SkippedReason: a,
			Image: &engine.ContentBlock{Type: engine.BlockImage, MimeType: a, Data: a},
		}}}),
		&engine.Entry{Type: a},
	)
	side := chain(a+"b", main[2].ID,
		msg(&engine.AssistantMessage{Content: blocks()}),
		msg(&engine.UserMessage{Content: blocks()}),
	)
	orphan := chain(a+"o", "", msg(&engine.BashExecutionMessage{Command: a}))
	entries := append(append(main, side...), orphan...)
	return Data{
		SessionID: a, SessionFile: a, Title: a, Cwd: a, Created: 1,
		Entries: entries, Leaf: main[len(main)-1].ID,
		SystemPrompt: a,
		Tools:        []Tool{{Name: a, Description: a}},
	}
}

func TestWriteHTMLEscapesHostileContent(t *testing.T) {
	t.Parallel()
	out := render(t, hostileSession())

	// (a) only our script and the JSON data block; (b) no event handlers;
	// (c) no script URLs (nor any URL leaving the page); and balanced
	// markup, so nothing ended an element early.
	if p := inertProblems(out, pageScript); len(p) > 0 {
		t.Fatalf("hostile content made the page active:\n%s", strings.Join(p, "\n"))
	}
	tags, _ := scanTags(out)
	scripts := 0
	for _, tg := range tags {
		if tg.Name == "script" && !tg.End {
			scripts++
		}
	}
	if scripts != 2 {
		t.Errorf("%d script elements, want 2 (our script and the JSON data block)", scripts)
	}

	// (d) the markup of the attack never appears raw, and appears escaped.
	for _, raw := range []string{"<img src=x", "<svg", "<script>alert", "\"><script", "<!--"} {
		if strings.Contains(out, raw) {
			t.Errorf("output holds %q unescaped", raw)
		}
	}
	for _, esc := range []string{
		"&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&lt;svg onload=alert(1)&gt;&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;javascript:alert(1)&lt;!--",
	} {
		if !strings.Contains(out, esc) {
			t.Errorf("output lacks the escaped attack %q", esc)
		}
	}
	// No image was shown: every hostile image became "[image]".
	if strings.Contains(out, "<img") {
		t.Error("a hostile image block was rendered as an image")
	}

	// The JSON data block is still data: it decodes to the very title.
	var m meta
	for _, tg := range tags {
		if tg.Name == "script" && tg.Attrs["type"] == "application/json" {
			if err := json.Unmarshal([]byte(tg.Body), &m); err != nil {
				t.Fatalf("JSON data block: %v", err)
			}
		}
	}
	if m.Title != attack || m.LeafID != hostileSession().Leaf {
		t.Errorf("JSON data block lost the content: %+v", m)
	}
}

func TestContentSecurityPolicyAllowsOurScript(t *testing.T) {
	t.Parallel()
	out := render(t, sampleSession())
	tags, err := scanTags(out)
	if err != nil {
		t.Fatal(err)
	}
	var csp, body string
	for _, tg := range tags {
		if tg.Name == "meta" && tg.Attrs["http-equiv"] == "Content-Security-Policy" {
			csp = tg.Attrs["content"]
		}
		if tg.Name == "script" && !tg.End && tg.Attrs["type"] == "" {
			body = tg.Body
		}
	}
	// The browser hashes the script element's text exactly as written.
	want := "script-src 'sha256-" + sha256Base64(body) + "'"
	if !strings.Contains(csp, want) {
		t.Errorf("CSP %q does not allow the page's script (want %q)", csp, want)
	}
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "img-src data:") {
		t.Errorf("CSP %q is not closed to the network", csp)
	}
}

// TestInertProblemsCatchesActiveMarkup proves the checker: each snippet
// would be active in a browser and must be reported.
func TestInertProblemsCatchesActiveMarkup(t *testing.T) {
	t.Parallel()
	wrap := func(s string) string { return "<html><body>" + s + "</body></html>" }
	for _, tc := range []struct{ name, page, want string }{
		{"script breakout", wrap(`<p></script><img src=x onerror=alert(1)></p>`), "unbalanced"},
		{"event handler", wrap(`<img src=x onerror=alert(1)>`), "event handler"},
		{"handler, odd spacing", wrap(`<p/ONCLICK = "x">t</p>`), "event handler"},
		{"svg", wrap(`<svg onload=alert(1)>`), "never writes"},
		{"injected script", wrap(`<script>alert(1)</script>`), "script we did not write"},
		{"json block with markup", wrap(`<script type="application/json">{"a":"</b>"}</script>`), "not plain JSON"},
		{"script URL", wrap(`<a href="javascript:alert(1)">x</a>`), "script URL"},
		{"encoded script URL", wrap(`<a href=" jav&#x09;ascript&colon;alert(1)">x</a>`), "script URL"},
		{"svg data URL", wrap(`<img src="data:image/svg+xml;base64,PHN2Zz4=">`), "not an allowed image"},
		{"remote image", wrap(`<img src="https://example.com/x.png">`), "leaves the page"},
		{"unclosed", wrap(`<div>`), "unbalanced"},
		{"unterminated tag", wrap(`<a href="x`), "unterminated"},
	} {
		probs := inertProblems(tc.page, pageScript)
		if !strings.Contains(strings.Join(probs, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want one mentioning %q", tc.name, probs, tc.want)
		}
	}
	if p := inertProblems(wrap(`<p class="x">&lt;img src=x onerror=alert(1)&gt;</p>`), pageScript); len(p) > 0 {
		t.Errorf("escaped text reported: %q", p)
	}
}

// TestUnescapedRenderingIsCaught renders the hostile session with the same
// template source through text/template, which escapes nothing: the
// checks above must fail on it, or they prove nothing about WriteHTML.
func TestUnescapedRenderingIsCaught(t *testing.T) {
	t.Parallel()
	funcs := ttemplate.FuncMap{}
	for name, f := range pageFuncs {
		funcs[name] = f
	}
	src := strings.Replace(pageSource, "XCSH_SCRIPT_HASH", scriptHash, 1)
	tt := ttemplate.Must(ttemplate.New("page").Funcs(funcs).Parse(src))
	unescaped := func(a string) string {
		d := hostileSessionWith(a)
		p, err := newPage(&d)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tt.Execute(&buf, p); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	// With the comment opener, the rest of the page is one unterminated
	// comment: reported as such.
	if probs := inertProblems(unescaped(attack), pageScript); len(probs) == 0 {
		t.Error("the unescaped page passed the checks")
	}
	// Without it, each kind of breakout is reported.
	out := unescaped(strings.TrimSuffix(attack, "<!--"))
	probs := strings.Join(inertProblems(out, pageScript), "\n")
	for _, want := range []string{"event handler", "never writes", "script we did not write", "unbalanced"} {
		if !strings.Contains(probs, want) {
			t.Errorf("the unescaped page was not reported for %q; problems:\n%s", want, probs)
		}
	}
	if !regexp.MustCompile(`<img src=x onerror=alert\(1\)>`).MatchString(out) {
		t.Error("the unescaped rendering is not the raw attack it should be")
	}
}
