package export

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// pngData is a 1x1 PNG, base64.
const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// chain links entries into one branch, root first, giving ids e1, e2, ...
// after the given prefix and timestamps a second apart.
func chain(prefix, parent string, entries ...*engine.Entry) []*engine.Entry {
	for i, e := range entries {
		if e.ID == "" {
			e.ID = fmt.Sprintf("%s%d", prefix, i+1)
		}
		e.ParentID = parent
		if e.Timestamp == 0 {
			e.Timestamp = 1767225600000 + int64(i)*1000
		}
		parent = e.ID
	}
	return entries
}

func msg(m engine.Message) *engine.Entry { return &engine.Entry{Type: engine.EntryMessage, Message: m} }

func render(t testing.TB, d Data) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, d); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	return buf.String()
}

func exitCode(n int) *int { return &n }

// sampleSession has one of every kind of entry on the current branch and
// one abandoned branch.
func sampleSession() Data {
	dur := 1234.0
	main := chain("m", "",
		&engine.Entry{Type: engine.EntryModelChange, Model: "anthropic/claude-sonnet-4-5"},
		&engine.Entry{Type: engine.EntryThinkingLevelChange, ThinkingLevel: engine.ThinkingHigh},
		msg(&engine.UserMessage{Content: []engine.ContentBlock{
			engine.TextBlock("List the files & explain <main.go>"),
			{Type: engine.BlockImage, MimeType: "image/png", Data: pngData},
		}}),
		msg(&engine.AssistantMessage{
			Content: []engine.ContentBlock{
				{Type: engine.BlockThinking, Thinking: "I should run ls."},
				engine.TextBlock("Let me look."),
				{Type: engine.BlockToolCall, ID: "toolu_1", Name: "bash", Arguments: []byte(`{"command":"ls -la","timeout":30}`), Intent: "listing files"},
			},
			Provider: "anthropic", Model: "claude-sonnet-4-5",
			Usage:      engine.Usage{Input: 1200, Output: 80, TotalTokens: 1280, Cost: engine.Cost{Total: 0.0048}},
			StopReason: engine.StopToolUse, Duration: &dur,
		}),
		msg(&engine.ToolResultMessage{ToolCallID: "toolu_1", ToolName: "bash",
			Content: []engine.ContentBlock{engine.TextBlock("main.go\ngo.mod")}}),
		msg(&engine.ToolResultMessage{ToolCallID: "toolu_2", ToolName: "read", IsError: true,
			Content: []engine.ContentBlock{engine.TextBlock("ENOENT: no such file")}}),
		msg(&engine.AssistantMessage{
			Provider: "anthropic", Model: "claude-sonnet-4-5",
			StopReason: engine.StopError, ErrorMessage: "overloaded_error: try again",
		}),
		msg(&engine.BashExecutionMessage{Command: "git status", Output: "clean", ExitCode: exitCode(0)}),
		msg(&engine.BashExecutionMessage{Command: "false", ExitCode: exitCode(1)}),
		msg(&engine.CustomMessage{CustomType: "ttsr-injection", Content: []engine.ContentBlock{engine.TextBlock("rule: no panics")}}),
		msg(&engine.BranchSummaryMessage{Summary: "Tried a rewrite; abandoned.", FromID: "b1"}),
		msg(&engine.CompactionSummaryMessage{Summary: "Earlier: set up the repo.", TokensBefore: 123456}),
		msg(&engine.FileMentionMessage{Files: []engine.FileMention{{Path: "go.mod", Content: "module x"}}}),
		&engine.Entry{Type: "label"},
	)
	side := chain("b", "m3",
		msg(&engine.AssistantMessage{Content: []engine.ContentBlock{engine.TextBlock("An abandoned answer")}, StopReason: engine.StopStop}),
		msg(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("never mind")}}),
	)
	return Data{
		SessionID:    "1b2c3d4e5f607182",
		SessionFile:  "/home/u/.xcsh/agent/sessions/-p/2026-01-01T00-00-00-000Z_1b2c3d4e5f607182.jsonl",
		Title:        "Fix the parser",
		Cwd:          "/home/u/p",
		Created:      1767225600000,
		Entries:      append(main, side...),
		Leaf:         main[len(main)-1].ID,
		SystemPrompt: "You are xcsh, a coding agent.",
		Tools:        []Tool{{Name: "bash", Description: "Run a shell command."}, {Name: "read", Description: "Read a file."}},
	}
}

