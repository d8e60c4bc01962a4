package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setMtimes gives each path (relative to dir) a distinct mtime, later in
// the list being newer, so find's newest-first order is known.
func setMtimes(t *testing.T, dir string, oldestFirst ...string) {
	t.Helper()
	base := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	for i, p := range oldestFirst {
		ts := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
}

// findTree is a small git project (.git holds its root, so the root
// .gitignore applies to searches from subdirectories too); its files'
// mtimes rise in this order.
var findTreeOrder = []string{
	"main.go", "README.md", "src/app.ts", "src/lib/util.ts", "src/lib/util_test.go",
	"dist/bundle.js", "dist/out.ts", "notes.tmp", ".github/ci.yml", ".env", ".gitignore",
}

func findTree(t *testing.T) string {
	files := map[string]string{".gitignore": "dist/\n*.tmp\n", ".git/HEAD": "ref: refs/heads/main\n"}
	for _, p := range findTreeOrder[:len(findTreeOrder)-1] {
		files[p] = p + "\n"
	}
	dir := tree(t, files)
	setMtimes(t, dir, findTreeOrder...)
	return dir
}

func TestFindPatterns(t *testing.T) {
	t.Parallel()
	dir := findTree(t)
	find := NewFind(Options{Cwd: dir})
	tests := []struct {
		name, pattern string
		extra         string // more arguments
		want          string
		retried       bool // found only by the retry without .gitignore
	}{
		{"double star", "**/*.go", "", "src/lib/util_test.go\nmain.go", false},
		{"no slash: file names at any depth", "*.go", "", "src/lib/util_test.go\nmain.go", false},
		{"no slash, gitignored dir skipped", "*.ts", "", "src/lib/util.ts\nsrc/app.ts", false},
		{"base path with double star", "src/**/*.ts", "", "src/lib/util.ts\nsrc/app.ts", false},
		{"base path with a single star is anchored", "src/*.ts", "", "src/app.ts", false},
		{"nested base path", "src/lib/*", "", "src/lib/util_test.go\nsrc/lib/util.ts", false},
		{"dot-slash base", "./src/*.ts", "", "src/app.ts", false},
		{"braces", "**/*.{ts,go}", "", "src/lib/util_test.go\nsrc/lib/util.ts\nsrc/app.ts\nmain.go", false},
		{"a directory lists the files below it", "src", "", "src/lib/util_test.go\nsrc/lib/util.ts\nsrc/app.ts", false},
		{"everything: hidden included by default", "**/*", "",
			".gitignore\n.env\n.github/ci.yml\nsrc/lib/util_test.go\nsrc/lib/util.ts\nsrc/app.ts\nREADME.md\nmain.go", false},
		{"hidden:false", "**/*", `,"hidden":false`, "src/lib/util_test.go\nsrc/lib/util.ts\nsrc/app.ts\nREADME.md\nmain.go", false},
		{"hidden file by name", "*.yml", "", ".github/ci.yml", false},
		{"only gitignored matches: retried without .gitignore", "dist/*.js", "", "dist/bundle.js", true},
		{"ignored by a file pattern: retried", "*.tmp", "", "notes.tmp", true},
		{"gitignored and tracked mixed: no retry", "**/*.ts", "", "src/lib/util.ts\nsrc/app.ts", false},
		{"plain file returns itself", "main.go", "", "main.go", false},
		{"plain nested file returns itself", "src/lib/util.ts", "", "src/lib/util.ts", false},
		{"absolute file path is shown relative", filepath.Join(dir, "src", "app.ts"), "", "src/app.ts", false},
		{"absolute base path", filepath.ToSlash(filepath.Join(dir, "src")) + "/*.ts", "", "src/app.ts", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, find, fmt.Sprintf(`{"pattern":%q%s}`, tt.pattern, tt.extra))
			wantText(t, res, tt.want, false, false)
			d := details(t, res)
			if (d["ignoredGitignore"] == true) != tt.retried {
				t.Errorf("ignoredGitignore: %s", res.Details)
			}
			if n := len(strings.Split(tt.want, "\n")); d["fileCount"] != float64(n) || d["truncated"] != false {
				t.Errorf("fileCount/truncated: %s", res.Details)
			}
		})
	}
}

func TestFindNoMatch(t *testing.T) {
	t.Parallel()
	dir := findTree(t)
	find := NewFind(Options{Cwd: dir})
	for _, args := range []string{
		`{"pattern":"**/*.rs"}`,
		`{"pattern":"*.yml","hidden":false}`, // only a hidden file would match
		`{"pattern":"src/*.go"}`,             // anchored: src/lib/util_test.go is deeper
	} {
		res := call(t, find, args)
		wantText(t, res, "No files found matching pattern", false, true)
		if d := details(t, res); d["fileCount"] != 0.0 || fmt.Sprint(d["files"]) != "[]" {
			t.Errorf("%s: details %s", args, res.Details)
		}
	}
}

