package client

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The documentation's Go programs compile, so none can rot: every ```go
// block of docs/*.md that is a whole program (it starts with "package
// main") is built as a package of this module, through an overlay (no
// file is written into the tree).
func TestDocProgramsCompile(t *testing.T) {
	t.Parallel()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs, where []string
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, prog := range goPrograms(string(b)) {
			n := len(pkgs) + 1
			src := filepath.Join(tmp, fmt.Sprintf("prog%d.go", n))
			if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "rpc", "client", "internal", fmt.Sprintf("docprog%d", n))
			overlay[filepath.Join(dir, "main.go")] = src
			pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join("rpc", "client", "internal", fmt.Sprintf("docprog%d", n))))
			where = append(where, fmt.Sprintf("docprog%d: %s, program %d", n, filepath.Base(doc), i+1))
		}
	}
	// server.md's "From Go" and client.md's server section at least.
	if len(pkgs) < 2 {
		t.Fatalf("found %d Go programs in docs/*.md: the extraction broke", len(pkgs))
	}
	b, _ := json.Marshal(map[string]any{"Replace": overlay})
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// go build, not vet: vet runs in the package's directory, which only
	// the overlay has.
	cmd := exec.Command("go", append([]string{"build", "-overlay", ov, "-o", filepath.Join(tmp, "bin") + "/"}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the docs' programs: %v\n%s\n(%s)", err, out, strings.Join(where, "; "))
	}
}

// goPrograms are the ```go blocks of a markdown text that start with
// "package main".
func goPrograms(md string) []string {
	var out []string
	var block []string
	in := false
	for _, l := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```go":
			in, block = true, nil
		case in && strings.TrimSpace(l) == "```":
			in = false
			if len(block) > 0 && strings.HasPrefix(block[0], "package main") {
				out = append(out, strings.Join(block, "\n")+"\n")
			}
		case in:
			block = append(block, l)
		}
	}
	return out
}
