package sessionfile

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestStoreRewriteReplacesEntriesByID(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName(t0, "0123456789abcdef"))
	s := New(path, newHeader())
	es := conversation(3)
	appendAll(t, s, es)
	before := fileLines(t, path)
	// The second entry gets a new version; the others are copied as they
	// are, and an entry appended after the rewrite lands after them.
	n := *es[1]
	n.Message = &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("pruned")}, Attribution: "user", Timestamp: 1}
	if err := s.Rewrite([]*engine.Entry{&n}); err != nil {
		t.Fatal(err)
	}
	later := userEntry("after")
	later.ID, later.ParentID, later.Timestamp = "b0000000", es[len(es)-1].ID, t0
	appendAll(t, s, []*engine.Entry{later})
	after := fileLines(t, path)
	if len(after) != len(before)+1 {
		t.Fatalf("%d lines, want %d", len(after), len(before)+1)
	}
	for i := range before {
		want := before[i]
		if i == 2 { // header, es[0], es[1]
			want = bytes.TrimSuffix(appendLine(nil, &n), []byte{'\n'})
		}
		if !bytes.Equal(after[i], want) {
			t.Errorf("line %d:\n%s\nwant\n%s", i, after[i], want)
		}
	}
	if !bytes.Contains(after[len(after)-1], []byte(`"after"`)) {
		t.Errorf("last line %s", after[len(after)-1])
	}
	checkFormat(t, after)
}

func TestStoreRewriteBeforeTheFileExists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName(t0, "0123456789abcdef"))
	s := New(path, newHeader())
	u := userEntry("first")
	u.ID = "aaaa0001"
	appendAll(t, s, []*engine.Entry{u})
	n := *u
	n.Message = &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("second")}, Attribution: "user"}
	if err := s.Rewrite([]*engine.Entry{&n}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := fileLines(t, path)
	if len(lines) != 2 || !bytes.Contains(lines[1], []byte(`"second"`)) {
		t.Fatalf("lines %s", bytes.Join(lines, []byte("\n")))
	}
}
