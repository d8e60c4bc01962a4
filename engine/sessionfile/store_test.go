package sessionfile

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func newHeader() Header {
	return Header{ID: "0123456789abcdef", Timestamp: t0, Cwd: "/w"}
}

func appendAll(t testing.TB, s *Store, es []*engine.Entry) {
	t.Helper()
	for _, e := range es {
		if err := s.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func fileLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("file does not end with a newline: %q", b)
	}
	return bytes.Split(b[:len(b)-1], []byte{'\n'})
}

func TestStoreLazyCreation(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions", "-w")
	path := filepath.Join(dir, FileName(t0, "0123456789abcdef"))
	s := New(path, newHeader())
	es := conversation(3)
	// model, thinking, user: nothing on disk yet.
	appendAll(t, s, es[:3])
	if _, err := os.Stat(path); !os.IsNotExist(err) || s.Created() {
		t.Fatalf("file exists before the first assistant message: %v", err)
	}
	if err := s.SetTitle("My session", "user"); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, es[3:4]) // the assistant message: header and all entries
	lines := fileLines(t, path)
	if len(lines) != 5 {
		t.Fatalf("%d lines after creation", len(lines))
	}
	if !bytes.Contains(lines[0], []byte(`"title":"My session","titleSource":"user"`)) {
		t.Errorf("title kept for the first write: %s", lines[0])
	}
	appendAll(t, s, es[4:])
	lines = fileLines(t, path)
	if len(lines) != 1+len(es) {
		t.Fatalf("%d lines, want %d", len(lines), 1+len(es))
	}
	for i, e := range es {
		if got := string(lines[i+1]); got != string(e.AppendJSON(nil)) {
			t.Errorf("line %d = %s", i+2, got)
		}
	}
	checkFormat(t, lines)
	// No temporary file is left behind, and the lock is no file of its own.
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("dir holds %v", des)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("dir holds %v after Close", des)
	}
}

func TestStoreModes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	path := filepath.Join(dir, "s.jsonl")
	s := New(path, newHeader())
	appendAll(t, s, conversation(1))
	defer s.Close()
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{path, 0o600}, {dir, 0o700 | os.ModeDir}, {filepath.Join(root, "a"), 0o700 | os.ModeDir}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.want)
		}
	}
	// A header rewrite keeps the mode.
	if err := s.SetTitle("x", "user"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode() != 0o600 {
		t.Errorf("after SetTitle: mode %v", fi.Mode())
	}
}

func TestStoreSetTitleRewrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	es := conversation(2)
	appendAll(t, s, es[:5])
	if err := s.SetTitle("Renamed", "user"); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, es[5:]) // appends go to the new file
	lines := fileLines(t, path)
	want := `{"type":"session","version":3,"id":"0123456789abcdef","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","title":"Renamed","titleSource":"user"}`
	if string(lines[0]) != want {
		t.Errorf("header %s", lines[0])
	}
	if len(lines) != 1+len(es) {
		t.Fatalf("%d lines, want %d", len(lines), 1+len(es))
	}
	checkFormat(t, lines)
	sess, err := Load(path)
	if err != nil || len(sess.Warnings) != 0 || sess.Header.Title != "Renamed" {
		t.Fatalf("load: %v %v %+v", err, sess.Warnings, sess.Header)
	}
}

// TestStoreSetTitleAfterFailedCreate: once creating the file failed, a
// name is not claimed while it lives in memory only: SetTitle creates the
// file with it, or fails and keeps the old name.
func TestStoreSetTitleAfterFailedCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "sessions")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil { // a file where the folder goes
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "s.jsonl")
	s := New(path, newHeader())
	es := conversation(1)
	for _, e := range es {
		_ = s.Append(context.Background(), e) // the assistant's append fails: not created
	}
	if s.Created() {
		t.Fatal("created")
	}
	if err := s.SetTitle("Renamed", "user"); err == nil || s.Header().Title != "" {
		t.Fatalf("SetTitle = %v, title %q", err, s.Header().Title)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTitle("Renamed", "user"); err != nil {
		t.Fatal(err)
	}
	sess, err := Load(path)
	if err != nil || sess.Header.Title != "Renamed" || len(fileLines(t, path)) != 1+len(es) {
		t.Fatalf("load: %v %+v", err, sess)
	}
}

func TestStoreFlushBeforeAssistant(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	appendAll(t, s, chain(userEntry("hi")))
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if lines := fileLines(t, path); len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
}

func TestStoreTruncatesLongStrings(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	big := strings.Repeat("é", maxPersistChars+10) // 2 bytes each in UTF-8, 1 unit in UTF-16
	a := assistantEntry(big)
	am := a.Message.(*engine.AssistantMessage)
	am.Content = append(am.Content, engine.ContentBlock{Type: engine.BlockThinking, Thinking: "t",
		ThinkingSignature: strings.Repeat("s", maxPersistChars+1)})
	appendAll(t, s, chain(userEntry("q"), a))
	sess, err := Load(path)
	if err != nil || len(sess.Warnings) != 0 {
		t.Fatalf("load: %v %v", err, sess.Warnings)
	}
	got := sess.Entries[1].Message.(*engine.AssistantMessage)
	text := got.Content[0].Text
	if utf16Len(text) != maxPersistChars || !strings.HasSuffix(text, truncationNotice) {
		t.Errorf("text: %d units, suffix %q", utf16Len(text), text[len(text)-60:])
	}
	if got.Content[1].ThinkingSignature != "" {
		t.Errorf("signature not blanked: %d bytes", len(got.Content[1].ThinkingSignature))
	}
	if got.Content[1].Thinking != "t" {
		t.Errorf("thinking %q", got.Content[1].Thinking)
	}
}

