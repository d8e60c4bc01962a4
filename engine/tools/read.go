package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// read limits (agent-core.md §4.2, §14).
const (
	readDefaultLimit    = 300
	readDirDefaultLimit = 500
	suffixMatchTimeout  = 5 * time.Second
	suffixMatchMaxFiles = 200000
)

type readTool struct {
	spec
	o Options
}

// NewRead returns the read tool: a window of a text file (300 lines by
// default, at most 3000 lines and 50 KB per call) or a directory listing.
func NewRead(o Options) engine.Tool { return &readTool{spec: readSpec, o: o} }

var readSpec = spec{
	name:        "read",
	concurrency: engine.Shared,
	description: "Read a text file or list a directory. Returns up to 300 lines by default (at most 3000 lines or 50KB per call); " +
		"use offset (1-based line) and limit to page through larger files. A directory path lists its entries, " +
		"directories with a trailing slash, each with its age.",
	schema: []byte(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path of the file or directory to read"},` +
		`"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based, default 1)"},` +
		`"limit":{"type":"integer","minimum":1,"description":"Maximum number of lines (entries for a directory) to return"}` +
		`},"required":["path"],"additionalProperties":false}`),
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

type readDetails struct {
	Path        string `json:"path"`
	Kind        string `json:"kind"` // file, directory or binary
	TotalLines  int    `json:"totalLines,omitempty"`
	StartLine   int    `json:"startLine,omitempty"`
	EndLine     int    `json:"endLine,omitempty"`
	Entries     int    `json:"entries,omitempty"`
	Truncated   bool   `json:"truncated"`
	ResolvedVia string `json:"resolvedVia,omitempty"`
}

func (t *readTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a readArgs
	if r, ok := decodeArgs("read", call.Arguments, &a); !ok {
		return r, nil
	}
	if strings.TrimSpace(a.Path) == "" {
		return failResult("Path must not be empty"), nil
	}
	if a.Offset < 0 || a.Limit < 0 {
		return failResult("Offset and limit must be positive numbers"), nil
	}
	abs := resolveCwd(t.o.Cwd, a.Path)
	prefix := ""
	via := ""
	fi, err := os.Stat(abs)
	if errNotFound(err) {
		found, ok := suffixMatch(ctx, t.o.Cwd, a.Path)
		if !ok {
			return failResult(fmt.Sprintf("Path '%s' not found", a.Path)), nil
		}
		abs = found
		via = displayPath(t.o.Cwd, found)
		prefix = fmt.Sprintf("[Path '%s' not found; resolved to '%s' via suffix match]\n", a.Path, via)
		fi, err = os.Stat(abs)
	}
	if err != nil {
		return failResult(fmt.Sprintf("Cannot read %s: %s", a.Path, describeFSError(err))), nil
	}
	shown := displayPath(t.o.Cwd, abs)
	if fi.IsDir() {
		text, d := t.listDir(abs, a.Limit)
		d.Path, d.ResolvedVia = shown, via
		if text == "" {
			return failResult(fmt.Sprintf("Cannot read directory %s", a.Path)), nil
		}
		return textResult(prefix+text, mustJSON(d)), nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return failResult(fmt.Sprintf("Cannot read %s: %s", a.Path, describeFSError(err))), nil
	}
	if isBinary(data) {
		d := readDetails{Path: shown, Kind: "binary", ResolvedVia: via}
		return textResult(fmt.Sprintf("%s[%s is a binary file (%s); its content is not shown]", prefix, shown, FormatSize(len(data))), mustJSON(d)), nil
	}
	text, d := readWindow(string(data), a.Offset, a.Limit)
	d.Path, d.ResolvedVia = shown, via
	return textResult(prefix+text, mustJSON(d)), nil
}

// readWindow selects lines [offset, offset+limit) of content within the
// line and byte caps and appends the continuation notice.
func readWindow(content string, offset, limit int) (string, readDetails) {
	d := readDetails{Kind: "file"}
	content = strings.TrimPrefix(content, "\uFEFF")
	if content == "" {
		return "The file is empty.", d
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	total := len(lines)
	d.TotalLines = total
	start := 1
	if offset > 0 {
		start = offset
	}
	if start > total {
		return fmt.Sprintf("Line %d is beyond end of file (%d lines total). Use offset=1 to read from the start, or offset=%d to read the last line.", start, total, total), d
	}
	if limit <= 0 {
		limit = readDefaultLimit
	}
	limit = min(limit, DefaultMaxLines)
	end := min(start+limit-1, total) // inclusive

	if len(lines[start-1]) > DefaultMaxBytes {
		// One line alone is over the byte cap: show a preview of it.
		preview := cutUTF8(lines[start-1], DefaultMaxBytes)
		d.StartLine, d.EndLine, d.Truncated = start, start, true
		next := ""
		if start < total {
			next = fmt.Sprintf(" Use offset=%d to continue.", start+1)
		}
		return fmt.Sprintf("%s\n\n[Line %d is %s, over the %s limit; showing its first %s.%s]",
			preview, start, FormatSize(len(lines[start-1])), FormatSize(DefaultMaxBytes), FormatSize(len(preview)), next), d
	}
	var b strings.Builder
	byBytes := false
	last := start - 1
	for i := start - 1; i < end; i++ {
		add := len(lines[i])
		if i > start-1 {
			add++
		}
		if b.Len()+add > DefaultMaxBytes {
			byBytes = true
			break
		}
		if i > start-1 {
			b.WriteByte('\n')
		}
		b.WriteString(lines[i])
		last = i + 1
	}
	d.StartLine, d.EndLine = start, last
	if last < total {
		d.Truncated = true
		limitNote := ""
		if byBytes {
			limitNote = fmt.Sprintf(" (%s limit)", FormatSize(DefaultMaxBytes))
		}
		fmt.Fprintf(&b, "\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue]", start, last, total, limitNote, last+1)
	}
	return b.String(), d
}

// listDir renders a directory: entries sorted case-insensitively, "name/"
// for directories, each with its age. It returns "" when the directory
// cannot be read.
func (t *readTool) listDir(abs string, limit int) (string, readDetails) {
	d := readDetails{Kind: "directory"}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", d
	}
	if len(entries) == 0 {
		return "(empty directory)", d
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := strings.ToLower(entries[i].Name()), strings.ToLower(entries[j].Name())
		if a != b {
			return a < b
		}
		return entries[i].Name() < entries[j].Name()
	})
	if limit <= 0 {
		limit = readDirDefaultLimit
	}
	now := t.o.now()
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if n == limit {
			break
		}
		name := e.Name()
		info, err := os.Stat(filepath.Join(abs, name)) // follow symlinks: a link to a directory lists as one
		if err == nil && info.IsDir() {
			name += "/"
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(name)
		if err == nil {
			b.WriteString(" (" + formatAge(now.Sub(info.ModTime())) + ")")
		}
		n++
	}
	d.Entries = len(entries)
	if n < len(entries) {
		d.Truncated = true
		fmt.Fprintf(&b, "\n\n[%d results limit reached. Use limit=%d for more]", n, len(entries))
	}
	return b.String(), d
}

