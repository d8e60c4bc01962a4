package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// readTestLines returns n lines "l1".."ln", each ending in "\n".
func readTestLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

// readTestJoin is lines from..to (inclusive) of readTestLines, joined
// without the final newline, as read shows them.
func readTestJoin(from, to int) string {
	var parts []string
	for i := from; i <= to; i++ {
		parts = append(parts, fmt.Sprintf("l%d", i))
	}
	return strings.Join(parts, "\n")
}

func TestReadToolFileWindows(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"small.txt":    "alpha\nbeta\ngamma\n",
		"noeol.txt":    "alpha\nbeta",
		"ten.txt":      readTestLines(10),
		"305.txt":      readTestLines(305),
		"3005.txt":     readTestLines(3005),
		"crlf.txt":     "one\r\ntwo\r\n",
		"bomcrlf.txt":  "\uFEFFone\r\ntwo\r\n",
		"blank.txt":    "\n",
		"empty.txt":    "",
		"bomonly.txt":  "\uFEFF",
		"sub/deep.txt": "deep\n",
	})
	read := NewRead(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		details          string // exact details JSON; "" skips the check
	}{
		{"whole file", `{"path":"small.txt"}`, "alpha\nbeta\ngamma",
			`{"path":"small.txt","kind":"file","totalLines":3,"startLine":1,"endLine":3,"truncated":false}`},
		{"no final newline", `{"path":"noeol.txt"}`, "alpha\nbeta", ""},
		{"nested relative path", `{"path":"sub/deep.txt"}`, "deep",
			`{"path":"sub/deep.txt","kind":"file","totalLines":1,"startLine":1,"endLine":1,"truncated":false}`},
		{"unclean relative path", `{"path":"./sub/../small.txt"}`, "alpha\nbeta\ngamma", ""},
		{"crlf lines", `{"path":"crlf.txt"}`, "one\ntwo", ""},
		{"bom and crlf", `{"path":"bomcrlf.txt"}`, "one\ntwo", ""},
		{"only a newline", `{"path":"blank.txt"}`, "", ""},
		{"offset and limit", `{"path":"ten.txt","offset":3,"limit":2}`,
			"l3\nl4\n\n[Showing lines 3-4 of 10. Use offset=5 to continue]",
			`{"path":"ten.txt","kind":"file","totalLines":10,"startLine":3,"endLine":4,"truncated":true}`},
		{"limit only", `{"path":"ten.txt","limit":1}`, "l1\n\n[Showing lines 1-1 of 10. Use offset=2 to continue]", ""},
		{"window reaching the end", `{"path":"ten.txt","offset":9,"limit":5}`, "l9\nl10",
			`{"path":"ten.txt","kind":"file","totalLines":10,"startLine":9,"endLine":10,"truncated":false}`},
		{"window ending exactly at the end", `{"path":"ten.txt","offset":6,"limit":5}`, readTestJoin(6, 10), ""},
		{"last line", `{"path":"ten.txt","offset":10}`, "l10", ""},
		{"zero offset and limit mean the defaults", `{"path":"ten.txt","offset":0,"limit":0}`, readTestJoin(1, 10), ""},
		{"default limit 300", `{"path":"305.txt"}`,
			readTestJoin(1, 300) + "\n\n[Showing lines 1-300 of 305. Use offset=301 to continue]",
			`{"path":"305.txt","kind":"file","totalLines":305,"startLine":1,"endLine":300,"truncated":true}`},
		{"limit clamped to 3000", `{"path":"3005.txt","limit":5000}`,
			readTestJoin(1, 3000) + "\n\n[Showing lines 1-3000 of 3005. Use offset=3001 to continue]", ""},
		{"beyond end", `{"path":"ten.txt","offset":11}`,
			"Line 11 is beyond end of file (10 lines total). Use offset=1 to read from the start, or offset=10 to read the last line.",
			`{"path":"ten.txt","kind":"file","totalLines":10,"truncated":false}`},
		{"empty file", `{"path":"empty.txt"}`, "The file is empty.",
			`{"path":"empty.txt","kind":"file","truncated":false}`},
		{"empty file with offset", `{"path":"empty.txt","offset":5}`, "The file is empty.", ""},
		{"bom-only file is empty", `{"path":"bomonly.txt"}`, "The file is empty.", ""},
		{"unknown fields ignored", `{"path":"small.txt","sel":"L2"}`, "alpha\nbeta\ngamma", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, read, tt.args)
			wantText(t, res, tt.want, false, false)
			if tt.details != "" && string(res.Details) != tt.details {
				t.Errorf("details:\n got %s\nwant %s", res.Details, tt.details)
			}
		})
	}
}

