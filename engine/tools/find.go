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

	"github.com/bmatcuk/doublestar/v4"

	"github.com/xcsh-go/xcsh/engine"
)

// find limits (agent-core.md §4.7).
const (
	findDefaultLimit = 1000
	findTimeout      = 5 * time.Second
)

type findTool struct {
	spec
	o       Options
	timeout time.Duration // findTimeout; shortened by tests
}

// NewFind returns the find tool: files matching a glob (with `**`),
// honouring .gitignore, newest first.
func NewFind(o Options) engine.Tool { return &findTool{spec: findSpec, o: o, timeout: findTimeout} }

var findSpec = spec{
	name:        "find",
	concurrency: engine.Shared,
	idempotent:  true,
	description: "Find files by glob pattern, e.g. *.go, src/**/*.ts or docs/*.md. A pattern without a slash matches file names " +
		"at any depth. Respects .gitignore; lists paths relative to the working directory, most recently modified first " +
		"(1000 at most by default).",
	schema: []byte(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Glob pattern; may start with a base directory, e.g. src/**/*.ts"},` +
		`"hidden":{"type":"boolean","description":"Include dot-files and dot-directories (default true)"},` +
		`"limit":{"type":"integer","description":"Maximum number of results (default 1000)"}` +
		`},"required":["pattern"],"additionalProperties":false}`),
}

type findArgs struct {
	Pattern string `json:"pattern"`
	Hidden  *bool  `json:"hidden"`
	Limit   *int   `json:"limit"`
}

type findDetails struct {
	ScopePath          string   `json:"scopePath"`
	FileCount          int      `json:"fileCount"`
	Files              []string `json:"files"`
	Truncated          bool     `json:"truncated"`
	ResultLimitReached bool     `json:"resultLimitReached,omitempty"`
	IgnoredGitignore   bool     `json:"ignoredGitignore,omitempty"`
}

type foundFile struct {
	rel   string
	mtime time.Time
}

func (t *findTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a findArgs
	if r, ok := decodeArgs("find", call.Arguments, &a); !ok {
		return r, nil
	}
	pattern := strings.TrimSpace(a.Pattern)
	if pattern == "" {
		return failResult("Pattern must not be empty"), nil
	}
	limit := findDefaultLimit
	if a.Limit != nil {
		if *a.Limit <= 0 {
			return failResult("Limit must be a positive number"), nil
		}
		limit = *a.Limit
	}
	hidden := a.Hidden == nil || *a.Hidden

	// An existing plain path is its own answer.
	if fi, err := os.Stat(resolveCwd(t.o.Cwd, pattern)); err == nil && !fi.IsDir() {
		p := displayPath(t.o.Cwd, resolveCwd(t.o.Cwd, pattern))
		return textResult(p, mustJSON(findDetails{ScopePath: p, FileCount: 1, Files: []string{p}})), nil
	}

	slashed := filepath.ToSlash(pattern)
	base, glob := doublestar.SplitPattern(slashed)
	if !strings.ContainsAny(slashed, "*?[{") {
		// A directory: list everything below it.
		base, glob = slashed, "**"
	}
	if base == "." && strings.HasPrefix(slashed, "/") {
		base = "/"
	}
	if !strings.Contains(slashed, "/") && !strings.HasPrefix(glob, "**") {
		// A pattern without a slash matches file names at any depth; one
		// with a base directory (src/*.ts) is anchored there, as the
		// original's parseFindPattern does.
		glob = "**/" + glob
	}
	scope := resolveCwd(t.o.Cwd, base)
	if scope == "/" {
		return failResult("Searching from root directory '/' is not allowed"), nil
	}
	if !doublestar.ValidatePattern(glob) {
		return failResult("Invalid glob pattern: " + pattern), nil
	}
	if fi, err := os.Stat(scope); err != nil || !fi.IsDir() {
		return failResult("Path not found: " + base), nil
	}
	d := findDetails{ScopePath: displayPath(t.o.Cwd, scope), Files: []string{}}

	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	found, err := t.walk(ctx, scope, glob, hidden, true)
	if err == nil && len(found) == 0 {
		// A gitignored file is still better than no answer.
		found, err = t.walk(ctx, scope, glob, hidden, false)
		d.IgnoredGitignore = len(found) > 0
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return failResult(fmt.Sprintf("find timed out after %s", t.timeout)), nil
		}
		if ctx.Err() != nil {
			return engine.ToolResult{}, ctx.Err()
		}
		return failResult(describeFSError(err)), nil
	}
	if len(found) == 0 {
		return warnResult("No files found matching pattern", mustJSON(d)), nil
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].mtime.Equal(found[j].mtime) {
			return found[i].mtime.After(found[j].mtime)
		}
		return found[i].rel < found[j].rel
	})
	total := len(found)
	if total > limit {
		found = found[:limit]
		d.ResultLimitReached, d.Truncated = true, true
	}
	lines := make([]string, len(found))
	for i, f := range found {
		lines[i] = f.rel
	}
	d.Files, d.FileCount = lines, len(lines)
	out := strings.Join(lines, "\n")
	if d.ResultLimitReached {
		out += fmt.Sprintf("\n\n[%d results limit reached. Use limit=%d for more]", limit, limit*2)
	}
	return textResult(out, mustJSON(d)), nil
}

// walk lists the files under scope whose path relative to it matches glob.
func (t *findTool) walk(ctx context.Context, scope, glob string, hidden, useIgnore bool) ([]foundFile, error) {
	var out []foundFile
	err := walkFiles(ctx, scope, useIgnore, hidden, func(p string, de fs.DirEntry) error {
		rel, err := filepath.Rel(scope, p)
		if err != nil {
			return nil
		}
		if ok, _ := doublestar.Match(glob, filepath.ToSlash(rel)); !ok {
			return nil
		}
		var mtime time.Time
		if fi, err := de.Info(); err == nil {
			mtime = fi.ModTime()
		}
		out = append(out, foundFile{rel: displayPath(t.o.Cwd, p), mtime: mtime})
		return nil
	})
	return out, err
}
