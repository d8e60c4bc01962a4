//go:build !linux

package sandbox

import (
	"os"
	"path/filepath"
)

// Dir is a directory checked for a write the policy allows. Without
// /proc/self/fd it is named by its resolved path: a link swapped in after
// the check is not caught here (there is no kernel sandbox here either).
type Dir struct{ Path string }

// Close does nothing.
func (d *Dir) Close() error { return nil }

// OpenDir resolves dir, creating it when asked, and checks the result.
func (p *Policy) OpenDir(dir string, create bool) (*Dir, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if err := p.check(real); err != nil {
		return nil, err
	}
	return &Dir{Path: real}, nil
}

// OpenParent is OpenDir for the directory of target, requested and
// target checked too.
func (p *Policy) OpenParent(requested, target string, create bool) (*Dir, error) {
	for _, path := range []string{requested, target} {
		if err := p.checkName(path); err != nil {
			return nil, err
		}
	}
	return p.OpenDir(filepath.Dir(target), create)
}
