package project

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDirsAndRoot(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	deep := filepath.Join(repo, "api", "v1")
	wt := filepath.Join(top, "worktree")
	loose := filepath.Join(top, "loose", "sub")
	for _, d := range []string{filepath.Join(repo, ".git"), deep, filepath.Join(wt, "pkg"), loose} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A git worktree or submodule has a .git file, not a directory.
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cwd string
		want      []string
	}{
		{"repo root", repo, []string{repo}},
		{"subfolder", deep, []string{deep, filepath.Join(repo, "api"), repo}},
		{"unclean path", deep + "/../v1/", []string{deep, filepath.Join(repo, "api"), repo}},
		{"worktree .git file", filepath.Join(wt, "pkg"), []string{filepath.Join(wt, "pkg"), wt}},
		{"outside a repository", loose, []string{loose}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Dirs(tc.cwd); !slices.Equal(got, tc.want) {
				t.Errorf("Dirs(%s) = %v, want %v", tc.cwd, got, tc.want)
			}
			if got := Root(tc.cwd); got != tc.want[len(tc.want)-1] {
				t.Errorf("Root(%s) = %s", tc.cwd, got)
			}
		})
	}
}
