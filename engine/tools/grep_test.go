package tools

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// runTool runs one call of tool under ctx.
func runTool(ctx context.Context, tool engine.Tool, args string) (engine.ToolResult, error) {
	return tool.Run(ctx, engine.ToolCall{ID: "t1", Name: tool.Name(), Arguments: []byte(args)}, nil)
}

// detailStrings returns details[key] as a list of strings.
func detailStrings(t *testing.T, res engine.ToolResult, key string) []string {
	t.Helper()
	raw, _ := details(t, res)[key].([]any)
	out := []string{}
	for _, v := range raw {
		out = append(out, v.(string))
	}
	return out
}

func TestGrepOutputFormat(t *testing.T) {
	t.Parallel()
	nested := map[string]string{
		"a.go":         "package a\n\n// TODO one\nfunc A() {}\n",
		"pkg/b.go":     "package b\n// TODO two\n",
		"pkg/sub/d.go": "// TODO four\n",
		"pkg/z.go":     "package z\n// TODO three\n",
		"z.txt":        "TODO root\n",
	}
	padded := strings.Replace(readTestLines(12), "l10\n", "TODO ten\n", 1)
	tests := []struct {
		name      string
		files     map[string]string
		args      string
		want      string
		wantFiles []string // details.files, in output order; nil: not checked
	}{
		{
			name:  "pre and post context",
			files: map[string]string{"f.txt": "l1\nl2\nTODO\nl4\nl5\nl6\n"},
			args:  `{"pattern":"TODO","pre":1,"post":2}`,
			want:  "# f.txt\n2-l2\n3:TODO\n4-l4\n5-l5",
		},
		{
			name:  "default context is 3/3, clipped at the file's edges",
			files: map[string]string{"f.txt": "TODO\nl2\nl3\nl4\nl5\n"},
			args:  `{"pattern":"TODO"}`,
			want:  "# f.txt\n1:TODO\n2-l2\n3-l3\n4-l4",
		},
		{
			name:  "overlapping context is shown once",
			files: map[string]string{"f.txt": "a\nTODO 1\nb\nTODO 2\nc\n"},
			args:  `{"pattern":"TODO","pre":1,"post":1}`,
			want:  "# f.txt\n1-a\n2:TODO 1\n3-b\n4:TODO 2\n5-c",
		},
		{
			name:  "line numbers padded to a common width",
			files: map[string]string{"f.txt": padded},
			args:  `{"pattern":"TODO","pre":2,"post":1}`,
			want:  "# f.txt\n 8-l8\n 9-l9\n10:TODO ten\n11-l11",
		},
		{
			name:  "groups: root files, then one group per directory",
			files: nested,
			args:  `{"pattern":"TODO","pre":0,"post":0}`,
			want: "# a.go\n3:// TODO one\n\n" +
				"# pkg\n## └─ b.go\n2:// TODO two\n## └─ z.go\n2:// TODO three\n\n" +
				"# pkg/sub\n## └─ d.go\n1:// TODO four\n\n" +
				"# z.txt\n1:TODO root",
			wantFiles: []string{"a.go", "pkg/b.go", "pkg/z.go", "pkg/sub/d.go", "z.txt"},
		},
		{
			name:      "directory scope: names relative to it",
			files:     nested,
			args:      `{"pattern":"TODO","path":"pkg","pre":0,"post":0}`,
			want:      "# b.go\n2:// TODO two\n\n# sub\n## └─ d.go\n1:// TODO four\n\n# z.go\n2:// TODO three",
			wantFiles: []string{"pkg/b.go", "pkg/sub/d.go", "pkg/z.go"},
		},
		{
			name:      "single file scope: just the lines",
			files:     nested,
			args:      `{"pattern":"TODO","path":"pkg/b.go","pre":1,"post":0}`,
			want:      "1-package b\n2:// TODO two",
			wantFiles: []string{"pkg/b.go"},
		},
		{
			name:      "comma-separated list of a file and a directory",
			files:     nested,
			args:      `{"pattern":"TODO","path":"a.go, pkg/sub","pre":0,"post":0}`,
			want:      "# a.go\n3:// TODO one\n\n# pkg/sub\n## └─ d.go\n1:// TODO four",
			wantFiles: []string{"a.go", "pkg/sub/d.go"},
		},
		{
			name:      "glob path",
			files:     nested,
			args:      `{"pattern":"TODO","path":"pkg/b*.go","pre":0,"post":0}`,
			want:      "# b.go\n2:// TODO two",
			wantFiles: []string{"pkg/b.go"},
		},
		{
			name:  "case-insensitive",
			files: map[string]string{"f.txt": "Hello\nhello\nHELLO\nbye\n"},
			args:  `{"pattern":"hello","i":true,"pre":0,"post":0}`,
			want:  "# f.txt\n1:Hello\n2:hello\n3:HELLO",
		},
		{
			name:  "case-sensitive by default",
			files: map[string]string{"f.txt": "Hello\nhello\nHELLO\nbye\n"},
			args:  `{"pattern":"hello","pre":0,"post":0}`,
			want:  "# f.txt\n2:hello",
		},
		{
			name:  "CRLF line endings",
			files: map[string]string{"f.txt": "one\r\nTODO\r\nthree\r\n"},
			args:  `{"pattern":"TODO$","pre":1,"post":1}`,
			want:  "# f.txt\n1-one\n2:TODO\n3-three",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, tt.files)
			res := call(t, NewGrep(Options{Cwd: dir}), tt.args)
			wantText(t, res, tt.want, false, false)
			if tt.wantFiles != nil {
				if got := detailStrings(t, res, "files"); !reflect.DeepEqual(got, tt.wantFiles) {
					t.Errorf("details.files = %q, want %q", got, tt.wantFiles)
				}
			}
		})
	}
}

