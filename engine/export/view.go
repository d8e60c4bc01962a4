package export

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

//go:embed page.html.tmpl
var pageSource string

// pageScript is the page's only executable script: it adds expand/collapse
// buttons. It is our own embedded file, never session content, which is
// what makes trusting it as template.JS sound. The page's Content Security
// Policy allows exactly this script by hash, so even markup that escaped
// the escaping could not run (inline handlers, javascript: URLs and any
// other inline script are refused by the browser).
//
//go:embed page.js
var pageScript string

var (
	scriptHash = sha256Base64(pageScript)
	pageFuncs  = map[string]any{
		"imgSrc":     imgSrc,
		"prettyJSON": prettyJSON,
		"usage":      usageLine,
	}
	// The policy's script hash is spliced into our own template source
	// before parsing, so it is static text, never a template value. Parsed
	// on the first export: package init is on every start's path, and
	// parsing is most of this package's share of it.
	pageTemplate = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("page").Funcs(pageFuncs).
			Parse(strings.Replace(pageSource, "XCSH_SCRIPT_HASH", scriptHash, 1)))
	})
)

func sha256Base64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// page is the template's root value.
type page struct {
	D      *Data
	Title  string
	Date   string
	Script template.JS
	Meta   meta
	// Items yields the current branch lazily, so rendering streams.
	Items    iter.Seq[item]
	Branch   int // entries on the current branch
	Branches []offBranch
}

// meta is the machine-readable header embedded as JSON, for tools that
// pick an exported page apart (which session, which leaf). html/template
// escapes it for the script context, so "</script>" or "<!--" in a title
// cannot end the data block.
type meta struct {
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile"`
	Title       string `json:"title"`
	Cwd         string `json:"cwd"`
	Created     int64  `json:"created"`
	LeafID      string `json:"leafId"`
	Entries     int    `json:"entries"`
}

// item is one entry of the current branch. Exactly one of the pointers is
// set, or Note for entries that are not messages; the template switches on
// which.
type item struct {
	ID   string
	Time string

	User          *engine.UserMessage
	Developer     *engine.DeveloperMessage
	Assistant     *engine.AssistantMessage
	ToolResult    *engine.ToolResultMessage
	Bash          *engine.BashExecutionMessage
	Python        *engine.PythonExecutionMessage
	Custom        *engine.CustomMessage
	BranchSummary *engine.BranchSummaryMessage
	Compaction    *engine.CompactionSummaryMessage
	FileMention   *engine.FileMentionMessage
	Note          string
}

// offBranch is a run of entries off the current branch, root first, that
// hangs from Fork ("" when it starts a tree of its own).
type offBranch struct {
	Fork  string
	Lines []offLine
}

// offLine is one entry of an off-branch run, shown as a one-line preview.
type offLine struct {
	ID      string
	Kind    string
	Preview string
}

func newPage(d *Data) (*page, error) {
	byID := make(map[string]*engine.Entry, len(d.Entries))
	for _, e := range d.Entries {
		byID[e.ID] = e
	}
	if d.Leaf != "" && byID[d.Leaf] == nil {
		return nil, fmt.Errorf("export html: leaf %q: %w", d.Leaf, engine.ErrNoEntry)
	}
	branch := pathToRoot(byID, d.Leaf, nil)
	on := make(map[string]bool, len(branch))
	for _, e := range branch {
		on[e.ID] = true
	}
	title := d.Title
	if title == "" {
		title = "xcsh session " + d.SessionID
	}
	p := &page{
		D:      d,
		Title:  title,
		Date:   when(d.Created),
		Script: template.JS(pageScript),
		Meta: meta{
			SessionID: d.SessionID, SessionFile: d.SessionFile, Title: d.Title,
			Cwd: d.Cwd, Created: d.Created, LeafID: d.Leaf, Entries: len(d.Entries),
		},
		Branch:   len(branch),
		Branches: offBranches(d.Entries, byID, on),
	}
	// branch is leaf first; the page reads root first.
	p.Items = func(yield func(item) bool) {
		for i := len(branch) - 1; i >= 0; i-- {
			if !yield(newItem(branch[i])) {
				return
			}
		}
	}
	return p, nil
}

// pathToRoot returns the entries from id up to the root, or up to the first
// entry in stop, leaf first. A parent cycle in a damaged file ends the walk
// instead of looping.
func pathToRoot(byID map[string]*engine.Entry, id string, stop map[string]bool) []*engine.Entry {
	var path []*engine.Entry
	seen := map[string]bool{}
	for id != "" && !seen[id] && !stop[id] {
		e := byID[id]
		if e == nil {
			break
		}
		seen[id] = true
		path = append(path, e)
		id = e.ParentID
	}
	return path
}

// offBranches groups the entries not on the current branch. Each tip (an
// off-branch entry without children) yields the run from it up to the
// first entry already shown, so every entry appears once and the work is
// linear in the number of entries.
func offBranches(entries []*engine.Entry, byID map[string]*engine.Entry, on map[string]bool) []offBranch {
	if len(on) == len(entries) {
		return nil
	}
	hasChild := make(map[string]bool, len(entries))
	for _, e := range entries {
		hasChild[e.ParentID] = true
	}
	shown := make(map[string]bool, len(entries))
	for id := range on {
		shown[id] = true
	}
	var out []offBranch
	for _, tip := range entries {
		if shown[tip.ID] || hasChild[tip.ID] {
			continue
		}
		run := pathToRoot(byID, tip.ID, shown)
		if len(run) == 0 {
			continue
		}
		b := offBranch{Fork: run[len(run)-1].ParentID, Lines: make([]offLine, len(run))}
		for i, e := range run {
			shown[e.ID] = true
			kind, text := summarize(e)
			b.Lines[len(run)-1-i] = offLine{ID: e.ID, Kind: kind, Preview: text}
		}
		out = append(out, b)
	}
	return out
}

