package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

func searchTree(t *testing.T) string {
	return tree(t, map[string]string{
		".gitignore":       "build/\n*.log\n",
		"a.go":             "package a\n\n// TODO: first\nfunc A() {}\n",
		"z.txt":            "todo lower\n",
		"pkg/b.go":         "package b\n// TODO: second\n",
		"pkg/c.go":         "package c\n// TODO: third\n",
		"build/gen.go":     "// TODO: generated\n",
		"debug.log":        "TODO in a log\n",
		".hidden/h.go":     "// TODO: hidden\n",
		"bin.dat":          "TODO\x00binary",
		"web/src/app.ts":   "// TODO: ts\n",
		"web/src/app.test": "// TODO: not ts\n",
	})
}

func TestGrep(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	grep := NewGrep(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isErr, isWarn    bool
	}{
		{"grouped with context", `{"pattern":"TODO","pre":1,"post":0}`,
			"# .hidden\n## └─ h.go\n1:// TODO: hidden\n\n# a.go\n2-\n3:// TODO: first\n\n# pkg\n## └─ b.go\n1-package b\n2:// TODO: second\n## └─ c.go\n1-package c\n2:// TODO: third\n\n# web/src\n## └─ app.test\n1:// TODO: not ts\n## └─ app.ts\n1:// TODO: ts", false, false},
		{"case-insensitive", `{"pattern":"todo lower","i":true,"pre":0,"post":0}`, "# z.txt\n1:todo lower", false, false},
		{"gitignore off", `{"pattern":"generated|in a log","gitignore":false,"pre":0,"post":0}`, "# build\n## └─ gen.go\n1:// TODO: generated\n\n# debug.log\n1:TODO in a log", false, false},
		{"glob", `{"pattern":"TODO","glob":"pkg/*.go","pre":0,"post":0}`, "# pkg\n## └─ b.go\n2:// TODO: second\n## └─ c.go\n2:// TODO: third", false, false},
		{"type", `{"pattern":"TODO","type":"ts","pre":0,"post":0}`, "# web/src\n## └─ app.ts\n1:// TODO: ts", false, false},
		{"single file", `{"pattern":"TODO","path":"a.go","pre":0,"post":1}`, "3:// TODO: first\n4-func A() {}", false, false},
		{"subdirectory scope", `{"pattern":"TODO","path":"pkg","pre":0,"post":0}`, "# b.go\n2:// TODO: second\n\n# c.go\n2:// TODO: third", false, false},
		{"comma list", `{"pattern":"TODO","path":"a.go, pkg/c.go","pre":0,"post":0}`, "# a.go\n3:// TODO: first\n\n# pkg\n## └─ c.go\n2:// TODO: third", false, false},
		{"glob path", `{"pattern":"TODO","path":"pkg/b*.go","pre":0,"post":0}`, "# b.go\n2:// TODO: second", false, false},
		{"multiline", `{"pattern":"package b\\n// TODO","pre":0,"post":0}`, "# pkg\n## └─ b.go\n1:package b\n2:// TODO: second", false, false},
		{"no match", `{"pattern":"NOTHING_HERE"}`, "No matches found", false, true},
		{"missing path", `{"pattern":"x","path":"nowhere"}`, "Path not found: nowhere", true, false},
		{"empty pattern", `{"pattern":""}`, "Pattern must not be empty", true, false},
		{"bad regexp", `{"pattern":"a(b"}`, "Invalid regular expression: missing closing ): `a(b`", true, false},
		{"negative offset", `{"pattern":"x","offset":-1}`, "Offset must be a non-negative number", true, false},
		{"negative limit", `{"pattern":"x","limit":-2}`, "Limit must be a non-negative number", true, false},
		{"unknown type", `{"pattern":"x","type":"cobol"}`, "Unknown file type: cobol", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, grep, tt.args), tt.want, tt.isErr, tt.isWarn)
		})
	}
}

func TestGrepLimitRoundRobinAndOffset(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"a.txt": strings.Repeat("hit\n", 10),
		"b.txt": "hit\n",
		"c.txt": "hit\nhit\n",
	})
	grep := NewGrep(Options{Cwd: dir})
	// Round-robin: a1 b1 c1 a2 → a has 2, b 1, c 1.
	res := call(t, grep, `{"pattern":"hit","limit":4,"pre":0,"post":0}`)
	wantText(t, res, "# a.txt\n1:hit\n2:hit\n\n# b.txt\n1:hit\n\n# c.txt\n1:hit\n\n[4 matches limit reached. Use limit=8 for more]", false, false)
	d := details(t, res)
	if d["matchCount"] != 4.0 || d["fileCount"] != 3.0 || d["truncated"] != true || d["resultLimitReached"] != true {
		t.Errorf("details %v", d)
	}
	// The next page continues the same order: c2 a3 a4 a5.
	wantText(t, call(t, grep, `{"pattern":"hit","limit":4,"offset":4,"pre":0,"post":0}`),
		"# a.txt\n3:hit\n4:hit\n5:hit\n\n# c.txt\n2:hit\n\n[4 matches limit reached. Use limit=8 for more]", false, false)
	wantText(t, call(t, grep, `{"pattern":"hit","offset":100}`), "No matches found (offset 100 is past the 13 matches)", false, true)
}