// Image data is never cut, however long: a resumed session must send the
// bytes the first request sent. Text beside it is still cut.
func TestStoreKeepsImagesWhole(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := New(path, newHeader())
	raw := make([]byte, 450_009) // 600,012 base64 characters, as the probe's PNG
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	data := base64.StdEncoding.EncodeToString(raw)
	long := strings.Repeat("x", maxPersistChars+1)
	u := &engine.Entry{Type: engine.EntryMessage, Message: &engine.UserMessage{Content: []engine.ContentBlock{
		engine.TextBlock(long), {Type: engine.BlockImage, Data: data, MimeType: "image/png"}}, Timestamp: t0}}
	appendAll(t, s, chain(u, assistantEntry("a PNG")))
	sess, err := Load(path)
	if err != nil || len(sess.Warnings) != 0 {
		t.Fatalf("load: %v %v", err, sess.Warnings)
	}
	got := sess.Entries[0].Message.(*engine.UserMessage).Content
	if got[1].Data != data {
		t.Errorf("image data: %d chars, want %d", len(got[1].Data), len(data))
	}
	if b, err := base64.StdEncoding.DecodeString(got[1].Data); err != nil || !bytes.Equal(b, raw) {
		t.Errorf("image bytes differ: %v", err)
	}
	if !strings.HasSuffix(got[0].Text, truncationNotice) {
		t.Errorf("text beside the image was not cut")
	}
	// A "data" string that is not base64 is text, and cut.
	if out := truncateLongStrings([]byte(`{"data":"` + long[:maxPersistChars] + ` x"}`)); !bytes.Contains(out, []byte("truncated")) {
		t.Errorf("non-base64 data kept whole")
	}
}

// A file that cannot be created is an error of the Append that creates
// it (the engine logs it and goes on in memory).
func TestStoreCreateError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(filepath.Join(blocker, "s.jsonl"), newHeader())
	es := conversation(1)
	appendAll(t, s, es[:3])
	if err := s.Append(context.Background(), es[3]); err == nil {
		t.Fatal("no error creating a file under a regular file")
	}
}

// A new session never replaces a file already at its path, and a closed
// store does not recreate its file.
func TestStoreNeverReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(path, newHeader())
	es := conversation(1)
	appendAll(t, s, es[:3])
	if err := s.Append(context.Background(), es[3]); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("creating over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious\n" {
		t.Fatalf("file replaced: %q", b)
	}
	s.Close()
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Fatalf("temporary file left: %v", des)
	}

	path2 := filepath.Join(dir, "t.jsonl")
	s = New(path2, newHeader())
	appendAll(t, s, es)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), es[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if lines := fileLines(t, path2); len(lines) != 1+len(es) {
		t.Fatalf("%d lines", len(lines))
	}
}

// A rename rewrites the header while entries are appended: the appends
// made during the copy are in the new file, in order, and later ones
// follow; an append never waits for the whole copy.
func TestSetTitleConcurrentWithAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st := New(path, Header{ID: "s", Timestamp: 1})
	ctx := context.Background()
	user := func(i int) *engine.Entry {
		return &engine.Entry{Type: engine.EntryMessage, ID: fmt.Sprintf("%08x", i), Timestamp: 1,
			Message: &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(strings.Repeat("x", 2000))}, Timestamp: 1}}
	}
	const n = 400
	for i := 0; i < n/2; i++ {
		if err := st.Append(ctx, user(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- st.SetTitle("renamed", "user") }()
	for i := n / 2; i < n; i++ {
		if err := st.Append(ctx, user(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, user(n)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Header.Title != "renamed" || len(l.Entries) != n+1 || len(l.Warnings) != 0 {
		t.Fatalf("title %q, %d entries, warnings %v", l.Header.Title, len(l.Entries), l.Warnings)
	}
	for i, e := range l.Entries {
		if e.ID != fmt.Sprintf("%08x", i) {
			t.Fatalf("entry %d is %s", i, e.ID)
		}
	}
}

// A full disk: what cannot be written waits, in order, and is written by
// the next append that can; a failed partial write is cut, so no line is
// ever glued to another and no entry on disk has a parent that is not.
func TestBacklogAfterFailedWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	s := New(path, newHeader())
	es := conversation(3)
	appendAll(t, s, es[:4]) // the file exists (an assistant message)
	good := s.f
	// Writes fail: the descriptor is read-only (EBADF), as a full disk
	// fails them.
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.f = ro
	for _, e := range es[4:7] {
		if err := s.Append(context.Background(), e); !errors.Is(err, ErrNotSaved) {
			t.Fatalf("append on a failing file: %v", err)
		}
	}
	if n := len(fileLines(t, path)); n != 5 {
		t.Fatalf("%d lines on disk while failing", n)
	}
	s.f = good
	ro.Close()
	appendAll(t, s, es[7:])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := fileLines(t, path)
	if len(lines) != 1+len(es) {
		t.Fatalf("%d lines, want %d", len(lines), 1+len(es))
	}
	for i, e := range es {
		if string(lines[i+1]) != string(e.AppendJSON(nil)) {
			t.Fatalf("line %d = %s", i+2, lines[i+1])
		}
	}
}
