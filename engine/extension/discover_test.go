package extension

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiscoverFromSubfolder: a session started in a subfolder of a
// repository runs the project's extensions (root and nearer folders,
// nearest first, then the user's) and reads the project's settings lists;
// outside a repository a parent's extensions are not run.
func TestDiscoverFromSubfolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(p, s string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	write("repo/.xcsh/extensions/guard/extension.json", `{"command":["./guard"]}`, 0o644)
	write("repo/.xcsh/settings.json", `{"extensions":["tools/listed"]}`, 0o644)
	write("repo/.xcsh/tools/listed", "#!/bin/sh\n", 0o755)
	write("repo/api/.xcsh/extensions/near", "#!/bin/sh\n", 0o755)
	write("agent/extensions/user", "#!/bin/sh\n", 0o755)
	write("loose/.xcsh/extensions/parent", "#!/bin/sh\n", 0o755)
	write("loose/sub/keep", "", 0o644)

	specs, problems := Discover(Where{Cwd: filepath.Join(dir, "repo", "api"), AgentDir: filepath.Join(dir, "agent")})
	if len(problems) != 0 {
		t.Fatalf("problems %+v", problems)
	}
	var got []string
	for _, s := range specs {
		rel, _ := filepath.Rel(dir, s.Path)
		got = append(got, rel)
	}
	want := "repo/.xcsh/tools/listed repo/api/.xcsh/extensions/near repo/.xcsh/extensions/guard agent/extensions/user"
	if strings.Join(got, " ") != want {
		t.Errorf("from repo/api:\n got  %s\n want %s", strings.Join(got, " "), want)
	}

	specs, _ = Discover(Where{Cwd: filepath.Join(dir, "loose", "sub")})
	if len(specs) != 0 {
		t.Errorf("outside a repository a parent's extension runs: %+v", specs)
	}
}

// Discover marks what the project brings (its extensions directory and
// its settings file's list) and nothing the user chose (--extension, the
// agent dir's settings and directory), even when the agent dir lies in
// the project; Wrap changes the command a spec starts.
func TestDiscoverMarksProjectExtensions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	agent := filepath.Join(proj, "home", "agent") // in the project, still the user's
	exe := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe(proj + "/.xcsh/extensions/from-dir")
	exe(proj + "/tools/listed")
	exe(agent + "/extensions/mine")
	exe(dir + "/flag")
	if err := os.WriteFile(proj+"/.xcsh/settings.json", []byte(`{"extensions":["../tools/listed"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, problems := Discover(Where{Cwd: proj, AgentDir: agent, Paths: []string{dir + "/flag"}})
	if len(problems) != 0 {
		t.Fatalf("problems %+v", problems)
	}
	var got []string
	for _, s := range specs {
		got = append(got, strings.TrimPrefix(s.Path, dir)+map[bool]string{true: " project", false: " user"}[s.Project])
	}
	want := "/flag user,/proj/tools/listed project,/proj/.xcsh/extensions/from-dir project,/proj/home/agent/extensions/mine user"
	if strings.Join(got, ",") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, ","), want)
	}

	var p process
	called := false
	spec := Spec{Path: "x", Command: []string{"/bin/true"}, Wrap: func(c *exec.Cmd) error {
		called = true
		c.Args = append(c.Args, "wrapped")
		return nil
	}}
	in, out, err := p.start(spec, dir, os.Environ(), time.Second, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	in.Close()
	out.Close()
	<-p.done()
	if !called || p.cmd.Args[len(p.cmd.Args)-1] != "wrapped" {
		t.Fatalf("Wrap not applied: %v %q", called, p.cmd.Args)
	}
}
