package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// editTestArgs is the JSON arguments of an edit call with one entry per
// element of entries.
func editTestArgs(entries ...editEntry) string {
	b, err := json.Marshal(editArgs{Edits: entries})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// editTestRead returns the content of dir/name.
func editTestRead(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	editTestNotFound  = "Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines."
	editTestIdentical = "No changes made to %s. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
	editTestNotebook  = "Cannot edit Jupyter notebooks with the Edit tool. Use the NotebookEdit tool instead."
)

func TestEditToolSingleEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string // content of f.txt
		entry   editEntry
		want    string
		isErr   bool
		after   string // content of f.txt afterwards
		details string // exact details JSON on success; "" skips
	}{
		{name: "unique replace", file: "alpha\nbeta\ngamma\n",
			entry: editEntry{Path: "f.txt", OldText: "beta", NewText: "BETA"},
			want:  "Successfully replaced text in f.txt.", after: "alpha\nBETA\ngamma\n",
			details: `{"path":"f.txt","diff":" 1 alpha\n-2 beta\n+2 BETA\n 3 gamma","firstChangedLine":2,"replacements":1}`},
		{name: "multi-line old text", file: "a\nb\nc\nd\n",
			entry: editEntry{Path: "f.txt", OldText: "b\nc\n", NewText: "x\n"},
			want:  "Successfully replaced text in f.txt.", after: "a\nx\nd\n",
			details: `{"path":"f.txt","diff":" 1 a\n-2 b\n-3 c\n+2 x\n 3 d","firstChangedLine":2,"replacements":1}`},
		{name: "part of a line", file: "x := foo(1)\n",
			entry: editEntry{Path: "f.txt", OldText: "foo(1)", NewText: "bar(2)"},
			want:  "Successfully replaced text in f.txt.", after: "x := bar(2)\n"},
		{name: "delete text", file: "keep drop keep\n",
			entry: editEntry{Path: "f.txt", OldText: " drop", NewText: ""},
			want:  "Successfully replaced text in f.txt.", after: "keep keep\n"},
		{name: "all with several occurrences", file: "x\nx\ny\nx\n",
			entry: editEntry{Path: "f.txt", OldText: "x", NewText: "z", All: true},
			want:  "Successfully replaced 3 occurrences in f.txt.", after: "z\nz\ny\nz\n",
			details: `{"path":"f.txt","diff":"-1 x\n-2 x\n-3 y\n-4 x\n+1 z\n+2 z\n+3 y\n+4 z","firstChangedLine":1,"replacements":3}`},
		{name: "all with occurrences on one line", file: "aXbXc\n",
			entry: editEntry{Path: "f.txt", OldText: "X", NewText: "-", All: true},
			want:  "Successfully replaced 2 occurrences in f.txt.", after: "a-b-c\n"},
		{name: "all with a single occurrence", file: "one two\n",
			entry: editEntry{Path: "f.txt", OldText: "two", NewText: "2", All: true},
			want:  "Successfully replaced text in f.txt.", after: "one 2\n",
			details: `{"path":"f.txt","diff":"-1 one two\n+1 one 2","firstChangedLine":1,"replacements":1}`},
		{name: "all does not re-match its own output", file: "aa\n",
			entry: editEntry{Path: "f.txt", OldText: "a", NewText: "aa", All: true},
			want:  "Successfully replaced 2 occurrences in f.txt.", after: "aaaa\n"},
		{name: "not found", file: "alpha\n",
			entry: editEntry{Path: "f.txt", OldText: "omega", NewText: "x"},
			want:  fmt.Sprintf(editTestNotFound, "f.txt"), isErr: true, after: "alpha\n"},
		{name: "matching is case-sensitive", file: "alpha\n",
			entry: editEntry{Path: "f.txt", OldText: "Alpha", NewText: "x"},
			want:  fmt.Sprintf(editTestNotFound, "f.txt"), isErr: true, after: "alpha\n"},
		{name: "matching is whitespace-exact", file: "if x {\n\treturn\n}\n",
			entry: editEntry{Path: "f.txt", OldText: "    return", NewText: "x"},
			want:  fmt.Sprintf(editTestNotFound, "f.txt"), isErr: true, after: "if x {\n\treturn\n}\n"},
		{name: "not found in an empty file", file: "",
			entry: editEntry{Path: "f.txt", OldText: "x", NewText: "y"},
			want:  fmt.Sprintf(editTestNotFound, "f.txt"), isErr: true, after: ""},
		{name: "empty old_text", file: "alpha\n",
			entry: editEntry{Path: "f.txt", OldText: "", NewText: "x"},
			want:  "old_text must not be empty.", isErr: true, after: "alpha\n"},
		{name: "identical result", file: "alpha\n",
			entry: editEntry{Path: "f.txt", OldText: "alpha", NewText: "alpha"},
			want:  fmt.Sprintf(editTestIdentical, "f.txt"), isErr: true, after: "alpha\n"},
		{name: "identical result with all", file: "a a\n",
			entry: editEntry{Path: "f.txt", OldText: "a", NewText: "a", All: true},
			want:  fmt.Sprintf(editTestIdentical, "f.txt"), isErr: true, after: "a a\n"},
		{name: "ambiguity is reported before identity", file: "a\na\n",
			entry: editEntry{Path: "f.txt", OldText: "a", NewText: "a"},
			want:  "Found 2 occurrences in f.txt:\n\n  1 | a\n  2 | a\n\n  1 | a\n  2 | a\n\nAdd more context lines to disambiguate.",
			isErr: true, after: "a\na\n"},
		{name: "missing file", file: "alpha\n",
			entry: editEntry{Path: "nope.txt", OldText: "alpha", NewText: "x"},
			want:  "File not found: nope.txt", isErr: true, after: "alpha\n"},
		{name: "missing file in a missing directory", file: "alpha\n",
			entry: editEntry{Path: "no/such/f.txt", OldText: "alpha", NewText: "x"},
			want:  "File not found: no/such/f.txt", isErr: true, after: "alpha\n"},
		{name: "empty old_text is checked before the file", file: "alpha\n",
			entry: editEntry{Path: "nope.txt", OldText: "", NewText: "x"},
			want:  "old_text must not be empty.", isErr: true, after: "alpha\n"},
		{name: "notebook", file: "alpha\n",
			entry: editEntry{Path: "analysis.ipynb", OldText: "a", NewText: "b"},
			want:  editTestNotebook, isErr: true, after: "alpha\n"},
		{name: "notebook in capitals", file: "alpha\n",
			entry: editEntry{Path: "sub/NB.IPYNB", OldText: "", NewText: "b"},
			want:  editTestNotebook, isErr: true, after: "alpha\n"},
		{name: "a directory", file: "alpha\n",
			entry: editEntry{Path: "d", OldText: "a", NewText: "b"},
			want:  "Cannot edit d: it is a directory", isErr: true, after: "alpha\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"f.txt": tt.file, "d/": "", "analysis.ipynb": "{}"})
			res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(tt.entry))
			wantText(t, res, tt.want, tt.isErr, false)
			if tt.isErr && string(res.Details) != "{}" {
				t.Errorf("error details %s", res.Details)
			}
			if tt.details != "" && string(res.Details) != tt.details {
				t.Errorf("details:\n got %s\nwant %s", res.Details, tt.details)
			}
			if got := editTestRead(t, dir, "f.txt"); got != tt.after {
				t.Errorf("f.txt after: %q, want %q", got, tt.after)
			}
			if got := editTestRead(t, dir, "analysis.ipynb"); got != "{}" {
				t.Errorf("notebook changed: %q", got)
			}
		})
	}
}

