package tools

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/xcsh-go/xcsh/engine"
)

// grep limits (agent-core.md §4.6).
const (
	grepDefaultLimit  = 20
	grepDefaultCtx    = 3
	grepMaxFetch      = 2000
	grepFetchMultiple = 5
	// grepMaxContext caps pre and post: the lines before a match are held
	// in a ring while streaming, which must stay small whatever the file.
	grepMaxContext = 1000
)

// grepTypes maps ripgrep's most common file-type names to the globs they
// stand for; an unknown type is an error rather than a silent "no match".
var grepTypes = map[string][]string{
	"go":   {"*.go"},
	"js":   {"*.js", "*.mjs", "*.cjs", "*.jsx"},
	"ts":   {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"py":   {"*.py", "*.pyi"},
	"rust": {"*.rs"},
	"c":    {"*.c", "*.h"},
	"cpp":  {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"},
	"java": {"*.java"},
	"rb":   {"*.rb"},
	"sh":   {"*.sh", "*.bash", "*.zsh"},
	"json": {"*.json"},
	"yaml": {"*.yaml", "*.yml"},
	"toml": {"*.toml"},
	"md":   {"*.md", "*.markdown"},
	"html": {"*.html", "*.htm"},
	"css":  {"*.css", "*.scss", "*.less"},
	"sql":  {"*.sql"},
}

type grepTool struct {
	spec
	o Options
}

// NewGrep returns the grep tool: a regular-expression search over files
// that honours .gitignore, with context lines and output grouped by file.
func NewGrep(o Options) engine.Tool { return &grepTool{spec: grepSpec, o: o} }

var grepSpec = spec{
	name:        "grep",
	concurrency: engine.Shared,
	idempotent:  true,
	description: "Search file contents with a regular expression (Go RE2 syntax). Respects .gitignore and searches hidden files; " +
		"binary files are skipped. Output is grouped by file, `N:text` for a matching line and `N-text` for context. " +
		"Returns 20 matches by default; use limit and offset to page.",
	schema: []byte(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Regular expression to search for"},` +
		`"path":{"type":"string","description":"File or directory to search (default: working directory); may be a glob or a comma-separated list"},` +
		`"glob":{"type":"string","description":"Only search files whose path matches this glob, e.g. *.go or src/**/*.ts"},` +
		`"type":{"type":"string","description":"Only search files of this type (go, js, ts, py, rust, c, cpp, java, rb, sh, json, yaml, toml, md, html, css, sql)"},` +
		`"i":{"type":"boolean","description":"Case-insensitive search"},` +
		`"pre":{"type":"integer","minimum":0,"description":"Context lines before each match (default 3)"},` +
		`"post":{"type":"integer","minimum":0,"description":"Context lines after each match (default 3)"},` +
		`"multiline":{"type":"boolean","description":"Let the pattern span lines (automatic when it contains a newline)"},` +
		`"gitignore":{"type":"boolean","description":"Respect .gitignore files (default true)"},` +
		`"limit":{"type":"integer","description":"Maximum number of matches to return (default 20)"},` +
		`"offset":{"type":"integer","description":"Number of matches to skip, for paging"}` +
		`},"required":["pattern"],"additionalProperties":false}`),
}

type grepArgs struct {
	Pattern   string `json:"pattern"`
	Path      string `json:"path"`
	Glob      string `json:"glob"`
	Type      string `json:"type"`
	I         bool   `json:"i"`
	Pre       *int   `json:"pre"`
	Post      *int   `json:"post"`
	Multiline *bool  `json:"multiline"`
	Gitignore *bool  `json:"gitignore"`
	Limit     *int   `json:"limit"`
	Offset    *int   `json:"offset"`
}

type grepFileCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

type grepDetails struct {
	ScopePath          string          `json:"scopePath"`
	MatchCount         int             `json:"matchCount"`
	FileCount          int             `json:"fileCount"`
	Files              []string        `json:"files"`
	FileMatches        []grepFileCount `json:"fileMatches"`
	Truncated          bool            `json:"truncated"`
	MatchLimitReached  bool            `json:"matchLimitReached,omitempty"`
	ResultLimitReached bool            `json:"resultLimitReached,omitempty"`
	LinesTruncated     bool            `json:"linesTruncated,omitempty"`
}

// grepFile is one searched file with its matching line numbers (1-based,
// ascending) and the lines around them that context output may show. Only
// those lines are kept, each cut to just over GrepMaxColumn, so memory
// follows the matches, not the file.
type grepFile struct {
	abs     string
	rel     string // relative to the scope root, slash-separated
	nlines  int    // lines read; the whole file unless the search stopped early
	kept    map[int]string
	matches []int
}

func (t *grepTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a grepArgs
	if r, ok := decodeArgs("grep", call.Arguments, &a); !ok {
		return r, nil
	}
	q, problem := parseGrepQuery(a)
	if problem != "" {
		return failResult(problem), nil
	}
	scopeArg := a.Path
	if strings.TrimSpace(scopeArg) == "" {
		scopeArg = "."
	}
	scopes, pathGlob, singleFile, res, ok := t.resolveScope(scopeArg)
	if !ok {
		return res, nil
	}
	d := grepDetails{ScopePath: displayPath(t.o.Cwd, resolveCwd(t.o.Cwd, scopeArg)), Files: []string{}, FileMatches: []grepFileCount{}}
	if len(scopes) > 1 || pathGlob != "" {
		d.ScopePath = scopeArg
	}
	w := grepWalk{q: &q, pathGlob: pathGlob, root: scopes[0], fetch: q.fetch()}
	if len(scopes) > 1 {
		w.root = t.o.Cwd
	}
	err := w.search(ctx, scopes)
	d.MatchLimitReached = w.limitReached
	if ctx.Err() != nil {
		return engine.ToolResult{}, ctx.Err()
	}
	if err != nil {
		return failResult(describeFSError(err)), nil
	}
	if w.total == 0 {
		return warnResult("No matches found", mustJSON(d)), nil
	}
	picked := pickRoundRobin(w.files, q.offset, q.limit)
	d.ResultLimitReached = w.total > q.offset+q.limit
	out := t.render(&d, w.files, picked, singleFile, q.pre, q.post)
	out += grepNotes(&d, q.limit) // before the check below: it marks d truncated
	if d.MatchCount == 0 {
		// Every match was skipped by the offset.
		return warnResult(fmt.Sprintf("No matches found (offset %d is past the %d matches)", q.offset, w.total), mustJSON(d)), nil
	}
	return textResult(out, mustJSON(d)), nil
}

// grepQuery is what the arguments ask for, checked and with the defaults
// filled in.
type grepQuery struct {
	re                       *regexp.Regexp
	multiline                bool
	glob                     string   // "" for any file
	typeGlobs                []string // nil for any type
	gitignore                bool
	offset, limit, pre, post int
}

// parseGrepQuery checks the arguments, in the order the original reports
// their problems; a problem is the text of the failed result.
func parseGrepQuery(a grepArgs) (q grepQuery, problem string) {
	if a.Pattern == "" {
		return q, "Pattern must not be empty"
	}
	q.limit = grepDefaultLimit
	if a.Offset != nil {
		if *a.Offset < 0 {
			return q, "Offset must be a non-negative number"
		}
		q.offset = *a.Offset
	}
	if a.Limit != nil {
		if *a.Limit < 0 {
			return q, "Limit must be a non-negative number"
		}
		if *a.Limit > 0 {
			q.limit = *a.Limit
		}
	}
	q.pre, q.post = grepDefaultCtx, grepDefaultCtx
	if a.Pre != nil && *a.Pre >= 0 {
		q.pre = *a.Pre
	}
	if a.Post != nil && *a.Post >= 0 {
		q.post = *a.Post
	}
	q.pre, q.post = min(q.pre, grepMaxContext), min(q.post, grepMaxContext)
	q.multiline = strings.Contains(a.Pattern, "\n") || strings.Contains(a.Pattern, `\n`)
	if a.Multiline != nil {
		q.multiline = *a.Multiline
	}
	expr := a.Pattern
	if q.multiline {
		expr = "(?m)" + expr
	}
	if a.I {
		expr = "(?i)" + expr
	}
	var err error
	if q.re, err = regexp.Compile(expr); err != nil {
		return q, fmt.Sprintf("Invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if a.Type != "" {
		g, ok := grepTypes[strings.ToLower(a.Type)]
		if !ok {
			return q, fmt.Sprintf("Unknown file type: %s", a.Type)
		}
		q.typeGlobs = g
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return q, fmt.Sprintf("Invalid glob: %s", a.Glob)
	}
	q.glob = a.Glob
	q.gitignore = a.Gitignore == nil || *a.Gitignore
	return q, ""
}

// fetch is how many matches the walk collects before it stops: a few
// times the page, so the round-robin pick spreads over files, within
// grepMaxFetch but never less than the page.
func (q *grepQuery) fetch() int {
	n := min((q.offset+q.limit)*grepFetchMultiple, grepMaxFetch)
	return max(n, q.offset+q.limit)
}

// grepWalk collects the matching files of the scopes, in walk order,
// until it has fetch matches.
type grepWalk struct {
	q            *grepQuery
	root         string // what file paths are shown relative to
	pathGlob     string // the path argument's glob part; "" for none
	fetch        int
	files        []*grepFile
	total        int  // matches collected
	limitReached bool // the walk stopped at fetch matches
}

// search walks each scope (a file, or a directory honouring .gitignore
// as asked) and searches its files. It returns ctx's error when ctx
// ended, or a scope that could not be walked.
func (w *grepWalk) search(ctx context.Context, scopes []string) error {
	for _, s := range scopes {
		var err error
		if fi, statErr := os.Stat(s); statErr == nil && !fi.IsDir() {
			err = w.file(ctx, s)
		} else {
			err = walkFiles(ctx, s, w.q.gitignore, true, func(p string, _ fs.DirEntry) error { return w.file(ctx, p) })
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == fs.SkipAll {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// file searches one file the filters let through; fs.SkipAll ends the
// walk once fetch matches are in.
func (w *grepWalk) file(ctx context.Context, abs string) error {
	if w.total >= w.fetch {
		w.limitReached = true
		return fs.SkipAll
	}
	rel := filepath.ToSlash(strings.TrimPrefix(displayRel(w.root, abs), "./"))
	if w.pathGlob != "" && !globMatch(w.pathGlob, rel) {
		return nil
	}
	if w.q.glob != "" && !globMatch(w.q.glob, rel) {
		return nil
	}
	if w.q.typeGlobs != nil && !anyGlob(w.q.typeGlobs, rel) {
		return nil
	}
	f, more, err := grepSearch(ctx, abs, w.q.re, w.q.multiline, w.fetch-w.total, w.q.pre, w.q.post)
	if isCancel(err) {
		return err
	}
	if more {
		w.limitReached = true
	}
	if f == nil {
		return nil
	}
	f.rel = rel
	w.total += len(f.matches)
	w.files = append(w.files, f)
	return nil
}

// render writes the picked matches grouped by file, and fills in d's
// files and counts. A group is a file of the scope root, or a directory
// with its files; groups are separated by a blank line. A directory's
// files stay in one group (in order of first appearance, as the
// original's grouping map does) even when the walk visits a subdirectory
// between them. A single file searched gets no headings.
func (t *grepTool) render(d *grepDetails, files []*grepFile, picked map[*grepFile][]int, singleFile bool, pre, post int) string {
	var b strings.Builder
	groups, byGroup := grepGroups(files, picked)
	for _, key := range groups {
		for i, f := range byGroup[key] {
			sel := picked[f]
			d.MatchCount += len(sel)
			d.Files = append(d.Files, displayPath(t.o.Cwd, f.abs))
			d.FileMatches = append(d.FileMatches, grepFileCount{Path: displayPath(t.o.Cwd, f.abs), Count: len(sel)})
			if !singleFile {
				if i == 0 && b.Len() > 0 {
					b.WriteString("\n")
				}
				switch {
				case strings.HasPrefix(key, "\x00"):
					fmt.Fprintf(&b, "# %s\n", path.Base(f.rel))
				case i == 0:
					fmt.Fprintf(&b, "# %s\n## └─ %s\n", key, path.Base(f.rel))
				default:
					fmt.Fprintf(&b, "## └─ %s\n", path.Base(f.rel))
				}
			}
			if writeGrepLines(&b, f, sel, pre, post) {
				d.LinesTruncated = true
			}
		}
	}
	d.FileCount = len(d.Files)
	return strings.TrimRight(b.String(), "\n")
}

// grepGroups puts the files with picked matches in their groups: the
// group keys in order of first appearance, and each group's files. A file
// of the scope root is a group of its own, keyed "\x00" + its name.
func grepGroups(files []*grepFile, picked map[*grepFile][]int) (keys []string, byGroup map[string][]*grepFile) {
	byGroup = map[string][]*grepFile{}
	for _, f := range files {
		if len(picked[f]) == 0 {
			continue
		}
		key := "\x00" + f.rel
		if dir := path.Dir(f.rel); dir != "." {
			key = dir
		}
		if _, ok := byGroup[key]; !ok {
			keys = append(keys, key)
		}
		byGroup[key] = append(byGroup[key], f)
	}
	return keys, byGroup
}

// grepNotes marks d truncated where it is and returns the bracketed note
// that says why ("" for none): one bracket, parts joined by ". "
// (agent-core.md §4.1).
func grepNotes(d *grepDetails, limit int) string {
	var notes []string
	if d.ResultLimitReached || d.MatchLimitReached {
		d.Truncated = true
		notes = append(notes, fmt.Sprintf("%d matches limit reached. Use limit=%d for more", limit, limit*2))
	}
	if d.LinesTruncated {
		d.Truncated = true
		notes = append(notes, fmt.Sprintf("Some lines truncated to %d chars", GrepMaxColumn))
	}
	if len(notes) == 0 {
		return ""
	}
	return "\n\n[" + strings.Join(notes, ". ") + "]"
}

// resolveScope turns grep's path argument into the roots to search: one
// path, a comma-separated list of paths, or a glob whose static prefix is
// the root and whose remainder filters the files.
func (t *grepTool) resolveScope(arg string) (roots []string, glob string, singleFile bool, res engine.ToolResult, ok bool) {
	abs := resolveCwd(t.o.Cwd, arg)
	if fi, err := os.Stat(abs); err == nil {
		if err := checkPath(abs, fi, true); err != nil {
			return nil, "", false, failResult(fmt.Sprintf("Cannot search %s: %s", arg, describeFSError(err))), false
		}
		return []string{abs}, "", !fi.IsDir(), engine.ToolResult{}, true
	}
	if strings.Contains(arg, ",") {
		for _, p := range strings.Split(arg, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			q := resolveCwd(t.o.Cwd, p)
			fi, err := os.Stat(q)
			if err != nil {
				return nil, "", false, failResult("Path not found: " + p), false
			}
			if err := checkPath(q, fi, true); err != nil {
				return nil, "", false, failResult(fmt.Sprintf("Cannot search %s: %s", p, describeFSError(err))), false
			}
			roots = append(roots, q)
		}
		if len(roots) > 0 {
			return roots, "", false, engine.ToolResult{}, true
		}
	}
	if strings.ContainsAny(arg, "*?[{") {
		base, pat := doublestar.SplitPattern(filepath.ToSlash(arg))
		q := resolveCwd(t.o.Cwd, base)
		if fi, err := os.Stat(q); err == nil && fi.IsDir() && doublestar.ValidatePattern(pat) {
			return []string{q}, pat, false, engine.ToolResult{}, true
		}
	}
	return nil, "", false, failResult("Path not found: " + arg), false
}

// displayRel is abs relative to root, or abs itself outside it.
func displayRel(root, abs string) string {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." {
		return filepath.Base(abs)
	}
	return rel
}

// globMatch matches a glob against a slash path: a pattern without a
// slash matches the base name at any depth, as ripgrep's --glob does.
func globMatch(pattern, rel string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := doublestar.Match(pattern, path.Base(rel))
		return ok
	}
	ok, _ := doublestar.Match(pattern, rel)
	return ok
}

func anyGlob(patterns []string, rel string) bool {
	for _, p := range patterns {
		if globMatch(p, rel) {
			return true
		}
	}
	return false
}

// grepSearch returns the file's matching lines, at most max of them, with
// the pre and post context lines they need, or nil when it has none, is
// binary, is not a regular file or cannot be read; more reports that the
// file had matches beyond max. A line search streams the file; a
// multiline pattern needs the whole text, so it skips files over
// maxWholeFile. err is set only when ctx ended the read.
func grepSearch(ctx context.Context, abs string, re *regexp.Regexp, multiline bool, max, pre, post int) (f *grepFile, more bool, err error) {
	file, fi, err := openRegular(abs)
	if err != nil {
		return nil, false, nil
	}
	defer file.Close()
	br := bufio.NewReaderSize(newCtxReader(ctx, file), readChunk)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return nil, false, cancelOnly(err)
	}
	if isBinary(head) {
		return nil, false, nil
	}
	f = &grepFile{abs: abs, kept: map[int]string{}}
	if multiline {
		if fi.Size() > maxWholeFile {
			return nil, false, nil
		}
		data, err := io.ReadAll(io.LimitReader(br, maxWholeFile))
		if err != nil {
			return nil, false, cancelOnly(err)
		}
		more = grepMultiline(f, string(data), re, max, pre, post)
	} else {
		more, err = grepLines(f, br, re, max, pre, post)
		if err != nil {
			return nil, false, cancelOnly(err)
		}
	}
	if len(f.matches) == 0 {
		return nil, more, nil
	}
	return f, more, nil
}

// cancelOnly keeps a context error and drops any other: an unreadable
// file is skipped, not fatal.
func cancelOnly(err error) error {
	if isCancel(err) {
		return err
	}
	return nil
}

// grepShown is the part of a line kept for output: one byte past
// GrepMaxColumn, so writeGrepLines still sees that it was cut.
func grepShown(line []byte) string {
	return string(line[:min(len(line), GrepMaxColumn+1)])
}

// grepLines matches line by line, keeping the last pre lines in a ring so
// a match can still show its leading context. It stops once a match past
// max is seen and the post context of the last kept match is read.
func grepLines(f *grepFile, br *bufio.Reader, re *regexp.Regexp, max, pre, post int) (more bool, err error) {
	type held struct {
		n    int    // line number; 0 for an empty slot
		text []byte // reused: the ring allocates only while it fills
	}
	var (
		lr        lineReader
		ring      = make([]held, pre)
		keepUntil int
	)
	for {
		// A line longer than maxWholeFile is matched on its first
		// maxWholeFile bytes: the buffer must not follow the line.
		line, _, ok, err := lr.next(br, maxWholeFile)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
		f.nlines++
		n := f.nlines
		matched := len(f.matches) <= max && re.Match(line)
		if matched {
			f.matches = append(f.matches, n)
		}
		if matched && len(f.matches) <= max {
			for _, h := range ring {
				if h.n > 0 && h.n >= n-pre {
					if _, ok := f.kept[h.n]; !ok {
						f.kept[h.n] = string(h.text)
					}
				}
			}
			keepUntil = n + post
		}
		if n <= keepUntil {
			if _, ok := f.kept[n]; !ok {
				f.kept[n] = grepShown(line)
			}
		}
		if len(f.matches) > max && n >= keepUntil {
			f.matches = f.matches[:max]
			return true, nil
		}
		if pre > 0 {
			h := &ring[n%pre]
			h.n, h.text = n, append(h.text[:0], line[:min(len(line), GrepMaxColumn+1)]...)
		}
	}
}

// grepMultiline matches over the whole text; every line a match spans
// counts as a matching line.
func grepMultiline(f *grepFile, text string, re *regexp.Regexp, limit, pre, post int) (more bool) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	f.nlines = len(lines)
	starts := lineStarts(text)
	seen := map[int]bool{}
	for _, loc := range re.FindAllStringIndex(text, -1) {
		first := lineAt(starts, loc[0])
		last := first
		if loc[1] > loc[0] {
			last = lineAt(starts, loc[1]-1)
		}
		for n := first; n <= last && n <= len(lines); n++ {
			if !seen[n] {
				seen[n] = true
				f.matches = append(f.matches, n)
			}
		}
		if len(f.matches) > limit {
			break
		}
	}
	sort.Ints(f.matches)
	if len(f.matches) > limit {
		f.matches, more = f.matches[:limit], true
	}
	for _, m := range f.matches {
		for n := max(m-pre, 1); n <= min(m+post, len(lines)); n++ {
			if _, ok := f.kept[n]; !ok {
				f.kept[n] = grepShown([]byte(lines[n-1]))
			}
		}
	}
	return more
}

func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineAt is the 1-based line holding byte offset off.
func lineAt(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}

// pickRoundRobin chooses which matches to show: the first match of each
// file, then the second of each, and so on, so one noisy file cannot hide
// the others; offset and limit apply to that order.
func pickRoundRobin(files []*grepFile, offset, limit int) map[*grepFile][]int {
	picked := map[*grepFile][]int{}
	n := 0
	for round := 0; n < offset+limit; round++ {
		any := false
		for _, f := range files {
			if round >= len(f.matches) {
				continue
			}
			any = true
			if n >= offset {
				picked[f] = append(picked[f], f.matches[round])
			}
			n++
			if n >= offset+limit {
				break
			}
		}
		if !any {
			break
		}
	}
	for _, sel := range picked {
		sort.Ints(sel)
	}
	return picked
}

// writeGrepLines writes the selected matches of f with their context,
// line numbers right-aligned to a common width; it reports whether a line
// had to be cut.
func writeGrepLines(b *strings.Builder, f *grepFile, sel []int, pre, post int) bool {
	isMatch := map[int]bool{}
	for _, m := range sel {
		isMatch[m] = true
	}
	var show []int
	last := 0
	for _, m := range sel {
		from, to := m-pre, m+post
		if from < 1 {
			from = 1
		}
		if to > f.nlines {
			to = f.nlines
		}
		if from <= last {
			from = last + 1
		}
		for n := from; n <= to; n++ {
			show = append(show, n)
		}
		if to > last {
			last = to
		}
	}
	width := len(strconv.Itoa(last))
	cut := false
	for _, n := range show {
		line := f.kept[n]
		if len(line) > GrepMaxColumn {
			line = cutUTF8(line, GrepMaxColumn)
			cut = true
		}
		sep := "-"
		if isMatch[n] {
			sep = ":"
		}
		fmt.Fprintf(b, "%*d%s%s\n", width, n, sep, line)
	}
	return cut
}
