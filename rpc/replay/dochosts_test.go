package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The host programs of docs/testing.md ("A host in each language") run as
// they are written, under host mode, against the transcript they play and
// against a tampered copy that they must fail: the documentation's
// examples can neither rot nor pass without being checked.
func TestDocHostExamples(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := docBlocks(string(doc), "## Replaying transcripts")
	transcript := filepath.Join(root, "golden", "replay", "ui_ask_select.jsonl")
	good, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	// The tampered copy expects another answer to the dialog.
	const answer = `"id":"ui_1","value":"Postgres"}}`
	if !bytes.Contains(good, []byte(answer)) {
		t.Fatalf("%s no longer answers the dialog with Postgres: update the examples and this test", transcript)
	}
	bad := bytes.Replace(good, []byte(answer), []byte(`"id":"ui_1","value":"MySQL"}}`), 1)
	dir := t.TempDir()

	hosts := []struct {
		lang, file string
		command    func(t *testing.T, src string) []string
	}{
		{"go", "main.go", buildDocGoHost},
		{"js", "askhost.js", func(t *testing.T, src string) []string { return interpreter(t, "node", src) }},
		{"python", "askhost.py", func(t *testing.T, src string) []string { return interpreter(t, "python3", src) }},
	}
	for _, h := range hosts {
		t.Run(h.lang, func(t *testing.T) {
			t.Parallel()
			code := blocks[h.lang]
			if len(code) != 1 {
				t.Fatalf("docs/testing.md's replay section has %d %s blocks, want one host", len(code), h.lang)
			}
			src := filepath.Join(dir, h.lang, h.file)
			if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(src, []byte(code[0]), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := h.command(t, src)
			for _, tc := range []struct {
				name string
				tr   []byte
				ok   bool
			}{{"recorded", good, true}, {"tampered", bad, false}} {
				tr, err := Read(bytes.NewReader(tc.tr))
				if err != nil {
					t.Fatal(err)
				}
				var stderr bytes.Buffer
				r, err := Host(context.Background(), tr, HostOptions{
					Command: cmd, Dir: filepath.Dir(src), Stderr: &stderr, Name: tc.name,
					Env: []string{"XCSH_REPLAY_TRANSCRIPT=" + transcript, "XCSH_REPLAY_NAME=ui_ask_select"},
				})
				if err != nil {
					t.Fatal(err)
				}
				if r.OK != tc.ok {
					b, _ := json.Marshal(r)
					t.Errorf("%s transcript: report %s\nthe host's stderr: %s", tc.name, b, stderr.String())
				}
				if !tc.ok && (r.Divergence == nil || r.Divergence.Pointer != "/value") {
					t.Errorf("%s transcript: divergence %+v, want one at /value", tc.name, r.Divergence)
				}
			}
		})
	}
}

// docBlocks returns the fenced code blocks of the markdown section that
// starts with heading, by language.
func docBlocks(md, heading string) map[string][]string {
	_, section, _ := strings.Cut(md, "\n"+heading+"\n")
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	out := map[string][]string{}
	lang, in := "", false
	var block []string
	for _, l := range strings.Split(section, "\n") {
		switch {
		case !in && strings.HasPrefix(l, "```"):
			lang, in, block = strings.TrimPrefix(l, "```"), true, nil
		case in && l == "```":
			in = false
			out[lang] = append(out[lang], strings.Join(block, "\n")+"\n")
		case in:
			block = append(block, l)
		}
	}
	return out
}

func interpreter(t *testing.T, name, src string) []string {
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return []string{path, src}
}

// buildDocGoHost builds the Go host as a package of this module (it
// imports rpc/client) through an overlay: no file is written into the
// tree. It skips under -short, which is for the quick run.
func buildDocGoHost(t *testing.T, src string) []string {
	if testing.Short() {
		t.Skip("building the Go host takes seconds; -short skips it")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not installed: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "rpc", "replay", "internal", "dochost")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkg, "main.go"): src}})
	ov := filepath.Join(filepath.Dir(src), "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(src), "askhost")
	cmd := exec.Command(gobin, "build", "-overlay", ov, "-o", bin, "./rpc/replay/internal/dochost")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go host of docs/testing.md: %v\n%s", err, out)
	}
	return []string{bin}
}
