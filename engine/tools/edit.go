package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// edit previews (agent-core.md §4.4).
const (
	editMaxPreviews   = 5
	editPreviewRadius = 5
	editPreviewWidth  = 80
	editDiffContext   = 2
)

type editTool struct {
	spec
	o Options
}

// NewEdit returns the edit tool in the original's "replace" mode: each
// entry replaces an exact, unique occurrence of old_text (or every one with
// all), preserving the file's BOM and line endings.
func NewEdit(o Options) engine.Tool { return &editTool{spec: editSpec, o: o} }

var editSpec = spec{
	name:        "edit",
	concurrency: engine.Exclusive,
	description: "Edit files by exact text replacement. Each entry replaces old_text with new_text in path; old_text must " +
		"match exactly (including whitespace) and be unique in the file unless all is true. Entries are applied in order.",
	schema: []byte(`{"type":"object","properties":{"edits":{"type":"array","minItems":1,"items":{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path of the file to edit"},` +
		`"old_text":{"type":"string","description":"Exact text to replace"},` +
		`"new_text":{"type":"string","description":"Replacement text"},` +
		`"all":{"type":"boolean","description":"Replace every occurrence (default: the match must be unique)"}` +
		`},"required":["path","old_text","new_text"],"additionalProperties":false}}},` +
		`"required":["edits"],"additionalProperties":false}`),
}

type editEntry struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
	All     bool   `json:"all"`
}

type editArgs struct {
	Edits []editEntry `json:"edits"`
}

type editFileResult struct {
	Path             string `json:"path"`
	Diff             string `json:"diff,omitempty"`
	FirstChangedLine int    `json:"firstChangedLine,omitempty"`
	Replacements     int    `json:"replacements,omitempty"`
	Error            string `json:"error,omitempty"`
}

func (t *editTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a editArgs
	if r, ok := decodeArgs("edit", call.Arguments, &a); !ok {
		return r, nil
	}
	if len(a.Edits) == 0 {
		return failResult("edits must contain at least one entry"), nil
	}
	if len(a.Edits) == 1 {
		res, text, err := t.apply(ctx, a.Edits[0])
		if err != nil {
			return engine.ToolResult{}, err
		}
		if res.Error != "" {
			return failResult(res.Error), nil
		}
		return textResult(text, mustJSON(res)), nil
	}
	// Several entries: each is applied on its own; a failure is reported
	// in its line and does not undo or stop the others.
	var lines []string
	results := make([]editFileResult, 0, len(a.Edits))
	for _, e := range a.Edits {
		res, text, err := t.apply(ctx, e)
		if err != nil {
			// Aborted while reading a large file: the entries before it
			// are written, this one and the rest are not.
			return engine.ToolResult{}, err
		}
		if res.Error != "" {
			text = fmt.Sprintf("Error editing %s: %s", e.Path, res.Error)
		}
		lines = append(lines, text)
		results = append(results, res)
	}
	return textResult(strings.Join(lines, "\n"), mustJSON(map[string]any{"perFileResults": results})), nil
}