func TestEditToolAmbiguousPreviews(t *testing.T) {
	t.Parallel()
	t.Run("two occurrences with context", func(t *testing.T) {
		t.Parallel()
		file := "one\ndup\nthree\nfour\nfive\nsix\nseven\neight\ndup\nten\neleven\ntwelve\n"
		dir := tree(t, map[string]string{"f.txt": file})
		res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "f.txt", OldText: "dup", NewText: "x"}))
		// ±5 lines around each occurrence, the numbers padded to the widest
		// one of that preview.
		want := "Found 2 occurrences in f.txt:\n\n" +
			"  1 | one\n  2 | dup\n  3 | three\n  4 | four\n  5 | five\n  6 | six\n  7 | seven\n\n" +
			"   4 | four\n   5 | five\n   6 | six\n   7 | seven\n   8 | eight\n   9 | dup\n  10 | ten\n  11 | eleven\n  12 | twelve\n\n" +
			"Add more context lines to disambiguate."
		wantText(t, res, want, true, false)
		if got := editTestRead(t, dir, "f.txt"); got != file {
			t.Errorf("file changed: %q", got)
		}
	})
	t.Run("multi-line old text previews its first line", func(t *testing.T) {
		t.Parallel()
		dir := tree(t, map[string]string{"f.txt": "a\nb\na\nb\n"})
		res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "f.txt", OldText: "a\nb", NewText: "x"}))
		wantText(t, res, "Found 2 occurrences in f.txt:\n\n  1 | a\n  2 | b\n  3 | a\n  4 | b\n\n  1 | a\n  2 | b\n  3 | a\n  4 | b\n\nAdd more context lines to disambiguate.", true, false)
	})
	t.Run("long lines are cut to 80 characters", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("é", 100) // runes, not bytes, are counted
		exact := strings.Repeat("k", 80)
		dir := tree(t, map[string]string{"f.txt": long + "\nhit\n" + exact + "\nhit\n"})
		res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "f.txt", OldText: "hit", NewText: "x"}))
		preview := "  1 | " + strings.Repeat("é", 79) + "…\n  2 | hit\n  3 | " + exact + "\n  4 | hit"
		wantText(t, res, "Found 2 occurrences in f.txt:\n\n"+preview+"\n\n"+preview+"\n\nAdd more context lines to disambiguate.", true, false)
	})
	t.Run("at most five previews", func(t *testing.T) {
		t.Parallel()
		var lines []string
		for i := range 7 {
			lines = append(lines, fmt.Sprintf("match %d", i+1))
			for j := range 20 {
				lines = append(lines, fmt.Sprintf("filler %d.%d", i+1, j+1))
			}
		}
		dir := tree(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
		got := text(call(t, NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "f.txt", OldText: "match", NewText: "x"})))
		head, rest, _ := strings.Cut(got, "\n\n")
		if head != "Found 7 occurrences in f.txt (showing first 5 of 7):" {
			t.Errorf("head %q", head)
		}
		if !strings.HasSuffix(rest, "\n\nAdd more context lines to disambiguate.") {
			t.Errorf("tail %q", rest[max(len(rest)-80, 0):])
		}
		shown := regexp.MustCompile(`(?m)^ +\d+ \| match (\d)$`).FindAllStringSubmatch(rest, -1)
		if len(shown) != 5 || shown[0][1] != "1" || shown[4][1] != "5" {
			t.Errorf("previewed occurrences %v", shown)
		}
		if n := strings.Count(rest, "\n\n"); n != 5 {
			t.Errorf("%d blocks, want 5 previews and the hint", n)
		}
	})
}