func TestFindOrder(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"b.go": "", "a.go": "", "c/a.go": "", "a/z.go": "", "z.go": "", "old.go": ""})
	same := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, p := range []string{"b.go", "a.go", "c/a.go", "a/z.go"} {
		if err := os.Chtimes(filepath.Join(dir, p), same, same); err != nil {
			t.Fatal(err)
		}
	}
	for p, ts := range map[string]time.Time{"z.go": same.Add(time.Minute), "old.go": same.Add(-time.Minute)} {
		if err := os.Chtimes(filepath.Join(dir, p), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	// Newest first; equal mtimes in path order.
	wantText(t, call(t, NewFind(Options{Cwd: dir}), `{"pattern":"**/*.go"}`),
		"z.go\na.go\na/z.go\nb.go\nc/a.go\nold.go", false, false)
}

func TestFindLimit(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"1.txt": "", "2.txt": "", "3.txt": "", "4.txt": "", "5.txt": ""})
	setMtimes(t, dir, "1.txt", "2.txt", "3.txt", "4.txt", "5.txt")
	find := NewFind(Options{Cwd: dir})
	tests := []struct {
		limit int
		want  string
	}{
		{1, "5.txt\n\n[1 results limit reached. Use limit=2 for more]"},
		{2, "5.txt\n4.txt\n\n[2 results limit reached. Use limit=4 for more]"},
		{4, "5.txt\n4.txt\n3.txt\n2.txt\n\n[4 results limit reached. Use limit=8 for more]"},
		{5, "5.txt\n4.txt\n3.txt\n2.txt\n1.txt"},
		{1000, "5.txt\n4.txt\n3.txt\n2.txt\n1.txt"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("limit=", tt.limit), func(t *testing.T) {
			t.Parallel()
			res := call(t, find, fmt.Sprintf(`{"pattern":"*.txt","limit":%d}`, tt.limit))
			wantText(t, res, tt.want, false, false)
			d := details(t, res)
			limited := tt.limit < 5
			if (d["resultLimitReached"] == true) != limited || d["truncated"] != limited || d["fileCount"] != float64(min(tt.limit, 5)) {
				t.Errorf("details %s", res.Details)
			}
		})
	}
}

func TestFindErrors(t *testing.T) {
	t.Parallel()
	dir := findTree(t)
	find := NewFind(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		prefix           bool
	}{
		{"zero limit", `{"pattern":"*.go","limit":0}`, "Limit must be a positive number", false},
		{"negative limit", `{"pattern":"*.go","limit":-3}`, "Limit must be a positive number", false},
		{"root", `{"pattern":"/"}`, "Searching from root directory '/' is not allowed", false},
		{"root glob", `{"pattern":"/*"}`, "Searching from root directory '/' is not allowed", false},
		{"root double star", `{"pattern":"/**/*.go"}`, "Searching from root directory '/' is not allowed", false},
		{"climbing to the root", fmt.Sprintf(`{"pattern":%q}`, strings.Repeat("../", 64)), "Searching from root directory '/' is not allowed", false},
		{"missing base directory", `{"pattern":"nowhere/**/*.go"}`, "Path not found: nowhere", false},
		{"missing plain path", `{"pattern":"nowhere"}`, "Path not found: nowhere", false},
		{"base is a file", `{"pattern":"main.go/*.go"}`, "Path not found: main.go", false},
		{"empty pattern", `{"pattern":""}`, "Pattern must not be empty", false},
		{"blank pattern", `{"pattern":"  "}`, "Pattern must not be empty", false},
		{"invalid glob", `{"pattern":"[a"}`, "Invalid glob pattern: [a", false},
		{"wrong argument type", `{"pattern":["*.go"]}`, "Invalid find arguments: ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, find, tt.args)
			got := text(res)
			if tt.prefix && !strings.HasPrefix(got, tt.want) || !tt.prefix && got != tt.want {
				t.Errorf("text %q, want %q", got, tt.want)
			}
			if !res.IsError || res.IsWarning {
				t.Errorf("isError=%v isWarning=%v, want an error", res.IsError, res.IsWarning)
			}
		})
	}
}

func TestFindDeadlines(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%d.go", i%10, i)] = ""
	}
	dir := tree(t, files)

	t.Run("own timeout", func(t *testing.T) {
		t.Parallel()
		// A timeout that has run out before the walk starts, on a match
		// and on the no-match path that retries without .gitignore.
		f := &findTool{spec: findSpec, o: Options{Cwd: dir}, timeout: time.Nanosecond}
		for _, p := range []string{"**/*.go", "**/*.rs"} {
			wantText(t, call(t, f, fmt.Sprintf(`{"pattern":%q}`, p)), "find timed out after 1ns", true, false)
		}
	})
	t.Run("expired deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		res, err := runTool(ctx, NewFind(Options{Cwd: dir}), `{"pattern":"**/*.go"}`)
		if err != nil {
			t.Fatal(err)
		}
		wantText(t, res, "find timed out after 5s", true, false)
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		_, err := runTool(cancelled(), NewFind(Options{Cwd: dir}), `{"pattern":"**/*.go"}`)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("generous timeout finishes", func(t *testing.T) {
		t.Parallel()
		res := call(t, NewFind(Options{Cwd: dir}), `{"pattern":"d3/*.go","limit":1000}`)
		if res.IsError || len(strings.Split(text(res), "\n")) != 30 {
			t.Errorf("got %q", text(res))
		}
	})
}