// apply performs one entry and returns its result and success text; a Go
// error is the cancellation of a read, which large files honour between
// chunks (small ones are read whole, as edit is otherwise not abortable).
func (t *editTool) apply(ctx context.Context, e editEntry) (editFileResult, string, error) {
	res := editFileResult{Path: e.Path}
	fail := func(format string, args ...any) (editFileResult, string, error) {
		res.Error = fmt.Sprintf(format, args...)
		return res, "", nil
	}
	if strings.TrimSpace(e.Path) == "" {
		return fail("Path must not be empty")
	}
	if strings.HasSuffix(strings.ToLower(e.Path), ".ipynb") {
		return fail("Cannot edit Jupyter notebooks with the Edit tool. Use the NotebookEdit tool instead.")
	}
	if e.OldText == "" {
		return fail("old_text must not be empty.")
	}
	abs := resolveCwd(t.o.Cwd, e.Path)
	delegated := t.o.Editor != nil && !t.o.Sandbox.On()
	var raw []byte
	var err error
	if delegated {
		// The path rules stay local; the text is the editor's buffer.
		if _, err = readTarget(abs); err == nil {
			var text string
			if text, err = t.o.Editor.ReadText(ctx, abs); err == nil {
				raw = []byte(text)
			} else if !isCancel(err) {
				return fail("Cannot read %s: %s", e.Path, err.Error())
			}
		}
	} else {
		raw, err = readWhole(ctx, abs, maxWholeFile, "edit")
	}
	var r *refusal
	switch {
	case err == nil:
	case errNotFound(err):
		return fail("File not found: %s", e.Path)
	case isCancel(err):
		return res, "", err
	case errors.As(err, &r):
		return fail("Cannot edit %s: %s", e.Path, r.Reason)
	default:
		return fail("Cannot read %s: %s", e.Path, describeFSError(err))
	}
	// Match on LF text without a BOM, then restore both, so a model that
	// writes "\n" can edit a CRLF file and the file keeps its conventions.
	content := string(raw)
	bom := strings.HasPrefix(content, "\uFEFF")
	content = strings.TrimPrefix(content, "\uFEFF")
	crlf := strings.Contains(content, "\r\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	oldText := strings.ReplaceAll(e.OldText, "\r\n", "\n")
	newText := strings.ReplaceAll(e.NewText, "\r\n", "\n")

	n := strings.Count(content, oldText)
	switch {
	case n == 0:
		return fail("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", e.Path)
	case n > 1 && !e.All:
		return fail("%s", occurrencesMessage(content, oldText, e.Path, n))
	}
	updated := strings.ReplaceAll(content, oldText, newText)
	if updated == content {
		return fail("No changes made to %s. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", e.Path)
	}
	out := updated
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if bom {
		out = "\uFEFF" + out
	}
	if delegated {
		if err := t.o.Editor.WriteText(ctx, abs, out); err != nil {
			return fail("Cannot write %s: %s", e.Path, err.Error())
		}
		res.Diff, res.FirstChangedLine = lineDiff(content, updated, editDiffContext)
		res.Replacements = n
		return res, editSuccess(e.Path, n), nil
	}
	target, fi, err := writeTarget(abs)
	if err == nil && fi == nil {
		err = fs.ErrNotExist // removed since it was read
	}
	if err == nil && t.o.Sandbox.On() {
		var dir *sandbox.Dir
		if dir, err = t.o.Sandbox.OpenParent(abs, target, false); err == nil {
			defer dir.Close()
			target = filepath.Join(dir.Path, filepath.Base(target))
		}
	}
	if err == nil {
		err = replaceFile(target, fi, []byte(out))
	}
	if err != nil {
		return fail("Cannot write %s: %s", e.Path, describeFSError(err))
	}
	res.Diff, res.FirstChangedLine = lineDiff(content, updated, editDiffContext)
	res.Replacements = n
	return res, editSuccess(e.Path, n), nil
}

func editSuccess(path string, n int) string {
	if n == 1 {
		return fmt.Sprintf("Successfully replaced text in %s.", path)
	}
	return fmt.Sprintf("Successfully replaced %d occurrences in %s.", n, path)
}

// occurrencesMessage lists where an ambiguous old_text occurs, each with a
// few lines around it, so the model can add context to its next call.
func occurrencesMessage(content, oldText, path string, n int) string {
	lines := splitLines(content)
	var previews []string
	from := 0
	for i := 0; i < n && i < editMaxPreviews; i++ {
		at := from + strings.Index(content[from:], oldText)
		from = at + len(oldText)
		line := strings.Count(content[:at], "\n") // 0-based
		lo, hi := max(line-editPreviewRadius, 0), min(line+editPreviewRadius, len(lines)-1)
		width := len(fmt.Sprint(hi + 1))
		var p []string
		for j := lo; j <= hi; j++ {
			text := lines[j]
			if r := []rune(text); len(r) > editPreviewWidth {
				text = string(r[:editPreviewWidth-1]) + "…"
			}
			p = append(p, fmt.Sprintf("  %*d | %s", width, j+1, text))
		}
		previews = append(previews, strings.Join(p, "\n"))
	}
	shown := ""
	if n > editMaxPreviews {
		shown = fmt.Sprintf(" (showing first %d of %d)", editMaxPreviews, n)
	}
	return fmt.Sprintf("Found %d occurrences in %s%s:\n\n%s\n\nAdd more context lines to disambiguate.", n, path, shown, strings.Join(previews, "\n\n"))
}

// lineDiff renders the changed region of before→after as numbered lines
// ("-N old", "+N new", " N context") with ctx lines of context, and returns
// the first changed line (1-based, in after). The common prefix and suffix
// bound the region, which is exact for the single-region changes edit
// makes and a superset (never wrong, possibly wider) for several.
func lineDiff(before, after string, ctx int) (string, int) {
	a, b := splitLines(before), splitLines(after)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []string
	for i := max(pre-ctx, 0); i < pre; i++ {
		out = append(out, fmt.Sprintf(" %d %s", i+1, a[i]))
	}
	for i := pre; i < len(a)-suf; i++ {
		out = append(out, fmt.Sprintf("-%d %s", i+1, a[i]))
	}
	for i := pre; i < len(b)-suf; i++ {
		out = append(out, fmt.Sprintf("+%d %s", i+1, b[i]))
	}
	for i := len(b) - suf; i < len(b) && i < len(b)-suf+ctx; i++ {
		out = append(out, fmt.Sprintf(" %d %s", i+1, b[i]))
	}
	return strings.Join(out, "\n"), pre + 1
}

// splitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return []string{""}
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