func TestEditToolLineEndingsAndBOM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		entry      editEntry
		after      string
		diff       string
	}{
		{"CRLF file, LF old and new text", "a\r\nb\r\nc\r\n",
			editEntry{Path: "f.txt", OldText: "a\nb", NewText: "A\nB\nX"},
			"A\r\nB\r\nX\r\nc\r\n", "-1 a\n-2 b\n+1 A\n+2 B\n+3 X\n 4 c"},
		{"CRLF file, CRLF old and new text", "a\r\nb\r\nc\r\n",
			editEntry{Path: "f.txt", OldText: "b\r\nc", NewText: "B\r\nC"},
			"a\r\nB\r\nC\r\n", " 1 a\n-2 b\n-3 c\n+2 B\n+3 C"},
		{"LF file, CRLF old text", "a\nb\nc\n",
			editEntry{Path: "f.txt", OldText: "a\r\nb", NewText: "x"},
			"x\nc\n", "-1 a\n-2 b\n+1 x\n 2 c"},
		{"BOM kept", "\uFEFFhello world\n",
			editEntry{Path: "f.txt", OldText: "hello", NewText: "bye"},
			"\uFEFFbye world\n", "-1 hello world\n+1 bye world"},
		{"BOM and CRLF kept", "\uFEFFa\r\nb\r\n",
			editEntry{Path: "f.txt", OldText: "a\nb", NewText: "c"},
			"\uFEFFc\r\n", "-1 a\n-2 b\n+1 c"},
		{"BOM is not part of the text", "\uFEFFstart\n",
			editEntry{Path: "f.txt", OldText: "\uFEFFstart", NewText: "x"},
			"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"f.txt": tt.file})
			res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(tt.entry))
			if tt.after == "" {
				wantText(t, res, fmt.Sprintf(editTestNotFound, "f.txt"), true, false)
				if got := editTestRead(t, dir, "f.txt"); got != tt.file {
					t.Errorf("file changed: %q", got)
				}
				return
			}
			wantText(t, res, "Successfully replaced text in f.txt.", false, false)
			if got := editTestRead(t, dir, "f.txt"); got != tt.after {
				t.Errorf("file after: %q, want %q", got, tt.after)
			}
			// The diff is of the normalised text: no CR, no BOM.
			if d := details(t, res); d["diff"] != tt.diff {
				t.Errorf("diff %q, want %q", d["diff"], tt.diff)
			}
		})
	}
}