func TestGrepDetails(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "x\nx\n", "sub/b.txt": "x\n", "c.txt": "none\n"})
	res := call(t, NewGrep(Options{Cwd: dir}), `{"pattern":"x","pre":0,"post":0}`)
	d := details(t, res)
	if d["scopePath"] != "." || d["matchCount"] != 3.0 || d["fileCount"] != 2.0 || d["truncated"] != false {
		t.Errorf("details %s", res.Details)
	}
	fm, _ := d["fileMatches"].([]any)
	want := []any{map[string]any{"path": "a.txt", "count": 2.0}, map[string]any{"path": "sub/b.txt", "count": 1.0}}
	if !reflect.DeepEqual(fm, want) {
		t.Errorf("fileMatches %v", fm)
	}
	for _, k := range []string{"matchLimitReached", "resultLimitReached", "linesTruncated"} {
		if _, ok := d[k]; ok {
			t.Errorf("%s present without a limit: %s", k, res.Details)
		}
	}
	// A missed search still has well-formed (empty) lists.
	miss := call(t, NewGrep(Options{Cwd: dir}), `{"pattern":"absent","path":"sub"}`)
	if string(miss.Details) != `{"scopePath":"sub","matchCount":0,"fileCount":0,"files":[],"fileMatches":[],"truncated":false}` {
		t.Errorf("no-match details %s", miss.Details)
	}
}

// grepFilterTree has one "needle" line per file, so the files a search
// lists say which files it looked at.
func grepFilterTree(t *testing.T) string {
	return tree(t, map[string]string{
		".gitignore":       "ignored/\n*.log\n",
		".git/config":      "needle in git internals\n",
		".env":             "needle hidden file\n",
		".config/c.yaml":   "needle hidden dir\n",
		"CAPS.md":          "NEEDLE upper case\n",
		"app.log":          "needle ignored by pattern\n",
		"ignored/x.go":     "needle ignored dir\n",
		"bin.dat":          "needle\x00binary\n",
		"late-nul.txt":     "needle before a late NUL\n" + strings.Repeat("x", 9000) + "\x00\n",
		"keep.go":          "needle go\n",
		"sub/deep/keep.go": "needle deep go\n",
		"web/b.js":         "needle js\n",
	})
}

