package sessionfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// spaced writes a line as Python's json.dumps does: ", " and ": " between
// tokens, and a space inside brackets for good measure.
func spaced(line []byte) []byte {
	var out []byte
	for i := 0; i < len(line); {
		switch c := line[i]; c {
		case '"':
			end := stringEnd(line, i)
			out = append(out, line[i:end]...)
			i = end
			continue
		case ',', ':':
			out = append(out, c, ' ')
		case '{', '[':
			out = append(out, c, ' ', '\t')
		case '}', ']':
			out = append(out, ' ', c)
		default:
			out = append(out, c)
		}
		i++
	}
	return out
}

// A file written with spaces between tokens loads to the same entries as
// the compact original, through the fast decoder.
func TestLoadSpacedFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "original.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, l := range bytes.SplitAfter(raw, []byte{'\n'}) {
		out = append(out, spaced(l)...)
	}
	p := filepath.Join(t.TempDir(), "spaced.jsonl")
	os.WriteFile(p, out, 0o600)
	want, err := Load(filepath.Join("testdata", "original.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil || len(got.Warnings) != 0 {
		t.Fatalf("%v %q", err, got.Warnings)
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%d entries, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range want.Entries {
		if g, w := got.Entries[i].AppendJSON(nil), want.Entries[i].AppendJSON(nil); !bytes.Equal(g, w) {
			t.Errorf("entry %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

// Compaction drops only whitespace that touches a structural character:
// what was invalid stays invalid, strings are untouched, and the warning
// for a bad line is the one its own text gives.
func TestCompactJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1, "b" : [ 1 , 2 ] }`, `{"a":1,"b":[1,2]}`},
		{`{"a": "x , y : { "}`, `{"a":"x , y : { "}`},
		{`{"a": "q\" , " , "b": 2}`, `{"a":"q\" , ","b":2}`},
		{`{"a": "bs\\", "b": 2}`, `{"a":"bs\\","b":2}`},
		{`{"a": 1 2}`, `{"a":1 2}`},
		{`{"a": true false}`, `{"a":true false}`},
		{` {"a":1} `, `{"a":1}`},
	} {
		got, _ := compactJSON(nil, []byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("compactJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	bad := []byte(`{"type": "message", "id": "a1b2c3d4", "parentId": null, "timestamp": 1 2}`)
	var d engine.EntryDecoder
	var scratch []byte
	_, want := engine.DecodeEntry(bad)
	if _, err := decodeLine(&d, bad, &scratch); err == nil || err.Error() != want.Error() {
		t.Errorf("bad line: %v, want %v", err, want)
	}
}
