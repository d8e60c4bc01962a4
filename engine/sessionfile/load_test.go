package sessionfile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// The original's file, written by hand from agent-core.md §5.2 and
// session-manager.ts (every entry type, message entries of every role,
// a forked header), loads without a warning and every line is written
// back byte for byte.
func TestLoadOriginalFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "original.jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 0 {
		t.Fatalf("warnings: %q", s.Warnings)
	}
	h := s.Header
	if h.ID != "1b2c3d4e5f607182" || h.Title != "Fix the parser" || h.TitleSource != "user" ||
		h.Cwd != "/home/u/code/pi" || !strings.HasSuffix(h.ParentSession, "0a0b0c0d0e0f1011.jsonl") || h.Version != 3 {
		t.Errorf("header %+v", h)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte{'\n'}), []byte{'\n'})
	if len(s.Entries) != len(lines)-1 || s.Leaf != "a1000013" {
		t.Fatalf("%d entries, leaf %q", len(s.Entries), s.Leaf)
	}
	if got := string(s.Header.AppendJSON(nil)); got != string(lines[0]) {
		t.Errorf("header:\n got %s\nwant %s", got, lines[0])
	}
	for i, e := range s.Entries {
		if got := string(e.AppendJSON(nil)); got != string(lines[i+1]) {
			t.Errorf("line %d:\n got %s\nwant %s", i+2, got, lines[i+1])
		}
	}
	types := map[string]int{}
	for _, e := range s.Entries {
		types[e.Type]++
	}
	for _, typ := range []string{"message", "model_change", "thinking_level_change", "compaction",
		"branch_summary", "custom", "custom_message", "label", "ttsr_injection", "service_tier_change", "mode_change"} {
		if types[typ] == 0 {
			t.Errorf("fixture lacks a %s entry", typ)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.jsonl"))
	if !errors.Is(err, ErrNotSession) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	for name, content := range map[string]string{
		"empty":      "",
		"not json":   "hello\n",
		"not header": `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":{"role":"user","content":"x","timestamp":1}}` + "\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if !errors.Is(err, ErrNotSession) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A bad line in the middle is skipped with a warning; the rest loads.
func TestLoadSkipsBadLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	es := conversation(2)
	appendAll(t, s, es)
	s.Close()
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte{'\n'})
	var out []byte
	for i, l := range lines {
		out = append(out, l...)
		if i == 3 {
			out = append(out, "{not json\n\n"...)
		}
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	sess, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Entries) != len(es) || len(sess.Warnings) != 1 || !strings.Contains(sess.Warnings[0], "line 5") {
		t.Fatalf("%d entries, warnings %q", len(sess.Entries), sess.Warnings)
	}
}

// A crash in the middle of the last write: every complete entry loads,
// a warning names the torn line, and appending after it starts on a
// fresh line.
func TestCrashTornLastLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	es := conversation(3)
	appendAll(t, s, es)
	s.Close()
	fi, _ := os.Stat(path)
	last := es[len(es)-1].AppendJSON(nil)
	// Cut the file in the middle of the last line.
	if err := os.Truncate(path, fi.Size()-int64(len(last)/2)); err != nil {
		t.Fatal(err)
	}
	sess, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Entries) != len(es)-1 {
		t.Fatalf("%d entries, want %d", len(sess.Entries), len(es)-1)
	}
	want := "line " + strconv.Itoa(len(es)+1) + ": torn last line"
	if len(sess.Warnings) != 1 || !strings.HasPrefix(sess.Warnings[0], want) {
		t.Fatalf("warnings %q, want %q…", sess.Warnings, want)
	}
	if sess.Leaf != es[len(es)-2].ID {
		t.Fatalf("leaf %q", sess.Leaf)
	}
	st, err := OpenAppend(path, sess)
	if err != nil {
		t.Fatal(err)
	}
	good := userEntry("after the crash")
	good.ID, good.ParentID, good.Timestamp = "bbbbbbbb", sess.Leaf, t0
	if err := st.Append(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	st.Close()
	sess, err = Load(path)
	if err != nil || len(sess.Warnings) != 0 {
		t.Fatalf("reload: %v %q", err, sess.Warnings)
	}
	if len(sess.Entries) != len(es) || sess.Leaf != "bbbbbbbb" {
		t.Fatalf("%d entries, leaf %q", len(sess.Entries), sess.Leaf)
	}
	checkFormat(t, fileLines(t, path))
}

// A file whose last line is complete but has no newline (written by
// another tool) is continued on a fresh line.
func TestOpenAppendNoFinalNewline(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	es := conversation(1)
	var b []byte
	h := newHeader()
	h.Version = 3
	b = append(h.AppendJSON(b), '\n')
	for i, e := range es {
		if i > 0 {
			b = append(b, '\n')
		}
		b = e.AppendJSON(b)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sess, err := Load(path)
	if err != nil || len(sess.Warnings) != 0 || len(sess.Entries) != len(es) {
		t.Fatalf("load: %v %q %d", err, sess.Warnings, len(sess.Entries))
	}
	st, err := OpenAppend(path, sess)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine.Entry{Type: engine.EntryLabel, ID: "cccccccc", ParentID: sess.Leaf, Label: &engine.Label{TargetID: es[0].ID, Text: "x"}}
	if err := st.Append(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	st.Close()
	sess, err = Load(path)
	if err != nil || len(sess.Warnings) != 0 || sess.Leaf != "cccccccc" {
		t.Fatalf("reload: %v %q %q", err, sess.Warnings, sess.Leaf)
	}
}

// Lines longer than the reader's buffer load.
func TestLoadLongLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	big := strings.Repeat("x", 3<<20) // over the 500k limit: cut, still 500 kB
	many := strings.Repeat("y\n", 200_000)
	appendAll(t, s, chain(userEntry(big), assistantEntry(many), userEntry("after")))
	s.Close()
	sess, err := Load(path)
	if err != nil || len(sess.Warnings) != 0 || len(sess.Entries) != 3 {
		t.Fatalf("load: %v %q %d", err, sess.Warnings, len(sess.Entries))
	}
	if got := sess.Entries[1].Message.(*engine.AssistantMessage).Content[0].Text; got != many {
		t.Fatalf("long text changed: %d bytes", len(got))
	}
}

// A file of many chunks loads in file order, and the warnings name the
// right lines, however the chunks were spread over goroutines.
func TestLoadManyChunks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	es := conversation(1000)
	appendAll(t, s, es)
	s.Close()
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte{'\n'})
	lines = lines[:len(lines)-1] // the empty string after the last newline
	var out []byte
	for i, l := range lines {
		if i == 1500 {
			out = append(out, "garbage\n"...) // becomes line 1501
		}
		out = append(out, l...)
	}
	out = append(out, `{"type":"message","id":"ffff`...) // torn, line len(lines)+2
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	sess, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Entries) != len(es) {
		t.Fatalf("%d entries, want %d", len(sess.Entries), len(es))
	}
	for i, e := range sess.Entries {
		if e.ID != es[i].ID {
			t.Fatalf("entry %d is %s, want %s", i, e.ID, es[i].ID)
		}
	}
	if len(sess.Warnings) != 2 || !strings.HasPrefix(sess.Warnings[0], "line 1501: skipped") ||
		!strings.HasPrefix(sess.Warnings[1], "line "+strconv.Itoa(len(lines)+2)+": torn last line") {
		t.Fatalf("warnings %q", sess.Warnings)
	}
	if sess.Leaf != es[len(es)-1].ID {
		t.Fatalf("leaf %s", sess.Leaf)
	}
}
