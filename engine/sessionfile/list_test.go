package sessionfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// writeSession writes a session with one user question and an answer,
// modified at mod.
func writeSession(t *testing.T, dir, id, question string, mod time.Time) string {
	t.Helper()
	path := filepath.Join(dir, FileName(t0, id))
	h := newHeader()
	h.ID = id
	s := New(path, h)
	appendAll(t, s, chain(userEntry(question), assistantEntry("answer")))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestListLatestFind(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	local := filepath.Join(root, "sessions", "-w")
	other := filepath.Join(root, "sessions", "--srv--")
	base := time.Unix(1_800_000_000, 0)
	old := writeSession(t, local, "aaaa000000000001", "first question", base)
	newer := writeSession(t, local, "bbbb000000000002", "second question", base.Add(time.Hour))
	far := writeSession(t, other, "cccc000000000003", "elsewhere", base.Add(2*time.Hour))
	// Not sessions: ignored.
	os.WriteFile(filepath.Join(local, "junk.jsonl"), []byte("nope\n"), 0o600)
	os.WriteFile(filepath.Join(local, "notes.txt"), []byte("x"), 0o600)
	os.Chtimes(filepath.Join(local, "junk.jsonl"), base.Add(3*time.Hour), base.Add(3*time.Hour))

	infos, err := List(local)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Path != newer || infos[1].Path != old {
		t.Fatalf("List = %+v", infos)
	}
	if i := infos[0]; i.ID != "bbbb000000000002" || i.FirstMessage != "second question" || i.Cwd != "/w" || i.Created != t0 {
		t.Errorf("info %+v", i)
	}
	if infos, err := List(filepath.Join(root, "none")); err != nil || infos != nil {
		t.Errorf("missing dir: %v %v", infos, err)
	}

	var skipped []string
	if p, err := Latest(local, func(p string, err error) { skipped = append(skipped, filepath.Base(p)+": "+err.Error()) }); err != nil || p != newer {
		t.Errorf("Latest = %q, %v", p, err)
	}
	// The newer junk.jsonl was passed over, and said so.
	if want := []string{"junk.jsonl: " + filepath.Join(local, "junk.jsonl") + ": not a session file: first line is not a JSON object"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
	if _, err := Latest(filepath.Join(root, "none"), nil); !errors.Is(err, ErrNoSession) {
		t.Errorf("Latest of nothing: %v", err)
	}

	for _, tc := range []struct {
		prefix string
		dirs   []string
		want   string
	}{
		{"AAAA", []string{local}, old},
		{"bbbb0", []string{local}, newer},
		{"2026-01-01", []string{local}, newer}, // a file-name prefix: the newest match
		{"cccc", []string{local, filepath.Join(root, "sessions")}, far},
		{"aaaa", []string{filepath.Join(root, "sessions")}, old},
	} {
		info, err := FindByID(tc.prefix, tc.dirs...)
		if err != nil || info.Path != tc.want {
			t.Errorf("FindByID(%q, %v) = %q, %v; want %q", tc.prefix, tc.dirs, info.Path, err, tc.want)
		}
	}
	for _, p := range []string{"dddd", ""} {
		if _, err := FindByID(p, local); !errors.Is(err, ErrNoSession) {
			t.Errorf("FindByID(%q): %v", p, err)
		}
	}
}

// A header id that the file name does not carry is found by reading
// headers.
func TestFindByHeaderID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeSession(t, dir, "eeee000000000005", "q", time.Unix(1_800_000_000, 0))
	renamed := filepath.Join(dir, "renamed.jsonl")
	if err := os.Rename(path, renamed); err != nil {
		t.Fatal(err)
	}
	if info, err := FindByID("eeee", dir); err != nil || info.Path != renamed {
		t.Fatalf("FindByID = %+v, %v", info, err)
	}
}