func TestGrepLongLinesAndPadding(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"f.txt": numbered(8) + "hit " + strings.Repeat("é", 600) + "\nline 10\n"})
	got := text(call(t, NewGrep(Options{Cwd: dir}), `{"pattern":"hit","pre":1,"post":1}`))
	want := " 8-line 8\n 9:hit " + strings.Repeat("é", 510) + "\n10-line 10\n\n[Some lines truncated to 1024 chars]"
	if got != "# f.txt\n"+want {
		t.Errorf("got %q", got)
	}
}

func TestGrepCancelled(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	_, err := NewGrep(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"pattern":"TODO"}`)}, nil)
	if err == nil {
		t.Fatal("a cancelled search must report the cancellation")
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	// Distinct mtimes so the newest-first order is known: later in this
	// list is newer.
	base := time.Now().Add(-time.Hour)
	for i, p := range []string{"pkg/b.go", "a.go", "pkg/c.go", "web/src/app.ts", ".hidden/h.go", "build/gen.go"} {
		ts := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	find := NewFind(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isErr, isWarn    bool
	}{
		{"double star", `{"pattern":"**/*.go"}`, ".hidden/h.go\npkg/c.go\na.go\npkg/b.go", false, false},
		{"basename any depth", `{"pattern":"*.go","hidden":false}`, "pkg/c.go\na.go\npkg/b.go", false, false},
		{"base directory", `{"pattern":"web/**/*.ts"}`, "web/src/app.ts", false, false},
		{"brace", `{"pattern":"pkg/{b,c}.go"}`, "pkg/c.go\npkg/b.go", false, false},
		{"ignored only: retried without gitignore", `{"pattern":"build/*.go"}`, "build/gen.go", false, false},
		{"limit", `{"pattern":"**/*.go","limit":2}`, ".hidden/h.go\npkg/c.go\n\n[2 results limit reached. Use limit=4 for more]", false, false},
		{"plain file", `{"pattern":"a.go"}`, "a.go", false, false},
		{"directory lists its files", `{"pattern":"pkg"}`, "pkg/c.go\npkg/b.go", false, false},
		{"none", `{"pattern":"**/*.rs"}`, "No files found matching pattern", false, true},
		{"zero limit", `{"pattern":"*.go","limit":0}`, "Limit must be a positive number", true, false},
		{"root refused", `{"pattern":"/**/*.go"}`, "Searching from root directory '/' is not allowed", true, false},
		{"missing base", `{"pattern":"nowhere/**/*.go"}`, "Path not found: nowhere", true, false},
		{"empty", `{"pattern":" "}`, "Pattern must not be empty", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, find, tt.args), tt.want, tt.isErr, tt.isWarn)
		})
	}
}

func TestFindTiesSortByPath(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"b.go": "", "a.go": "", "c/a.go": ""})
	ts := time.Now().Add(-time.Minute)
	for _, p := range []string{"a.go", "b.go", "c/a.go"} {
		if err := os.Chtimes(filepath.Join(dir, p), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	wantText(t, call(t, NewFind(Options{Cwd: dir}), `{"pattern":"**/*.go"}`), "a.go\nb.go\nc/a.go", false, false)
}

func TestFindTimeout(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	f := &findTool{o: Options{Cwd: dir}, timeout: time.Nanosecond}
	wantText(t, call(t, f, `{"pattern":"**/*.go"}`), "find timed out after 1ns", true, false)
}

func TestFindCancelled(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	_, err := NewFind(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"pattern":"**/*.go"}`)}, nil)
	if err == nil {
		t.Fatal("a cancelled find must report the cancellation")
	}
}

func TestBuiltinsAndSelect(t *testing.T) {
	t.Parallel()
	all := Builtins(Options{Cwd: t.TempDir()})
	var names []string
	for _, tool := range all {
		names = append(names, tool.Name())
		var schema map[string]any
		if err := json.Unmarshal(tool.Schema(), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %v %v", tool.Name(), schema, err)
		}
		if tool.Description() == "" {
			t.Errorf("%s: no description", tool.Name())
		}
	}
	if got := strings.Join(names, ","); got != "read,write,edit,bash,grep,find" {
		t.Errorf("order %s", got)
	}
	picked, err := Select(Options{}, []string{"grep", " read", "grep", ""})
	if err != nil || len(picked) != 2 || picked[0].Name() != "grep" || picked[1].Name() != "read" {
		t.Errorf("Select: %v %v", picked, err)
	}
	if _, err := Select(Options{}, []string{"read", "ls"}); err == nil ||
		err.Error() != `unknown tool "ls" (available: read, write, edit, bash, grep, find)` {
		t.Errorf("unknown: %v", err)
	}
	for name, c := range map[string]engine.Concurrency{"read": engine.Shared, "grep": engine.Shared, "find": engine.Shared,
		"write": engine.Exclusive, "edit": engine.Exclusive, "bash": engine.Exclusive} {
		tools, _ := Select(Options{}, []string{name})
		if tools[0].Concurrency() != c {
			t.Errorf("%s concurrency %v", name, tools[0].Concurrency())
		}
	}
}
