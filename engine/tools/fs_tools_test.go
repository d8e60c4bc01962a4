package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFiles(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{
		"a.txt":            "alpha\nbeta\n",
		"crlf.txt":         "one\r\ntwo\r\n",
		"bom.txt":          "\uFEFFhello\n",
		"empty.txt":        "",
		"long.txt":         numbered(400),
		"wide.txt":         strings.Repeat(strings.Repeat("x", 99)+"\n", 1000),
		"oneline.txt":      strings.Repeat("y", 60*1024) + "\nnext\n",
		"bin.dat":          "ab\x00cd",
		"deep/x/unique.go": "package x\n",
	})
	read := NewRead(Options{Cwd: dir})
	tests := []struct {
		name, args, want string
		isErr            bool
	}{
		{"whole file", `{"path":"a.txt"}`, "alpha\nbeta", false},
		{"absolute path", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "a.txt")), "alpha\nbeta", false},
		{"crlf stripped", `{"path":"crlf.txt"}`, "one\ntwo", false},
		{"bom stripped", `{"path":"bom.txt"}`, "hello", false},
		{"empty", `{"path":"empty.txt"}`, "The file is empty.", false},
		{"offset and limit", `{"path":"long.txt","offset":10,"limit":2}`, "line 10\nline 11\n\n[Showing lines 10-11 of 400. Use offset=12 to continue]", false},
		{"last lines", `{"path":"long.txt","offset":399}`, "line 399\nline 400", false},
		{"beyond end", `{"path":"a.txt","offset":5}`, "Line 5 is beyond end of file (2 lines total). Use offset=1 to read from the start, or offset=2 to read the last line.", false},
		{"missing", `{"path":"nope.txt"}`, "Path 'nope.txt' not found", true},
		{"suffix match", `{"path":"x/unique.go"}`, "[Path 'x/unique.go' not found; resolved to 'deep/x/unique.go' via suffix match]\npackage x", false},
		{"binary", `{"path":"bin.dat"}`, "[bin.dat is a binary file (5B); its content is not shown]", false},
		{"empty path", `{"path":" "}`, "Path must not be empty", true},
		{"wrong type", `{"path":7}`, "Invalid read arguments: cannot unmarshal number into Go struct field readArgs.path of type string", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantText(t, call(t, read, tt.args), tt.want, tt.isErr, false)
		})
	}

	t.Run("default window", func(t *testing.T) {
		res := call(t, read, `{"path":"long.txt"}`)
		if !strings.HasSuffix(text(res), "line 300\n\n[Showing lines 1-300 of 400. Use offset=301 to continue]") {
			t.Errorf("tail of %q", text(res)[len(text(res))-80:])
		}
		d := details(t, res)
		if d["startLine"] != 1.0 || d["endLine"] != 300.0 || d["totalLines"] != 400.0 || d["truncated"] != true {
			t.Errorf("details %v", d)
		}
	})
	t.Run("byte cap", func(t *testing.T) {
		res := call(t, read, `{"path":"wide.txt","limit":3000}`)
		// 100 bytes per line: 512 lines fit in 50 KB (511 newlines between).
		if !strings.HasSuffix(text(res), "\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue]") {
			t.Errorf("tail of %q", text(res)[len(text(res))-90:])
		}
	})
	t.Run("over-long line", func(t *testing.T) {
		got := text(call(t, read, `{"path":"oneline.txt"}`))
		if !strings.HasSuffix(got, "[Line 1 is 60.0KB, over the 50.0KB limit; showing its first 50.0KB. Use offset=2 to continue.]") {
			t.Errorf("tail of %q", got[len(got)-120:])
		}
	})
}

