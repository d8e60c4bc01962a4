package replay

import (
	"strings"
	"testing"
)

func TestCompareJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, want, got string
		ptr, what       string // "" ptr and what: equal
	}{
		{"equal, other order and spacing", `{"a":1,"b":[1,2]}`, `{ "b": [1, 2], "a": 1 }`, "", ""},
		{"numbers by value", `{"n":1.0,"m":1e2}`, `{"n":1,"m":100}`, "", ""},
		{"number and string differ", `{"id":5}`, `{"id":"5"}`, "/id", `want 5, got "5"`},
		{"nested value", `{"a":{"b":["x","y"]}}`, `{"a":{"b":["x","z"]}}`, "/a/b/1", `want "y", got "z"`},
		{"missing key", `{"a":1,"b":2}`, `{"a":1}`, "/b", "missing (want 2)"},
		{"extra key", `{"a":1}`, `{"a":1,"c":true}`, "/c", "not in the transcript (got true)"},
		{"array length", `[1,2]`, `[1]`, "", "want 2 elements, got 1"},
		{"type", `{"a":{}}`, `{"a":[]}`, "/a", "want an object, got []"},
		{"timestamp ignored at any depth", `{"m":{"timestamp":1,"t":"x"}}`, `{"m":{"timestamp":2,"t":"x"}}`, "", ""},
		{"timestamp may be absent", `{"timestamp":1}`, `{}`, "", ""},
		{"pointer escapes", `{"a/b":{"c~d":1}}`, `{"a/b":{"c~d":2}}`, "/a~1b/c~0d", "want 1, got 2"},
		{"null", `{"a":null}`, `{"a":false}`, "/a", "want null, got false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := decodeJSON([]byte(tt.want))
			if err != nil {
				t.Fatal(err)
			}
			g, err := decodeJSON([]byte(tt.got))
			if err != nil {
				t.Fatal(err)
			}
			d := compareJSON(w, g, ignoredKeys, nil)
			switch {
			case tt.what == "" && d != nil:
				t.Errorf("difference %+v, want none", d)
			case tt.what != "" && d == nil:
				t.Errorf("no difference, want %s: %s", tt.ptr, tt.what)
			case d != nil && (d.Pointer != tt.ptr || d.What != tt.what):
				t.Errorf("difference %q: %q, want %q: %q", d.Pointer, d.What, tt.ptr, tt.what)
			}
		})
	}
}

func TestCompareSkipsTopLevelOnly(t *testing.T) {
	t.Parallel()
	w, _ := decodeJSON([]byte(`{"id":"p1","x":{"id":1}}`))
	g, _ := decodeJSON([]byte(`{"id":"c9","x":{"id":2}}`))
	d := compareJSON(w, g, nil, map[string]bool{"id": true})
	if d == nil || d.Pointer != "/x/id" {
		t.Errorf("difference %+v, want /x/id (only the top-level id is the host's)", d)
	}
}

func TestDecodeJSONRefusesTwoValues(t *testing.T) {
	t.Parallel()
	if _, err := decodeJSON([]byte(`{} {}`)); err == nil {
		t.Error("two values on a line decoded")
	}
}

func TestFirstDifference(t *testing.T) {
	t.Parallel()
	if d := firstDifference([]byte(`{"a":1,"b":2}`), []byte(`{"b":2,"a":1}`)); !strings.Contains(d.What, "written differently") {
		t.Errorf("same value, other order: %+v", d)
	}
	if d := firstDifference([]byte(`{"a":1}`), []byte(`nope`)); !strings.Contains(d.What, "got nope") {
		t.Errorf("not JSON: %+v", d)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	if got := clip("ééé", 3); got != "é… (4 more bytes)" {
		t.Errorf("clip cut a character: %q", got)
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip = %q", got)
	}
}

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	lines := func(s string) []string { return strings.Split(s, " ") }
	tests := []struct {
		name, want, got, diff string
	}{
		{"equal", "a b c", "a b c", ""},
		{"one changed", "a b c d e f g h", "a b c X e f g h",
			"--- w\n+++ g\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+X\n e\n f\n g\n"},
		{"added at the end", "a b", "a b c", "--- w\n+++ g\n@@ -1,2 +1,3 @@\n a\n b\n+c\n"},
		{"removed at the start", "a b", "b", "--- w\n+++ g\n@@ -1,2 +1 @@\n-a\n b\n"},
		{"two hunks", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "1 X 3 4 5 6 7 8 9 10 11 12 13 14 Y 16",
			"--- w\n+++ g\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -12,5 +12,5 @@\n 12\n 13\n 14\n-15\n+Y\n 16\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := unifiedDiff("w", "g", lines(tt.want), lines(tt.got)); got != tt.diff {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.diff)
			}
		})
	}
}

func TestUnifiedDiffHugeMiddle(t *testing.T) {
	t.Parallel()
	// Past the table's bound the middle is shown removed, then added.
	n := 3000
	a, b := make([]string, n), make([]string, n)
	for i := range n {
		a[i], b[i] = "a"+strings.Repeat("x", i%7), "b"+strings.Repeat("y", i%5)
	}
	d := unifiedDiff("w", "g", a, b)
	if strings.Count(d, "\n-") != n || strings.Count(d, "\n+") != n+1 { // +1: the "+++" header
		t.Errorf("a wholly different middle: %d removed, %d added", strings.Count(d, "\n-"), strings.Count(d, "\n+"))
	}
}