func TestEditToolDiffDetails(t *testing.T) {
	t.Parallel()
	ten := readTestLines(10)
	tests := []struct {
		name     string
		old, new string
		diff     string
		first    int
	}{
		{"middle line", "l6", "L6", " 4 l4\n 5 l5\n-6 l6\n+6 L6\n 7 l7\n 8 l8", 6},
		{"first line", "l1\n", "L1\n", "-1 l1\n+1 L1\n 2 l2\n 3 l3", 1},
		{"second line", "l2", "L2", " 1 l1\n-2 l2\n+2 L2\n 3 l3\n 4 l4", 2},
		{"last line", "l10", "L10", " 8 l8\n 9 l9\n-10 l10\n+10 L10", 10},
		{"inserted line", "l5\n", "l5\nnew\n", " 4 l4\n 5 l5\n+6 new\n 7 l6\n 8 l7", 6},
		{"deleted line", "l5\n", "", " 3 l3\n 4 l4\n-5 l5\n 5 l6\n 6 l7", 5},
		{"one line becomes two", "l9\n", "nine\nNINE\n", " 7 l7\n 8 l8\n-9 l9\n+9 nine\n+10 NINE\n 11 l10", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"f.txt": ten})
			res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(editEntry{Path: "f.txt", OldText: tt.old, NewText: tt.new}))
			wantText(t, res, "Successfully replaced text in f.txt.", false, false)
			var d editFileResult
			if err := json.Unmarshal(res.Details, &d); err != nil {
				t.Fatal(err)
			}
			if d.Diff != tt.diff || d.FirstChangedLine != tt.first || d.Replacements != 1 || d.Path != "f.txt" || d.Error != "" {
				t.Errorf("details %+v\nwant diff %q first %d", d, tt.diff, tt.first)
			}
		})
	}
}