func TestGrepFilters(t *testing.T) {
	t.Parallel()
	dir := grepFilterTree(t)
	grep := NewGrep(Options{Cwd: dir})
	visible := []string{".config/c.yaml", ".env", "keep.go", "late-nul.txt", "sub/deep/keep.go", "web/b.js"}
	tests := []struct {
		name, extra string // extra arguments after the pattern
		want        []string
	}{
		{"gitignore respected, hidden searched, binary and .git skipped", ``, visible},
		{"gitignore:false", `,"gitignore":false`,
			[]string{".config/c.yaml", ".env", "app.log", "ignored/x.go", "keep.go", "late-nul.txt", "sub/deep/keep.go", "web/b.js"}},
		{"gitignore:true", `,"gitignore":true`, visible},
		{"case-insensitive", `,"i":true`,
			[]string{".config/c.yaml", ".env", "CAPS.md", "keep.go", "late-nul.txt", "sub/deep/keep.go", "web/b.js"}},
		{"glob without slash matches names at any depth", `,"glob":"*.go"`, []string{"keep.go", "sub/deep/keep.go"}},
		{"glob with a directory", `,"glob":"sub/**/*.go"`, []string{"sub/deep/keep.go"}},
		{"glob with braces", `,"glob":"*.{yaml,js}"`, []string{".config/c.yaml", "web/b.js"}},
		{"type", `,"type":"go"`, []string{"keep.go", "sub/deep/keep.go"}},
		{"type is case-insensitive", `,"type":"YAML"`, []string{".config/c.yaml"}},
		{"type and glob together", `,"type":"go","glob":"sub/**"`, []string{"sub/deep/keep.go"}},
		{"type with gitignore off", `,"type":"go","gitignore":false`, []string{"ignored/x.go", "keep.go", "sub/deep/keep.go"}},
		{"ignored directory as the path, gitignore off", `,"path":"ignored","gitignore":false`, []string{"ignored/x.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := `{"pattern":"needle","pre":0,"post":0` + tt.extra + `}`
			res := call(t, grep, args)
			if res.IsError || res.IsWarning {
				t.Fatalf("%s: %q", args, text(res))
			}
			if got := detailStrings(t, res, "files"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s: files %q, want %q", args, got, tt.want)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n"})
	grep := NewGrep(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		prefix           bool // want is a prefix of the text
		isErr, isWarn    bool
	}{
		{"empty pattern", `{"pattern":""}`, "Pattern must not be empty", false, true, false},
		{"missing pattern", `{}`, "Pattern must not be empty", false, true, false},
		{"invalid regexp", `{"pattern":"a(b"}`, "Invalid regular expression: missing closing ): `a(b`", false, true, false},
		{"invalid repetition", `{"pattern":"*a"}`, "Invalid regular expression: ", true, true, false},
		{"negative offset", `{"pattern":"a","offset":-1}`, "Offset must be a non-negative number", false, true, false},
		{"negative limit", `{"pattern":"a","limit":-1}`, "Limit must be a non-negative number", false, true, false},
		{"missing path", `{"pattern":"a","path":"nope"}`, "Path not found: nope", false, true, false},
		{"missing path in a list", `{"pattern":"a","path":"a.txt, nope"}`, "Path not found: nope", false, true, false},
		{"glob path under a missing directory", `{"pattern":"a","path":"nope/*.txt"}`, "Path not found: nope/*.txt", false, true, false},
		{"unknown type", `{"pattern":"a","type":"cobol"}`, "Unknown file type: cobol", false, true, false},
		{"invalid glob", `{"pattern":"a","glob":"["}`, "Invalid glob: [", false, true, false},
		{"wrong argument type", `{"pattern":5}`, "Invalid grep arguments: ", true, true, false},
		{"no match is a warning", `{"pattern":"gamma"}`, "No matches found", false, false, true},
		{"no match in a single file", `{"pattern":"beta","path":"a.txt"}`, "No matches found", false, false, true},
		{"no match when the glob excludes everything", `{"pattern":"alpha","glob":"*.go"}`, "No matches found", false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, grep, tt.args)
			got := text(res)
			if tt.prefix && !strings.HasPrefix(got, tt.want) || !tt.prefix && got != tt.want {
				t.Errorf("text %q, want %q (prefix %v)", got, tt.want, tt.prefix)
			}
			if res.IsError != tt.isErr || res.IsWarning != tt.isWarn {
				t.Errorf("isError=%v isWarning=%v, want %v %v", res.IsError, res.IsWarning, tt.isErr, tt.isWarn)
			}
		})
	}
}

// roundRobinTree: a.txt has 5 matches, b.txt 1, c.txt 3, so the
// round-robin order is a1 b1 c1 a2 c2 a3 c3 a4 a5.
func roundRobinTree(t *testing.T) string {
	return tree(t, map[string]string{
		"a.txt": strings.Repeat("hit\n", 5),
		"b.txt": "hit\n",
		"c.txt": strings.Repeat("hit\n", 3),
	})
}