func TestWriteHTMLShowsTheCurrentBranch(t *testing.T) {
	t.Parallel()
	out := render(t, sampleSession())
	if p := inertProblems(out, pageScript); len(p) > 0 {
		t.Fatalf("page is not inert and balanced:\n%s", strings.Join(p, "\n"))
	}
	// In page order: header, system prompt, tools, then the branch root
	// first; "&" and "<" in content arrive escaped.
	want := []string{
		"<title>Fix the parser</title>",
		"1b2c3d4e5f607182",
		"/home/u/p",
		"2026-01-01 00:00:00 UTC",
		"<summary>System prompt</summary><pre>You are xcsh, a coding agent.</pre>",
		"<dt>bash</dt><dd>Run a shell command.</dd>",
		"model: anthropic/claude-sonnet-4-5",
		"thinking level: high",
		"List the files &amp; explain &lt;main.go&gt;",
		// html/template writes '+' in an attribute as &#43;, which the
		// browser decodes back.
		`<img src="data:image/png;base64,` + strings.ReplaceAll(pngData, "+", "&#43;") + `"`,
		"<summary>Thinking</summary><pre>I should run ls.</pre>",
		"Let me look.",
		`<span class="toolname">bash</span> <span class="intent">listing files</span> <code>toolu_1</code>`,
		"{\n  &#34;command&#34;: &#34;ls -la&#34;,\n  &#34;timeout&#34;: 30\n}",
		"stop: toolUse · in 1200 · out 80 · $0.0048 · 1234 ms",
		"main.go\ngo.mod",
		`<article class="msg toolresult error"`,
		"ENOENT: no such file",
		`<p class="errmsg">overloaded_error: try again</p>`,
		"$ git status", "clean", "exit code 0",
		"$ false", "exit code 1",
		"ttsr-injection", "(not displayed to the user)", "rule: no panics",
		"branch summary", "Tried a rewrite; abandoned.",
		"123456 tokens before", "Earlier: set up the repo.",
		"@go.mod", "module x",
		"label entry",
		"<h2>Other branches</h2>",
		`forked after <a href="#e-m3">m3</a>: An abandoned answer`,
		`<li id="e-b2"><code>b2</code> <span class="role">user</span> never mind</li>`,
		`<script type="application/json" id="xcsh-session">{"sessionId":"1b2c3d4e5f607182"`,
	}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if i < 0 {
			if j := strings.Index(out, w); j >= 0 {
				t.Fatalf("%q is out of order (at %d, expected after %d)", w, j, at)
			}
			t.Fatalf("page lacks %q", w)
		}
		at += i + len(w)
	}
	// The abandoned branch is listed, not rendered as conversation.
	if strings.Contains(out, `<article class="msg assistant" id="e-b1"`) {
		t.Error("an off-branch entry is rendered in the conversation")
	}
}

func TestWriteHTMLLeaf(t *testing.T) {
	t.Parallel()
	d := sampleSession()
	d.Leaf = "b2" // the side branch becomes the conversation
	out := render(t, d)
	if !strings.Contains(out, `<article class="msg user" id="e-b2"`) ||
		strings.Contains(out, `<article class="msg assistant" id="e-m4"`) ||
		!strings.Contains(out, `forked after <a href="#e-m3">m3</a>`) {
		t.Errorf("leaf b2 does not select the side branch")
	}
	if !strings.Contains(out, "5 on this branch, 16 in the session") {
		t.Errorf("entry counts missing")
	}

	d.Leaf = ""
	out = render(t, d)
	if !strings.Contains(out, "0 on this branch, 16 in the session") || !strings.Contains(out, ", a separate root") {
		t.Errorf("an empty leaf should show no conversation and list every entry as another branch")
	}

	d.Leaf = "nope"
	if err := WriteHTML(&bytes.Buffer{}, d); !errors.Is(err, engine.ErrNoEntry) {
		t.Errorf("unknown leaf: got %v, want ErrNoEntry", err)
	}
}

func TestWriteHTMLParentCycle(t *testing.T) {
	t.Parallel()
	// A damaged file could make entries each other's parents; the walk
	// must end.
	a := msg(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("a")}})
	b := msg(&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("b")}})
	a.ID, a.ParentID, b.ID, b.ParentID = "a", "b", "b", "a"
	out := render(t, Data{SessionID: "s", Entries: []*engine.Entry{a, b}, Leaf: "b"})
	if !strings.Contains(out, "2 on this branch") {
		t.Error("cycle not cut after each entry once")
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriteHTMLWriteError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk full")
	if err := WriteHTML(failWriter{boom}, sampleSession()); !errors.Is(err, boom) {
		t.Errorf("got %v, want the writer's error", err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/s/2026-07-02T18-38-56-123Z_1b2c3d4e5f607182.jsonl", "xcsh-session-2026-07-02T18-38-56-123Z_1b2c3d4e5f607182.html"},
		{"rel/abc.jsonl", "xcsh-session-abc.html"},
		{"/s/noext", "xcsh-session-noext.html"},
	} {
		if got := DefaultPath(tc.in); got != tc.want {
			t.Errorf("DefaultPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestImgSrc(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mime, data string
		ok               bool
	}{
		{"png", "image/png", pngData, true},
		{"jpeg", "image/jpeg", "/9j/4AAQ", true},
		{"gif", "image/gif", "R0lGODlh", true},
		{"webp", "image/webp", "UklGRg==", true},
		{"svg can script", "image/svg+xml", "PHN2Zz4=", false},
		{"html", "text/html", "PHNjcmlwdD4=", false},
		{"mime breaks out", `image/png;base64,x"><script>alert(1)</script>`, "AAAA", false},
		{"mime case", "IMAGE/PNG", "AAAA", false},
		{"data breaks out", "image/png", `AAAA"><script>alert(1)</script>`, false},
		{"data with a space", "image/png", "AA AA", false},
		{"blob reference", "image/png", "blob:sha256:abcd", false},
		{"empty", "image/png", "", false},
		{"padding only", "image/png", "==", false},
		{"padding inside", "image/png", "AA=A", false},
		{"three pads", "image/png", "A===", false},
	} {
		got := imgSrc(engine.ContentBlock{Type: engine.BlockImage, MimeType: tc.mime, Data: tc.data})
		if (got != "") != tc.ok {
			t.Errorf("%s: imgSrc = %q, want shown %v", tc.name, got, tc.ok)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	if got := clip("  a\n\tb  "); got != "a b" {
		t.Errorf("clip folds whitespace: got %q", got)
	}
	long := strings.Repeat("é", previewRunes+5)
	if got := clip(long); got != strings.Repeat("é", previewRunes)+"…" {
		t.Errorf("clip cuts at %d runes: got %d runes", previewRunes, len([]rune(got)))
	}
}