func TestEditToolSeveralEntries(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "one two\ndup\ndup\n", "b.txt": "bee\n"})
	res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(
		editEntry{Path: "a.txt", OldText: "one", NewText: "1"},
		editEntry{Path: "missing.txt", OldText: "x", NewText: "y"},
		editEntry{Path: "a.txt", OldText: "dup", NewText: "D"}, // ambiguous; sees entry 1's result
		editEntry{Path: "a.txt", OldText: "dup", NewText: "D", All: true},
		editEntry{Path: "n.ipynb", OldText: "x", NewText: "y"},
		editEntry{Path: "b.txt", OldText: "bee", NewText: "B"},
		editEntry{Path: "b.txt", OldText: "bee", NewText: "B"}, // already replaced by the one before
	))
	want := strings.Join([]string{
		"Successfully replaced text in a.txt.",
		"Error editing missing.txt: File not found: missing.txt",
		"Error editing a.txt: Found 2 occurrences in a.txt:\n\n  1 | 1 two\n  2 | dup\n  3 | dup\n\n  1 | 1 two\n  2 | dup\n  3 | dup\n\nAdd more context lines to disambiguate.",
		"Successfully replaced 2 occurrences in a.txt.",
		"Error editing n.ipynb: " + editTestNotebook,
		"Successfully replaced text in b.txt.",
		"Error editing b.txt: " + fmt.Sprintf(editTestNotFound, "b.txt"),
	}, "\n")
	wantText(t, res, want, false, false) // failures do not make the call an error
	if got := editTestRead(t, dir, "a.txt"); got != "1 two\nD\nD\n" {
		t.Errorf("a.txt %q", got)
	}
	if got := editTestRead(t, dir, "b.txt"); got != "B\n" {
		t.Errorf("b.txt %q", got)
	}

	var d struct {
		PerFileResults []json.RawMessage `json:"perFileResults"`
	}
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatal(err)
	}
	wantPer := []string{
		`{"path":"a.txt","diff":"-1 one two\n+1 1 two\n 2 dup\n 3 dup","firstChangedLine":1,"replacements":1}`,
		`{"path":"missing.txt","error":"File not found: missing.txt"}`,
		`{"path":"a.txt","error":"Found 2 occurrences in a.txt:\n\n  1 | 1 two\n  2 | dup\n  3 | dup\n\n  1 | 1 two\n  2 | dup\n  3 | dup\n\nAdd more context lines to disambiguate."}`,
		`{"path":"a.txt","diff":" 1 1 two\n-2 dup\n-3 dup\n+2 D\n+3 D","firstChangedLine":2,"replacements":2}`,
		`{"path":"n.ipynb","error":"` + editTestNotebook + `"}`,
		`{"path":"b.txt","diff":"-1 bee\n+1 B","firstChangedLine":1,"replacements":1}`,
		`{"path":"b.txt","error":"` + fmt.Sprintf(editTestNotFound, "b.txt") + `"}`,
	}
	if len(d.PerFileResults) != len(wantPer) {
		t.Fatalf("%d perFileResults, want %d: %s", len(d.PerFileResults), len(wantPer), res.Details)
	}
	for i, w := range wantPer {
		// Raw JSON: the field order and the omitted empty fields matter.
		if w = strings.ReplaceAll(w, "\n", `\n`); string(d.PerFileResults[i]) != w {
			t.Errorf("perFileResults[%d]:\n got %s\nwant %s", i, d.PerFileResults[i], w)
		}
	}
}

func TestEditToolSeveralEntriesAllFailing(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"a.txt": "a\n"})
	res := call(t, NewEdit(Options{Cwd: dir}), editTestArgs(
		editEntry{Path: "a.txt", OldText: "", NewText: "x"},
		editEntry{Path: "gone.txt", OldText: "a", NewText: "b"},
	))
	wantText(t, res, "Error editing a.txt: old_text must not be empty.\nError editing gone.txt: File not found: gone.txt", false, false)
	if got := string(res.Details); got != `{"perFileResults":[{"path":"a.txt","error":"old_text must not be empty."},{"path":"gone.txt","error":"File not found: gone.txt"}]}` {
		t.Errorf("details %s", got)
	}
}

func TestEditToolKeepsFileModeAndSymlinks(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"run.sh": "echo old\n", "real/t.txt": "old\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "t.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	edit := NewEdit(Options{Cwd: dir})
	wantText(t, call(t, edit, editTestArgs(editEntry{Path: "run.sh", OldText: "old", NewText: "new"})), "Successfully replaced text in run.sh.", false, false)
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v (%v)", fi.Mode(), err)
	}
	wantText(t, call(t, edit, editTestArgs(editEntry{Path: "link.txt", OldText: "old", NewText: "new"})), "Successfully replaced text in link.txt.", false, false)
	if fi, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink (%v, %v)", fi.Mode(), err)
	}
	if got := editTestRead(t, dir, "real/t.txt"); got != "new\n" {
		t.Errorf("target %q", got)
	}
	writeTestNoTemps(t, dir)
	writeTestNoTemps(t, filepath.Join(dir, "real"))
}