func newItem(e *engine.Entry) item {
	it := item{ID: e.ID, Time: when(e.Timestamp)}
	switch e.Type {
	case engine.EntryMessage:
		switch m := e.Message.(type) {
		case *engine.UserMessage:
			it.User = m
		case *engine.DeveloperMessage:
			it.Developer = m
		case *engine.AssistantMessage:
			it.Assistant = m
		case *engine.ToolResultMessage:
			it.ToolResult = m
		case *engine.BashExecutionMessage:
			it.Bash = m
		case *engine.PythonExecutionMessage:
			it.Python = m
		case *engine.CustomMessage:
			it.Custom = m
		case *engine.BranchSummaryMessage:
			it.BranchSummary = m
		case *engine.CompactionSummaryMessage:
			it.Compaction = m
		case *engine.FileMentionMessage:
			it.FileMention = m
		case nil:
			it.Note = "empty message entry"
		default:
			it.Note = m.Role() + " message (not rendered)"
		}
	case engine.EntryModelChange:
		it.Note = "model: " + e.Model
	case engine.EntryThinkingLevelChange:
		level := string(e.ThinkingLevel)
		if level == "" {
			level = "unset"
		}
		it.Note = "thinking level: " + level
	default:
		// Entry types the engine does not model yet (labels, compaction
		// entries, ...) still mark their place in the conversation.
		it.Note = e.Type + " entry"
	}
	return it
}

// previewRunes bounds an off-branch preview: enough to recognise a turn.
const previewRunes = 160

// summarize gives an entry's kind and a one-line preview of its text.
func summarize(e *engine.Entry) (kind, text string) {
	if e.Type != engine.EntryMessage || e.Message == nil {
		it := newItem(e)
		return e.Type, it.Note
	}
	kind = e.Message.Role()
	switch m := e.Message.(type) {
	case *engine.UserMessage:
		text = m.Text()
	case *engine.AssistantMessage:
		text = m.Text()
		if text == "" {
			var names []string
			for _, c := range m.ToolCalls() {
				names = append(names, c.Name)
			}
			if len(names) > 0 {
				text = "tool calls: " + strings.Join(names, ", ")
			}
		}
		if text == "" && m.ErrorMessage != "" {
			text = m.ErrorMessage
		}
	case *engine.ToolResultMessage:
		text = m.ToolName
	case *engine.BashExecutionMessage:
		text = "$ " + m.Command
	case *engine.CustomMessage:
		text = m.CustomType
	case *engine.BranchSummaryMessage:
		text = m.Summary
	case *engine.CompactionSummaryMessage:
		text = m.Summary
	}
	return kind, clip(text)
}

// clip folds whitespace runs to one space and cuts at previewRunes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= previewRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == previewRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// when formats Unix milliseconds for the page; 0 (unknown) is "".
func when(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
}

// usageLine is an assistant message's footer: stop reason, tokens, cost
// and duration. It is one template action rather than eight because the
// template interpreter's per-action cost dominates large exports.
func usageLine(m *engine.AssistantMessage) string {
	u := &m.Usage
	b := make([]byte, 0, 96)
	b = append(b, "stop: "...)
	b = append(b, m.StopReason...)
	b = strconv.AppendInt(append(b, " · in "...), u.Input, 10)
	b = strconv.AppendInt(append(b, " · out "...), u.Output, 10)
	if u.CacheRead != 0 || u.CacheWrite != 0 {
		b = strconv.AppendInt(append(b, " · cache read "...), u.CacheRead, 10)
		b = strconv.AppendInt(append(b, " · cache write "...), u.CacheWrite, 10)
	}
	b = strconv.AppendFloat(append(b, " · $"...), u.Cost.Total, 'f', 4, 64)
	if m.Duration != nil {
		b = strconv.AppendFloat(append(b, " · "...), *m.Duration, 'f', 0, 64)
		b = append(b, " ms"...)
	}
	return string(b)
}

// prettyJSON indents tool-call arguments. Arguments that are not valid
// JSON are shown as they are; they are text either way, and the template
// escapes them.
func prettyJSON(raw []byte) string {
	if len(raw) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// imageTypes are the MIME types a page shows inline. Anything else
// (image/svg+xml can carry script) is shown as "[image]".
var imageTypes = map[string]bool{
	"image/png":  true,
	"image/jpeg": true,
	"image/gif":  true,
	"image/webp": true,
}

// imgSrc returns a data: URL for an image block, or "" when the block is
// not one we can show safely. Only here does content become a trusted URL:
// the MIME type comes from the allow-list and the data is checked to be
// plain base64, so the URL can hold nothing but the image. (A blob:sha256
// reference of an externalised image fails the check and shows as
// "[image]".)
func imgSrc(b engine.ContentBlock) template.URL {
	if b.Type != engine.BlockImage || !imageTypes[b.MimeType] || !isBase64(b.Data) {
		return ""
	}
	return template.URL("data:" + b.MimeType + ";base64," + b.Data)
}

// isBase64 reports whether s is non-empty standard base64: the alphabet,
// with at most two '=' of padding at the end only.
func isBase64(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" || len(s)-len(body) > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