// formatAge renders an age the way the original's listings do.
func formatAge(age time.Duration) string {
	switch {
	case age < time.Minute:
		return "just now"
	case age < time.Hour:
		return fmt.Sprintf("%dm ago", int(age/time.Minute))
	case age < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(age/time.Hour))
	case age < 7*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(age/(24*time.Hour)))
	case age < 30*24*time.Hour:
		return fmt.Sprintf("%dw ago", int(age/(7*24*time.Hour)))
	case age < 365*24*time.Hour:
		return fmt.Sprintf("%dmo ago", int(age/(30*24*time.Hour)))
	}
	return fmt.Sprintf("%dy ago", int(age/(365*24*time.Hour)))
}

// errAmbiguous stops a suffix-match walk at the second candidate.
var errAmbiguous = errors.New("ambiguous suffix match")

// suffixMatch looks for the one file under cwd whose path ends with p (a
// model often drops a leading directory). Two candidates, or a walk that
// runs past its time or size budget, mean no match: guessing between files
// would read the wrong one.
func suffixMatch(ctx context.Context, cwd, p string) (string, bool) {
	p = filepath.ToSlash(filepath.Clean(p))
	if filepath.IsAbs(p) || strings.HasPrefix(p, "../") || p == "." || p == ".." {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, suffixMatchTimeout)
	defer cancel()
	found := ""
	seen := 0
	err := walkFiles(ctx, cwd, true, true, func(path string, _ fs.DirEntry) error {
		seen++
		if seen > suffixMatchMaxFiles {
			return errAmbiguous
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, cwd+string(filepath.Separator)))
		if rel == p || strings.HasSuffix(rel, "/"+p) {
			if found != "" {
				return errAmbiguous
			}
			found = path
		}
		return nil
	})
	if err != nil || found == "" {
		return "", false
	}
	return found, true
}

// describeFSError turns an os error into a short reason without the
// absolute path the *PathError repeats.
func describeFSError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	}
	return err.Error()
}