func TestGrepLimitRoundRobin(t *testing.T) {
	t.Parallel()
	grep := NewGrep(Options{Cwd: roundRobinTree(t)})
	tests := []struct {
		limit int
		want  string
	}{
		{1, "# a.txt\n1:hit\n\n[1 matches limit reached. Use limit=2 for more]"},
		{3, "# a.txt\n1:hit\n\n# b.txt\n1:hit\n\n# c.txt\n1:hit\n\n[3 matches limit reached. Use limit=6 for more]"},
		{5, "# a.txt\n1:hit\n2:hit\n\n# b.txt\n1:hit\n\n# c.txt\n1:hit\n2:hit\n\n[5 matches limit reached. Use limit=10 for more]"},
		{8, "# a.txt\n1:hit\n2:hit\n3:hit\n4:hit\n\n# b.txt\n1:hit\n\n# c.txt\n1:hit\n2:hit\n3:hit\n\n[8 matches limit reached. Use limit=16 for more]"},
		{9, "# a.txt\n1:hit\n2:hit\n3:hit\n4:hit\n5:hit\n\n# b.txt\n1:hit\n\n# c.txt\n1:hit\n2:hit\n3:hit"},
		// 0 means the default, 20.
		{0, "# a.txt\n1:hit\n2:hit\n3:hit\n4:hit\n5:hit\n\n# b.txt\n1:hit\n\n# c.txt\n1:hit\n2:hit\n3:hit"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("limit=", tt.limit), func(t *testing.T) {
			t.Parallel()
			res := call(t, grep, fmt.Sprintf(`{"pattern":"hit","pre":0,"post":0,"limit":%d}`, tt.limit))
			wantText(t, res, tt.want, false, false)
			d := details(t, res)
			limited := strings.Contains(tt.want, "limit reached")
			if (d["resultLimitReached"] == true) != limited || d["truncated"] != limited {
				t.Errorf("limit flags %s", res.Details)
			}
		})
	}
}

// grepMatches lists the matches in a directory-scope grep text as
// "file:line", ignoring context and notices.
func grepMatches(out string) []string {
	var got []string
	file := ""
	matchRE := regexp.MustCompile(`^\s*(\d+):`)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "# ") {
			file = strings.TrimPrefix(l, "# ")
		} else if m := matchRE.FindStringSubmatch(l); m != nil {
			got = append(got, file+":"+m[1])
		}
	}
	sort.Strings(got)
	return got
}

func TestGrepOffsetPaging(t *testing.T) {
	t.Parallel()
	grep := NewGrep(Options{Cwd: roundRobinTree(t)})
	pages := [][]string{
		{"a.txt:1", "b.txt:1"},
		{"a.txt:2", "c.txt:1"},
		{"a.txt:3", "c.txt:2"},
		{"a.txt:4", "c.txt:3"},
		{"a.txt:5"},
	}
	var all []string
	for i, want := range pages {
		res := call(t, grep, fmt.Sprintf(`{"pattern":"hit","pre":0,"post":0,"limit":2,"offset":%d}`, 2*i))
		if res.IsError || res.IsWarning {
			t.Fatalf("page %d: %q", i, text(res))
		}
		got := grepMatches(text(res))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("page %d (offset %d): %v, want %v", i, 2*i, got, want)
		}
		last := i == len(pages)-1
		if hasNotice := strings.HasSuffix(text(res), "[2 matches limit reached. Use limit=4 for more]"); hasNotice == last {
			t.Errorf("page %d: notice present=%v:\n%s", i, hasNotice, text(res))
		}
		all = append(all, got...)
	}
	sort.Strings(all)
	full := grepMatches(text(call(t, grep, `{"pattern":"hit","pre":0,"post":0,"limit":100}`)))
	if !reflect.DeepEqual(all, full) {
		t.Errorf("pages together %v, one search %v", all, full)
	}
	wantText(t, call(t, grep, `{"pattern":"hit","limit":2,"offset":9}`), "No matches found (offset 9 is past the 9 matches)", false, true)
}