func TestReadToolPathOutsideCwdIsShownAbsolute(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	other := tree(t, map[string]string{"b.bin": "\x00\x01"})
	abs := filepath.Join(other, "b.bin")
	res := call(t, NewRead(Options{Cwd: cwd}), fmt.Sprintf(`{"path":%q}`, abs))
	wantText(t, res, fmt.Sprintf("[%s is a binary file (2B); its content is not shown]", abs), false, false)
	if d := details(t, res); d["path"] != abs || d["kind"] != "binary" {
		t.Errorf("details %v", d)
	}
}

func TestReadToolByteCap(t *testing.T) {
	t.Parallel()
	// 1023 characters + newline = 1 KB a line: 50 lines and their 49
	// separators are 51199 bytes, one byte under the cap; the 51st does not fit.
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("%04d", i+1)+strings.Repeat("x", 1019))
	}
	euro := strings.Repeat("€", 20000) // 60000 bytes, 3 per rune
	dir := tree(t, map[string]string{
		"wide.txt":   strings.Join(lines, "\n") + "\n",
		"huge.txt":   strings.Repeat("y", 60000) + "\nnext\n",
		"last.txt":   "first\n" + strings.Repeat("z", 51201) + "\n",
		"euro.txt":   euro + "\n",
		"exact.txt":  strings.Repeat("e", DefaultMaxBytes) + "\nafter\n",
		"window.txt": "short\n" + strings.Repeat("w", 60000) + "\n",
	})
	read := NewRead(Options{Cwd: dir})

	t.Run("lines stop at 50KB", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"wide.txt","limit":3000}`)
		want := strings.Join(lines[:50], "\n") + "\n\n[Showing lines 1-50 of 100 (50.0KB limit). Use offset=51 to continue]"
		wantText(t, res, want, false, false)
		if got := string(res.Details); got != `{"path":"wide.txt","kind":"file","totalLines":100,"startLine":1,"endLine":50,"truncated":true}` {
			t.Errorf("details %s", got)
		}
	})
	t.Run("byte cap from an offset", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"wide.txt","offset":51,"limit":3000}`)
		want := strings.Join(lines[50:100], "\n")
		wantText(t, res, want, false, false) // exactly the last 50 lines: fits, no notice
	})
	t.Run("line limit reached before the byte cap has no byte note", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"wide.txt","limit":10}`)
		wantText(t, res, strings.Join(lines[:10], "\n")+"\n\n[Showing lines 1-10 of 100. Use offset=11 to continue]", false, false)
	})
	t.Run("single over-long line", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"huge.txt"}`)
		want := strings.Repeat("y", DefaultMaxBytes) + "\n\n[Line 1 is 58.6KB, over the 50.0KB limit; showing its first 50.0KB. Use offset=2 to continue.]"
		wantText(t, res, want, false, false)
		if got := string(res.Details); got != `{"path":"huge.txt","kind":"file","totalLines":2,"startLine":1,"endLine":1,"truncated":true}` {
			t.Errorf("details %s", got)
		}
	})
	t.Run("over-long last line has no continuation", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"last.txt","offset":2}`)
		want := strings.Repeat("z", DefaultMaxBytes) + "\n\n[Line 2 is 50.0KB, over the 50.0KB limit; showing its first 50.0KB.]"
		wantText(t, res, want, false, false)
	})
	t.Run("preview is not cut inside a UTF-8 sequence", func(t *testing.T) {
		t.Parallel()
		got := text(call(t, read, `{"path":"euro.txt"}`))
		preview, notice, ok := strings.Cut(got, "\n\n")
		if !ok || !utf8.ValidString(preview) || len(preview) != 51198 || preview != euro[:51198] {
			t.Fatalf("preview of %d bytes, valid=%v", len(preview), utf8.ValidString(preview))
		}
		if notice != "[Line 1 is 58.6KB, over the 50.0KB limit; showing its first 50.0KB.]" {
			t.Errorf("notice %q", notice)
		}
	})
	t.Run("a line of exactly 50KB is shown whole", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"exact.txt"}`)
		want := strings.Repeat("e", DefaultMaxBytes) + "\n\n[Showing lines 1-1 of 2 (50.0KB limit). Use offset=2 to continue]"
		wantText(t, res, want, false, false)
	})
	t.Run("over-long line later in the window stops the window before it", func(t *testing.T) {
		t.Parallel()
		res := call(t, read, `{"path":"window.txt"}`)
		wantText(t, res, "short\n\n[Showing lines 1-1 of 2 (50.0KB limit). Use offset=2 to continue]", false, false)
	})
}

