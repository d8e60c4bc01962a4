// Package project is the one rule for where a project's own resources are
// looked for, so that xcsh started in any folder of a project finds them
// all: context files and skills, prompt templates, MCP configuration,
// extensions and rules.
//
// The project root is the nearest folder, from the working directory
// upward, that holds a .git entry (a directory, or the file of a git
// worktree or submodule); outside a repository it is the working
// directory itself, so files in unrelated parents (a home directory) never
// leak in. The project's folders are the working directory and each parent
// up to the root, nearest first: every kind of resource is looked for in
// each of them, and where two folders define the same thing the nearer one
// wins (docs/skills.md, "The project").
package project

import (
	"os"
	"path/filepath"
)

// Dirs returns cwd and its parents up to the project root, nearest first
// (cwd alone outside a repository). cwd is cleaned, not resolved: links
// are followed only by the stat that looks for .git.
func Dirs(cwd string) []string {
	var dirs []string
	for d := filepath.Clean(cwd); ; {
		dirs = append(dirs, d)
		if isRoot(d) {
			return dirs
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dirs[:1] // no repository above: cwd alone
		}
		d = parent
	}
}

// Root returns the project root of cwd: the nearest folder upward holding
// .git, else cwd.
func Root(cwd string) string {
	dirs := Dirs(cwd)
	return dirs[len(dirs)-1]
}

// isRoot reports whether dir holds .git.
func isRoot(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}