func TestGrepFetchCap(t *testing.T) {
	t.Parallel()
	// The search fetches at most 2000 matches; a file with more must
	// still say that the limit was reached.
	dir := tree(t, map[string]string{"many.txt": strings.Repeat("hit\n", 2100), "exact.txt": strings.Repeat("hit\n", 2000)})
	grep := NewGrep(Options{Cwd: dir})
	res := call(t, grep, `{"pattern":"hit","path":"many.txt","pre":0,"post":0,"limit":2000}`)
	if got := text(res); !strings.HasSuffix(got, "\n2000:hit\n\n[2000 matches limit reached. Use limit=4000 for more]") {
		t.Errorf("tail %q", got[max(0, len(got)-80):])
	}
	if d := details(t, res); d["matchCount"] != 2000.0 || d["matchLimitReached"] != true || d["truncated"] != true {
		t.Errorf("details %s", res.Details)
	}
	res = call(t, grep, `{"pattern":"hit","path":"exact.txt","pre":0,"post":0,"limit":2000}`)
	if got := text(res); strings.Contains(got, "limit reached") || !strings.HasSuffix(got, "\n2000:hit") {
		t.Errorf("exactly 2000 matches: tail %q", got[max(0, len(got)-80):])
	}
}

func TestGrepLongLines(t *testing.T) {
	t.Parallel()
	long := "needle " + strings.Repeat("x", 2000)
	dir := tree(t, map[string]string{
		"one.txt":   long + "\nshort\n",
		"ctx.txt":   strings.Repeat("y", 1500) + "\nneedle\n",
		"three.txt": long + "\n" + long + "\n" + long + "\n",
	})
	grep := NewGrep(Options{Cwd: dir})
	tests := []struct{ name, args, want string }{
		{"match cut to 1024 bytes", `{"pattern":"needle","path":"one.txt","pre":0,"post":1}`,
			"1:" + long[:1024] + "\n2-short\n\n[Some lines truncated to 1024 chars]"},
		{"context line cut too", `{"pattern":"needle","path":"ctx.txt","pre":1,"post":0}`,
			"1-" + strings.Repeat("y", 1024) + "\n2:needle\n\n[Some lines truncated to 1024 chars]"},
		{"both notices share one bracket", `{"pattern":"needle","path":"three.txt","pre":0,"post":0,"limit":1}`,
			"1:" + long[:1024] + "\n\n[1 matches limit reached. Use limit=2 for more. Some lines truncated to 1024 chars]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, grep, tt.args)
			wantText(t, res, tt.want, false, false)
			if d := details(t, res); d["linesTruncated"] != true || d["truncated"] != true {
				t.Errorf("details %s", res.Details)
			}
		})
	}
}

func TestGrepMultiline(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"f.txt": "start\nmiddle\nend\nother\n"})
	grep := NewGrep(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isWarn           bool
	}{
		{"newline in the pattern turns it on", `{"pattern":"start\nmiddle"}`, "1:start\n2:middle", false},
		{"escaped \\n turns it on", `{"pattern":"start\\nmiddle"}`, "1:start\n2:middle", false},
		{"explicit, spanning three lines", `{"pattern":"start[\\s\\S]*end","multiline":true}`, "1:start\n2:middle\n3:end", false},
		{"anchors match at line boundaries", `{"pattern":"^end$","multiline":true}`, "3:end", false},
		{"explicitly off: lines are matched one by one", `{"pattern":"start\\nmiddle","multiline":false}`, "No matches found", true},
		{"default is per line", `{"pattern":"(?s)start.middle"}`, "No matches found", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := strings.TrimSuffix(tt.args, "}") + `,"path":"f.txt","pre":0,"post":0}`
			wantText(t, call(t, grep, args), tt.want, false, tt.isWarn)
		})
	}
}

func TestGrepCancellation(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	n := 2000 // enough files that a cancel usually lands mid-search
	if testing.Short() {
		n = 200
	}
	for i := range n {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%40, i)] = "needle\n"
	}
	dir := tree(t, files)
	grep := NewGrep(Options{Cwd: dir})

	t.Run("already cancelled", func(t *testing.T) {
		_, err := runTool(cancelled(), grep, `{"pattern":"needle"}`)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancelled while searching", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := runTool(ctx, grep, `{"pattern":"needle","limit":2000}`)
			done <- err
		}()
		cancel()
		select {
		case err := <-done:
			// The search may have finished before the cancel landed;
			// otherwise it reports the cancellation.
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("grep did not return after its context was cancelled")
		}
	})
}