func TestEditToolBadArguments(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"f.txt": "a\n"})
	edit := NewEdit(Options{Cwd: dir})
	tests := []struct {
		name, args string
		want       string // exact text, or a prefix when it ends in "…"
	}{
		{"no arguments", ``, "edits must contain at least one entry"},
		{"empty object", `{}`, "edits must contain at least one entry"},
		{"empty edits", `{"edits":[]}`, "edits must contain at least one entry"},
		{"null edits", `{"edits":null}`, "edits must contain at least one entry"},
		{"empty entry", `{"edits":[{}]}`, "Path must not be empty"},
		{"blank path", `{"edits":[{"path":" ","old_text":"a","new_text":"b"}]}`, "Path must not be empty"},
		{"edits is a string", `{"edits":"f.txt"}`, "Invalid edit arguments: …"},
		{"edits is an object", `{"edits":{"path":"f.txt","old_text":"a","new_text":"b"}}`, "Invalid edit arguments: …"},
		{"number path", `{"edits":[{"path":1,"old_text":"a","new_text":"b"}]}`, "Invalid edit arguments: …"},
		{"string all", `{"edits":[{"path":"f.txt","old_text":"a","new_text":"b","all":"yes"}]}`, "Invalid edit arguments: …"},
		{"not JSON", `edits`, "Invalid edit arguments: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := edit.Run(t.Context(), engine.ToolCall{ID: "c1", Name: "edit", Arguments: []byte(tt.args)}, nil)
			wantFailure(t, res, err, tt.want)
		})
	}
	t.Cleanup(func() {
		if got := editTestRead(t, dir, "f.txt"); got != "a\n" {
			t.Errorf("f.txt changed by a bad call: %q", got)
		}
	})
}

// edit is non-abortable: with the context already cancelled it still
// applies the whole call and returns its normal result without a Go error.
func TestEditToolCancelledContext(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"f.txt": "alpha\nbeta\n"})
	edit := NewEdit(Options{Cwd: dir})
	res, err := edit.Run(cancelled(), engine.ToolCall{ID: "c1", Name: "edit", Arguments: []byte(editTestArgs(
		editEntry{Path: "f.txt", OldText: "alpha", NewText: "A"},
		editEntry{Path: "f.txt", OldText: "beta", NewText: "B"},
	))}, nil)
	if err != nil {
		t.Fatalf("Go error %v", err)
	}
	wantText(t, res, "Successfully replaced text in f.txt.\nSuccessfully replaced text in f.txt.", false, false)
	if got := editTestRead(t, dir, "f.txt"); got != "A\nB\n" {
		t.Errorf("f.txt %q", got)
	}
	res, err = edit.Run(cancelled(), engine.ToolCall{ID: "c2", Name: "edit", Arguments: []byte(editTestArgs(editEntry{Path: "f.txt", OldText: "zzz", NewText: "y"}))}, nil)
	if err != nil || !res.IsError || text(res) != fmt.Sprintf(editTestNotFound, "f.txt") {
		t.Errorf("got %q isError=%v err=%v", text(res), res.IsError, err)
	}
}

func TestEditToolPermissionDenied(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads and writes whatever the mode")
	}
	dir := tree(t, map[string]string{"secret.txt": "a\n", "ro/f.txt": "a\n"})
	if err := os.Chmod(filepath.Join(dir, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	edit := NewEdit(Options{Cwd: dir})
	wantText(t, call(t, edit, editTestArgs(editEntry{Path: "secret.txt", OldText: "a", NewText: "b"})), "Cannot read secret.txt: permission denied", true, false)
	// The temporary file cannot be created beside it: the file is untouched.
	wantText(t, call(t, edit, editTestArgs(editEntry{Path: "ro/f.txt", OldText: "a", NewText: "b"})), "Cannot write ro/f.txt: permission denied", true, false)
	if got := editTestRead(t, dir, "ro/f.txt"); got != "a\n" {
		t.Errorf("ro/f.txt %q", got)
	}
}
