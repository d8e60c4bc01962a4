package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// configNames are the entries agents and git read when they start in a
// directory, and that can make them run something or steer the model:
// MCP configurations, extensions, settings, skills, prompt templates and
// rules of xcsh and of the agents whose files it reads, and git's
// repository (its hooks and config run commands). In workspace-write they
// stay read-only below every writable root, whatever the model asks: what
// it writes there would otherwise run outside the sandbox at the next start
// (docs/sandbox.md, "What the model cannot change").
var configNames = []string{".mcp.json", ".xcsh", ".agents", ".pi", ".omp", ".claude", ".cursor", ".windsurf", ".clinerules", ".git"}

// ConfigNames returns the names of configNames, for the docs' tests and
// messages.
func ConfigNames() []string { return slices.Clone(configNames) }

// Protect keeps dirs (the agent dir) read-only to commands and file tools
// where they lie in a writable root. Each is resolved as far as it exists,
// so a directory that is missing now is kept by name.
func (p *Policy) Protect(dirs ...string) {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		real := resolveExisting(filepath.Clean(d))
		if p.inRoot(real) && !slices.Contains(p.Protected, real) {
			p.Protected = append(p.Protected, real)
		}
	}
}

// resolveExisting resolves the links of the longest part of path that
// exists and appends the rest.
func resolveExisting(path string) string {
	var rest []string
	for cur := path; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// configPath returns the configuration path real (resolved, absolute) is
// or lies in, "" when it is none: a protected directory, or an entry named
// in configNames below the innermost writable root holding real (so a
// root the user chose inside such a directory is theirs to change).
func (p *Policy) configPath(real string) string {
	if !p.On() || p.Mode != WorkspaceWrite {
		return ""
	}
	for _, d := range p.Protected {
		if within(real, d) {
			return d
		}
	}
	root := p.rootOf(real)
	if root == "" || real == root {
		return ""
	}
	rel := strings.TrimPrefix(real[len(root):], "/")
	acc := root
	for _, c := range strings.Split(rel, "/") {
		acc = filepath.Join(acc, c)
		if slices.Contains(configNames, c) {
			return acc
		}
	}
	return ""
}

// checkName refuses a write to path (absolute) when it names a
// configuration path: its directory resolved, its last element as given.
func (p *Policy) checkName(path string) error {
	if !p.On() || p.Mode != WorkspaceWrite {
		return nil
	}
	path = filepath.Clean(path)
	if c := p.configPath(filepath.Join(resolveExisting(filepath.Dir(path)), filepath.Base(path))); c != "" {
		return &DeniedError{Mode: p.Mode, Path: c, Roots: p.Roots, Config: c}
	}
	return nil
}

// Mounts is the layout of the supervisor's mount namespace in
// workspace-write: the whole tree read-only but the writable roots (so
// chmod, chown, utime and xattr changes outside them fail, which Landlock
// does not cover), each existing configuration path bound read-only over
// itself (a mount point cannot be written, renamed or removed), and the
// directories on the way to one given mounts of their own, so none can be
// renamed away and replaced. Computed once, at start: what exists then is
// protected.
type Mounts struct {
	Writable []string `json:"writable"`
	Pinned   []string `json:"pinned,omitempty"`
	ReadOnly []string `json:"readOnly,omitempty"`
}

// Mounts computes the layout of p now (workspace-write only).
func (p *Policy) Mounts() Mounts {
	m := Mounts{Writable: slices.Clone(p.Roots)}
	if p.Mode != WorkspaceWrite {
		return m
	}
	var ro []string
	// Only what lies in a root: the rest of the tree is read-only anyway.
	add := func(paths ...string) {
		for _, path := range paths {
			if real, err := filepath.EvalSymlinks(path); err == nil && p.inRoot(real) {
				ro = append(ro, real)
			}
		}
	}
	for _, r := range p.Roots {
		for _, name := range configNames {
			path := filepath.Join(r, name)
			fi, err := os.Stat(path)
			switch {
			case err != nil:
			case name == ".git" && fi.IsDir():
				add(gitPaths(path)...)
			case name == ".git":
				// A worktree's or submodule's pointer: the file, and the
				// repository it names.
				add(path)
				if dir := gitPointer(path); dir != "" {
					add(gitPaths(dir)...)
				}
			default:
				add(path)
			}
		}
	}
	add(p.Protected...)
	slices.Sort(ro)
	ro = slices.Compact(ro)
	var pins []string
	for _, path := range ro {
		root := p.rootOf(path)
		for dir := filepath.Dir(path); root != "" && within(dir, root) && dir != root; dir = filepath.Dir(dir) {
			pins = append(pins, dir)
		}
	}
	byDepth := func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(pins, byDepth)
	m.Pinned = slices.Compact(pins)
	slices.SortFunc(ro, byDepth)
	m.ReadOnly = ro
	slices.SortFunc(m.Writable, byDepth)
	return m
}

// gitPaths are what must not change in the git directory dir for git to
// run nothing new: its hooks and config, those of the repository it
// shares them with (commondir), and those of its submodules' repositories
// (modules/), each that exists. The rest (objects, refs, the index) stays
// writable, so commits still work.
func gitPaths(dir string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] || depth > 8 {
			return
		}
		seen[real] = true
		for _, name := range []string{"hooks", "config", "config.worktree"} {
			if _, err := os.Lstat(filepath.Join(real, name)); err == nil {
				out = append(out, filepath.Join(real, name))
			}
		}
		if b, err := os.ReadFile(filepath.Join(real, "commondir")); err == nil {
			common := strings.TrimSpace(string(b))
			if !filepath.IsAbs(common) {
				common = filepath.Join(real, common)
			}
			walk(common, depth+1)
		}
		modules := filepath.Join(real, "modules")
		_ = filepath.WalkDir(modules, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || path == modules {
				return nil
			}
			if _, err := os.Stat(filepath.Join(path, "HEAD")); err == nil {
				walk(path, depth+1)
				return filepath.SkipDir
			}
			return nil
		})
	}
	walk(dir, 0)
	return out
}

// gitPointer reads a .git file ("gitdir: <dir>"), relative to its
// directory; "" when it is not one.
func gitPointer(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(path), dir)
	}
	return dir
}

// rootOf is the innermost writable root holding real, "" when none does
// (devices are not roots).
func (p *Policy) rootOf(real string) string {
	root := ""
	for _, r := range p.Roots {
		if within(real, r) && len(r) > len(root) {
			root = r
		}
	}
	return root
}

// inRoot reports whether real lies in a writable root.
func (p *Policy) inRoot(real string) bool { return p.rootOf(real) != "" }