func TestReadToolMissingAndSuffixMatch(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"src/pkg/deep.go":   "package pkg\n",
		"a/dup.txt":         "a\n",
		"b/dup.txt":         "b\n",
		"keep/only.txt":     "kept\n",
		"ignored/only.txt":  "ignored\n",
		".gitignore":        "ignored/\n",
		".hidden/secret.md": "hidden\n",
		"docs/":             "",
	})
	read := NewRead(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isErr            bool
		via              string
	}{
		{"missing", `{"path":"nope.txt"}`, "Path 'nope.txt' not found", true, ""},
		{"missing in a subdirectory", `{"path":"src/nope.go"}`, "Path 'src/nope.go' not found", true, ""},
		{"suffix of one file", `{"path":"pkg/deep.go"}`,
			"[Path 'pkg/deep.go' not found; resolved to 'src/pkg/deep.go' via suffix match]\npackage pkg", false, "src/pkg/deep.go"},
		{"bare file name", `{"path":"deep.go"}`,
			"[Path 'deep.go' not found; resolved to 'src/pkg/deep.go' via suffix match]\npackage pkg", false, "src/pkg/deep.go"},
		{"suffix must start at a path component", `{"path":"eep.go"}`, "Path 'eep.go' not found", true, ""},
		{"two candidates are ambiguous", `{"path":"dup.txt"}`, "Path 'dup.txt' not found", true, ""},
		{"git-ignored candidates do not count", `{"path":"only.txt"}`,
			"[Path 'only.txt' not found; resolved to 'keep/only.txt' via suffix match]\nkept", false, "keep/only.txt"},
		{"hidden directories are searched", `{"path":"secret.md"}`,
			"[Path 'secret.md' not found; resolved to '.hidden/secret.md' via suffix match]\nhidden", false, ".hidden/secret.md"},
		{"parent paths are not suffix-matched", `{"path":"../deep.go"}`, "Path '../deep.go' not found", true, ""},
		{"directories are not suffix-matched", `{"path":"x/docs"}`, "Path 'x/docs' not found", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, read, tt.args)
			wantText(t, res, tt.want, tt.isErr, false)
			if tt.via != "" {
				if d := details(t, res); d["resolvedVia"] != tt.via || d["path"] != tt.via {
					t.Errorf("details %v", d)
				}
			}
		})
	}
	t.Run("absolute paths are not suffix-matched", func(t *testing.T) {
		t.Parallel()
		abs := filepath.Join(t.TempDir(), "deep.go")
		wantText(t, call(t, read, fmt.Sprintf(`{"path":%q}`, abs)), fmt.Sprintf("Path '%s' not found", abs), true, false)
	})
}