func TestReadDirectory(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"src/b.go": "", "src/A.md": "", "src/sub/": "", "hollow/": ""})
	now := time.Now()
	if err := os.Chtimes(filepath.Join(dir, "src", "b.go"), now.Add(-3*time.Hour), now.Add(-3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	read := NewRead(Options{Cwd: dir, Now: func() time.Time { return now }})
	wantText(t, call(t, read, `{"path":"src"}`), "A.md (just now)\nb.go (3h ago)\nsub/ (just now)", false, false)
	wantText(t, call(t, read, `{"path":"src","limit":2}`), "A.md (just now)\nb.go (3h ago)\n\n[2 results limit reached. Use limit=3 for more]", false, false)
	wantText(t, call(t, read, `{"path":"hollow"}`), "(empty directory)", false, false)
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

func TestReadCancelledContext(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "x\n"})
	// An existing file is still read (the call is cheap and has no side
	// effects); a suffix search stops at once and reports not found.
	res, err := NewRead(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"path":"deep/a.txt"}`)}, nil)
	if err != nil || !res.IsError || text(res) != "Path 'deep/a.txt' not found" {
		t.Errorf("got %q, %v", text(res), err)
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"exec.sh": "old", "adir/": ""})
	if err := os.Chmod(filepath.Join(dir, "exec.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := NewWrite(Options{Cwd: dir})

	wantText(t, call(t, w, `{"path":"a/b/c.txt","content":"hi\n"}`), "Successfully wrote 3 bytes to a/b/c.txt", false, false)
	if b, _ := os.ReadFile(filepath.Join(dir, "a", "b", "c.txt")); string(b) != "hi\n" {
		t.Errorf("content %q", b)
	}
	// JavaScript string length: "é" is 1 unit, "😀" 2.
	wantText(t, call(t, w, `{"path":"u.txt","content":"é😀"}`), "Successfully wrote 3 bytes to u.txt", false, false)

	wantText(t, call(t, w, `{"path":"exec.sh","content":"#!/bin/sh\n"}`), "Successfully wrote 10 bytes to exec.sh", false, false)
	fi, err := os.Stat(filepath.Join(dir, "exec.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after overwrite: %v %v", fi.Mode(), err)
	}
	wantText(t, call(t, w, `{"path":"adir","content":"x"}`), "Cannot write adir: it is a directory", true, false)
	wantText(t, call(t, w, `{"path":"","content":"x"}`), "Path must not be empty", true, false)
	if res := call(t, w, `{"path":"x","content":5}`); !res.IsError || !strings.HasPrefix(text(res), "Invalid write arguments: ") {
		t.Errorf("bad args: %q", text(res))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteIgnoresCancellationOnceStarted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := NewWrite(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"path":"f","content":"x"}`)}, nil)
	if err != nil || res.IsError {
		t.Fatalf("got %q, %v", text(res), err)
	}
}

func TestEditSingle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, args, want, after string
		isErr                         bool
	}{
		{"unique", "a\nb\nc\n", `{"edits":[{"path":"f.txt","old_text":"b","new_text":"B"}]}`, "Successfully replaced text in f.txt.", "a\nB\nc\n", false},
		{"all", "x1 x2 x3\n", `{"edits":[{"path":"f.txt","old_text":"x","new_text":"y","all":true}]}`, "Successfully replaced 3 occurrences in f.txt.", "y1 y2 y3\n", false},
		{"not found", "a\n", `{"edits":[{"path":"f.txt","old_text":"zz","new_text":"y"}]}`, "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.", "a\n", true},
		{"empty old_text", "a\n", `{"edits":[{"path":"f.txt","old_text":"","new_text":"y"}]}`, "old_text must not be empty.", "a\n", true},
		{"identical", "a\n", `{"edits":[{"path":"f.txt","old_text":"a","new_text":"a"}]}`, "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", "a\n", true},
		{"ambiguous", "x = 1\ny\nx = 1\n", `{"edits":[{"path":"f.txt","old_text":"x = 1","new_text":"z"}]}`,
			"Found 2 occurrences in f.txt:\n\n  1 | x = 1\n  2 | y\n  3 | x = 1\n\n  1 | x = 1\n  2 | y\n  3 | x = 1\n\nAdd more context lines to disambiguate.", "x = 1\ny\nx = 1\n", true},
		{"crlf kept", "one\r\ntwo\r\nthree\r\n", `{"edits":[{"path":"f.txt","old_text":"one\ntwo","new_text":"1\n2"}]}`, "Successfully replaced text in f.txt.", "1\r\n2\r\nthree\r\n", false},
		{"bom kept", "\uFEFFhello world\n", `{"edits":[{"path":"f.txt","old_text":"hello","new_text":"bye"}]}`, "Successfully replaced text in f.txt.", "\uFEFFbye world\n", false},
		{"notebook", "{}", `{"edits":[{"path":"n.ipynb","old_text":"a","new_text":"b"}]}`, "Cannot edit Jupyter notebooks with the Edit tool. Use the NotebookEdit tool instead.", "{}", true},
		{"missing file", "a\n", `{"edits":[{"path":"gone.txt","old_text":"a","new_text":"b"}]}`, "File not found: gone.txt", "a\n", true},
		{"no entries", "a\n", `{"edits":[]}`, "edits must contain at least one entry", "a\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"f.txt": tt.file})
			wantText(t, call(t, NewEdit(Options{Cwd: dir}), tt.args), tt.want, tt.isErr, false)
			if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != tt.after {
				t.Errorf("file after: %q, want %q", b, tt.after)
			}
		})
	}
}

func TestEditOccurrencePreviewsAreBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("w", 100)
	content := strings.Repeat("hit "+long+"\n", 7)
	dir := tree(t, map[string]string{"f.txt": content})
	got := text(call(t, NewEdit(Options{Cwd: dir}), `{"edits":[{"path":"f.txt","old_text":"hit","new_text":"x"}]}`))
	if !strings.HasPrefix(got, "Found 7 occurrences in f.txt (showing first 5 of 7):\n\n") {
		t.Errorf("head %q", got[:60])
	}
	if want := "  1 | hit " + strings.Repeat("w", 75) + "…"; !strings.Contains(got, want) {
		t.Errorf("line not cut at 80 characters: %q", got[:200])
	}
}

func TestEditDiffDetails(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"f.txt": numbered(10)})
	res := call(t, NewEdit(Options{Cwd: dir}), `{"edits":[{"path":"f.txt","old_text":"line 6\n","new_text":"six\nsix and a half\n"}]}`)
	d := details(t, res)
	// Two lines of context; the lines after the change carry their new numbers.
	want := " 4 line 4\n 5 line 5\n-6 line 6\n+6 six\n+7 six and a half\n 8 line 7\n 9 line 8"
	if d["diff"] != want || d["firstChangedLine"] != 6.0 {
		t.Errorf("diff %q first %v", d["diff"], d["firstChangedLine"])
	}
}

func TestEditSeveralEntries(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "one two\n", "b.txt": "three\n"})
	res := call(t, NewEdit(Options{Cwd: dir}), `{"edits":[
		{"path":"a.txt","old_text":"one","new_text":"1"},
		{"path":"b.txt","old_text":"nope","new_text":"x"},
		{"path":"a.txt","old_text":"two","new_text":"2"}]}`)
	wantText(t, res, "Successfully replaced text in a.txt.\n"+
		"Error editing b.txt: Could not find the exact text in b.txt. The old text must match exactly including all whitespace and newlines.\n"+
		"Successfully replaced text in a.txt.", false, false)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "1 2\n" {
		t.Errorf("a.txt %q", b)
	}
	per, _ := details(t, res)["perFileResults"].([]any)
	if len(per) != 3 || per[1].(map[string]any)["error"] == nil || per[0].(map[string]any)["error"] != nil {
		t.Errorf("perFileResults %v", per)
	}
}

func TestEditCancelledContextStillConsistent(t *testing.T) {
	t.Parallel()
	// edit is not abortable (an abort must not leave half an edit), so a
	// cancelled context still applies the whole edit or none of it.
	dir := tree(t, map[string]string{"f.txt": "a\n"})
	res, err := NewEdit(Options{Cwd: dir}).Run(context.Background(), engine.ToolCall{Arguments: []byte(`{"edits":[{"path":"f.txt","old_text":"a","new_text":"b"}]}`)}, nil)
	if err != nil || res.IsError {
		t.Fatalf("%q %v", text(res), err)
	}
	res, err = NewEdit(Options{Cwd: dir}).Run(cancelled(), engine.ToolCall{Arguments: []byte(`{"edits":[{"path":"f.txt","old_text":"b","new_text":"c"}]}`)}, nil)
	if err != nil || res.IsError {
		t.Fatalf("%q %v", text(res), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "c\n" {
		t.Errorf("file %q", b)
	}
}
