package tools

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/xcsh-go/xcsh/engine/project"
)

// ignorer answers "is this path git-ignored?" for the tree walks of grep,
// find and read's suffix match. Each directory's .gitignore applies to the
// paths below it, as in git; files are parsed once per walk and cached.
// The top of the hierarchy is the nearest ancestor holding .git (else the
// walk's root), so a search in a subdirectory still honours the
// repository's root .gitignore.
type ignorer struct {
	top   string
	cache map[string]*gitignore.GitIgnore // dir → its .gitignore, nil when none
}

func newIgnorer(root string) *ignorer {
	return &ignorer{top: project.Root(root), cache: map[string]*gitignore.GitIgnore{}}
}

func (ig *ignorer) rules(dir string) *gitignore.GitIgnore {
	if gi, ok := ig.cache[dir]; ok {
		return gi
	}
	gi, err := gitignore.CompileIgnoreFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		gi = nil
	}
	ig.cache[dir] = gi
	return gi
}

// ignored reports whether abs (a directory when isDir) is excluded by a
// .gitignore between the top and its parent directory.
func (ig *ignorer) ignored(abs string, isDir bool) bool {
	rel, err := filepath.Rel(ig.top, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	dir := ig.top
	for i := range parts {
		if gi := ig.rules(dir); gi != nil {
			sub := strings.Join(parts[i:], "/")
			if isDir {
				sub += "/"
			}
			if gi.MatchesPath(sub) {
				return true
			}
		}
		dir = filepath.Join(dir, parts[i])
	}
	return false
}

// alwaysSkipped are directories no search should descend into: version
// control internals are never what the model looks for.
var alwaysSkipped = map[string]bool{".git": true, ".hg": true, ".svn": true}

// walkFiles calls fn for every regular file under root in lexical order,
// skipping VCS directories, git-ignored paths when useIgnore is set, and
// dot-files unless hidden is set. It stops early when ctx ends or fn
// returns fs.SkipAll.
func walkFiles(ctx context.Context, root string, useIgnore, hidden bool, fn func(path string, d fs.DirEntry) error) error {
	var ig *ignorer
	if useIgnore {
		ig = newIgnorer(root)
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if path == root {
				return err
			}
			return nil // unreadable entries are skipped, not fatal
		}
		if path != root {
			name := d.Name()
			if d.IsDir() && alwaysSkipped[name] {
				return fs.SkipDir
			}
			if !hidden && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if ig != nil && ig.ignored(path, d.IsDir()) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		return fn(path, d)
	})
}