func TestReadToolDirectoryListing(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"list/b.txt":       "",
		"list/A.txt":       "",
		"list/c/":          "",
		"list/D/":          "",
		"list/e.go":        "",
		"list/_under":      "",
		"list/Zeta.md":     "",
		"list/.dot":        "",
		"list/old":         "",
		"list/c/inner.txt": "",
		"empty/":           "",
		"three/x":          "",
		"three/y":          "",
		"three/z":          "",
	})
	if err := os.Symlink("c", filepath.Join(dir, "list", "link")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ages := map[string]time.Duration{
		"A.txt":   0,
		"b.txt":   30 * time.Second,
		"c":       5 * time.Minute, // also the age "link/" shows: links are followed
		"D":       3 * time.Hour,
		"e.go":    2 * 24 * time.Hour,
		"_under":  8 * 24 * time.Hour,
		"Zeta.md": 61 * 24 * time.Hour,
		".dot":    -time.Hour, // from the future: still "just now"
		"old":     400 * 24 * time.Hour,
	}
	for name, age := range ages {
		when := now.Add(-age)
		if err := os.Chtimes(filepath.Join(dir, "list", name), when, when); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"x", "y", "z"} {
		if err := os.Chtimes(filepath.Join(dir, "three", name), now, now); err != nil {
			t.Fatal(err)
		}
	}
	read := NewRead(Options{Cwd: dir, Clock: engine.FixedClock(now.UnixMilli())})

	// Case-insensitive order ('.' < '_' < letters in ASCII), "/" after
	// directories, including a symlink to one.
	full := ".dot (just now)\n_under (1w ago)\nA.txt (just now)\nb.txt (just now)\nc/ (5m ago)\nD/ (3h ago)\n" +
		"e.go (2d ago)\nlink/ (5m ago)\nold (1y ago)\nZeta.md (2mo ago)"
	tests := []struct {
		name, args, want, details string
	}{
		{"sorted listing", `{"path":"list"}`, full, `{"path":"list","kind":"directory","entries":10,"truncated":false}`},
		{"trailing slash", `{"path":"list/"}`, full, ""},
		{"limit", `{"path":"list","limit":3}`,
			".dot (just now)\n_under (1w ago)\nA.txt (just now)\n\n[3 results limit reached. Use limit=10 for more]",
			`{"path":"list","kind":"directory","entries":10,"truncated":true}`},
		{"limit equal to the entry count", `{"path":"three","limit":3}`, "x (just now)\ny (just now)\nz (just now)",
			`{"path":"three","kind":"directory","entries":3,"truncated":false}`},
		{"offset is ignored for directories", `{"path":"three","offset":2}`, "x (just now)\ny (just now)\nz (just now)", ""},
		{"empty directory", `{"path":"empty"}`, "(empty directory)", `{"path":"empty","kind":"directory","truncated":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, read, tt.args)
			wantText(t, res, tt.want, false, false)
			if tt.details != "" && string(res.Details) != tt.details {
				t.Errorf("details:\n got %s\nwant %s", res.Details, tt.details)
			}
		})
	}
	t.Run("cwd itself", func(t *testing.T) {
		t.Parallel()
		res := call(t, NewRead(Options{Cwd: filepath.Join(dir, "three"), Clock: engine.FixedClock(now.UnixMilli())}), `{"path":"."}`)
		wantText(t, res, "x (just now)\ny (just now)\nz (just now)", false, false)
		if d := details(t, res); d["path"] != "." {
			t.Errorf("details %v", d)
		}
	})
}

func TestReadToolBinary(t *testing.T) {
	t.Parallel()
	late := strings.Repeat("a", 9000) + "\x00"
	dir := tree(t, map[string]string{
		"img.png":   "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"big.bin":   strings.Repeat("\x00", 2048),
		"late.txt":  late, // a NUL after the first 8 KB is not looked at
		"tools/x.o": "\x7fELF\x00",
	})
	read := NewRead(Options{Cwd: dir})
	tests := []struct{ name, args, want string }{
		{"nul in the header", `{"path":"img.png"}`, "[img.png is a binary file (16B); its content is not shown]"},
		{"size in KB", `{"path":"big.bin"}`, "[big.bin is a binary file (2.0KB); its content is not shown]"},
		{"via suffix match", `{"path":"x.o"}`, "[Path 'x.o' not found; resolved to 'tools/x.o' via suffix match]\n[tools/x.o is a binary file (5B); its content is not shown]"},
		{"nul beyond 8KB is text", `{"path":"late.txt"}`, late},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, read, tt.args), tt.want, false, false)
		})
	}
	if d := details(t, call(t, read, `{"path":"img.png"}`)); d["kind"] != "binary" || d["path"] != "img.png" {
		t.Errorf("details %v", d)
	}
}

func TestReadToolBadArguments(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "a\n"})
	read := NewRead(Options{Cwd: dir})
	tests := []struct {
		name, args string
		want       string // exact text, or a prefix when it ends in "…"
	}{
		{"no arguments", ``, "Path must not be empty"},
		{"empty object", `{}`, "Path must not be empty"},
		{"empty path", `{"path":""}`, "Path must not be empty"},
		{"blank path", `{"path":" \t"}`, "Path must not be empty"},
		{"negative offset", `{"path":"a.txt","offset":-1}`, "Offset and limit must be positive numbers"},
		{"negative limit", `{"path":"a.txt","limit":-5}`, "Offset and limit must be positive numbers"},
		{"number path", `{"path":7}`, "Invalid read arguments: …"},
		{"string offset", `{"path":"a.txt","offset":"3"}`, "Invalid read arguments: …"},
		{"fractional limit", `{"path":"a.txt","limit":1.5}`, "Invalid read arguments: …"},
		{"null path", `{"path":null}`, "Path must not be empty"},
		{"array", `["a.txt"]`, "Invalid read arguments: …"},
		{"not JSON", `path=a.txt`, "Invalid read arguments: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := read.Run(t.Context(), engine.ToolCall{ID: "c1", Name: "read", Arguments: []byte(tt.args)}, nil)
			wantFailure(t, res, err, tt.want)
			if string(res.Details) != "{}" {
				t.Errorf("details %s", res.Details)
			}
		})
	}
}

func TestReadToolUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	dir := tree(t, map[string]string{"secret.txt": "s\n", "locked/a": ""})
	if err := os.Chmod(filepath.Join(dir, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0o300); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	read := NewRead(Options{Cwd: dir})
	wantText(t, call(t, read, `{"path":"secret.txt"}`), "Cannot read secret.txt: permission denied", true, false)
	wantText(t, call(t, read, `{"path":"locked"}`), "Cannot read directory locked", true, false)
}

// A cancelled context does not stop the read of a small file: read looks
// at the context only between 64 KiB chunks (a large file stops there, see
// TestHugeTextFileStreams), so an existing small path is read normally.
// The suffix-match walk looks at the context at once, so a path that would
// have been resolved by suffix is reported as not found.
func TestReadToolCancelledContext(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta\n", "d/": ""})
	read := NewRead(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"existing file", `{"path":"a.txt"}`, "alpha", false},
		{"directory", `{"path":"d"}`, "(empty directory)", false},
		{"suffix match gives up", `{"path":"b.txt"}`, "Path 'b.txt' not found", true},
		{"bad arguments", `{"path":1}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := read.Run(cancelled(), engine.ToolCall{ID: "c1", Name: "read", Arguments: []byte(tt.args)}, nil)
			if err != nil {
				t.Fatalf("Go error %v", err)
			}
			if res.IsError != tt.isErr || (tt.want != "" && text(res) != tt.want) {
				t.Errorf("got %q isError=%v, want %q isError=%v", text(res), res.IsError, tt.want, tt.isErr)
			}
		})
	}
}

func TestFormatAge(t *testing.T) {
	t.Parallel()
	for age, want := range map[time.Duration]string{
		10 * time.Second: "just now", 5 * time.Minute: "5m ago", 2 * time.Hour: "2h ago",
		3 * 24 * time.Hour: "3d ago", 14 * 24 * time.Hour: "2w ago", 60 * 24 * time.Hour: "2mo ago",
		800 * 24 * time.Hour: "2y ago",
	} {
		if got := formatAge(age); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", age, got, want)
		}
	}
}
