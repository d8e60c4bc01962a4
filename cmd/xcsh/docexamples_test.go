package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The documentation's commands are run, so none can rot: every xcsh
// command in a sh or bash block of README.md and docs/*.md, and every
// example of --help, is run by docExamplesCmd in the script's directory.

// docExample is one command line and where it was found.
type docExample struct {
	where, line string
}

// xcshCommand finds an xcsh invocation in a shell line: xcsh, bin/xcsh
// or go run ./cmd/xcsh as a command word.
var xcshCommand = regexp.MustCompile(`(^|[|;&]\s*|^(\w+=\S+\s+)+)(bin/xcsh|xcsh|go run \./cmd/xcsh)\s`)

// docExamples collects the xcsh commands of the markdown files' shell
// blocks and of the help text's examples.
func docExamples(root, help string) ([]docExample, error) {
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []docExample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		in := false
		for i, l := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(l, "```sh"), strings.HasPrefix(l, "```bash"):
				in = true
			case strings.HasPrefix(l, "```"):
				in = false
			case in:
				if l = stripComment(l); xcshCommand.MatchString(l) {
					out = append(out, docExample{fmt.Sprintf("%s:%d", filepath.Base(f), i+1), l})
				}
			}
		}
	}
	_, examples, _ := strings.Cut(help, "\nExamples:\n")
	examples, _, _ = strings.Cut(examples, "\nFlags:\n")
	for _, l := range strings.Split(examples, "\n") {
		if l = stripComment(strings.TrimSpace(l)); xcshCommand.MatchString(l) {
			out = append(out, docExample{"xcsh --help", l})
		}
	}
	return out, nil
}

// stripComment removes a trailing shell comment (a # after white space,
// outside quotes).
func stripComment(l string) string {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && i > 0 && (l[i-1] == ' ' || l[i-1] == '\t'):
			return strings.TrimSpace(l[:i])
		}
	}
	return strings.TrimSpace(l)
}

// docExamplesCmd implements `docexamples ROOT`: each command runs under
// bash with the binary under test as xcsh (bin/xcsh and go run ./cmd/xcsh
// included), stdin closed, in the script's project directory. A command must not
// fail as a start-up or usage error (exit 2) nor hang; one on the fake
// provider must succeed. Commands that reach a real model fail at the
// network (exit 1), after the CLI took their flags and model.
func docExamplesCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: docexamples ROOT")
	}
	self, err := exec.LookPath("xcsh")
	if err != nil {
		ts.Fatalf("docexamples: %v", err)
	}
	help, err := exec.Command(self, "--help").Output()
	if err != nil {
		ts.Fatalf("docexamples: xcsh --help: %v", err)
	}
	examples, err := docExamples(ts.MkAbs(args[0]), string(help))
	if err != nil {
		ts.Fatalf("docexamples: %v", err)
	}
	if len(examples) < 10 {
		ts.Fatalf("docexamples: found only %d commands: the extraction broke", len(examples))
	}
	if err := docModelsJSON(ts.MkAbs(args[0]), filepath.Join(ts.Getenv("PI_CODING_AGENT_DIR"), "models.json")); err != nil {
		ts.Fatalf("docexamples: %v", err)
	}
	bin := ts.MkAbs("bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		ts.Fatalf("%v", err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "xcsh")); err != nil && !errors.Is(err, os.ErrExist) {
		ts.Fatalf("%v", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	for _, k := range []string{"HOME", "PI_CODING_AGENT_DIR", "XCSH_DETERMINISTIC", "TMPDIR"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
	for _, ex := range examples {
		line := strings.ReplaceAll(ex.line, "go run ./cmd/xcsh", "xcsh")
		line = strings.ReplaceAll(line, "bin/xcsh", "xcsh")
		// A real provider is unreachable here: retry at once, not for 14 s.
		// (xcsh connect and xcsh replay build no session: they have no
		// such flag.)
		if !strings.Contains(line, "xcsh connect") && !strings.Contains(line, "xcsh replay") {
			line += " --retry-base-delay=1ms"
		}
		// A server runs until a signal: it must say it serves, then end
		// with SIGTERM as a user's Ctrl-C or service manager ends it.
		server := strings.Contains(line, "xcsh serve") && !strings.Contains(line, "--stdio")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		script := line
		if server {
			script = "exec " + line // the signal reaches the server, not bash
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Dir, cmd.Env = ts.MkAbs("project"), env
		var stderr syncBuffer
		cmd.Stderr = &stderr
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Start()
		if err == nil && server {
			for ctx.Err() == nil && !strings.Contains(stderr.String(), "xcsh: serving on") && !exited(cmd) {
				time.Sleep(10 * time.Millisecond)
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		if err == nil {
			err = cmd.Wait()
		}
		cancel()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			ts.Fatalf("%s: %s: did not end within a minute", ex.where, ex.line)
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			ts.Fatalf("%s: %s: %v", ex.where, ex.line, err)
		}
		ts.Logf("%s: %s: exit %d", ex.where, ex.line, code)
		if server {
			if code != 128+int(syscall.SIGTERM) || !strings.Contains(stderr.String(), "xcsh: serving on") {
				ts.Fatalf("%s: %s: exit %d (want 143 after it served)\nstderr: %s", ex.where, ex.line, code, stderr.String())
			}
			continue
		}
		fake := strings.Contains(line, "fake")
		if code == 2 || code < 0 || (fake && code != 0) || (!fake && code > 1) {
			ts.Fatalf("%s: %s: exit %d\nstdout: %s\nstderr: %s", ex.where, ex.line, code, out.String(), stderr.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// exited reports whether cmd's process is gone (without reaping it).
func exited(cmd *exec.Cmd) bool { return cmd.Process.Signal(syscall.Signal(0)) != nil }

// docModelsJSON adds the providers of providers.md's models.json example
// to the agent dir's models.json, so the examples that use them run as a
// reader who copied the example would (the example itself must load).
func docModelsJSON(root, dst string) error {
	b, err := os.ReadFile(filepath.Join(root, "docs", "providers.md"))
	if err != nil {
		return err
	}
	merged := map[string]json.RawMessage{}
	if old, err := os.ReadFile(dst); err == nil {
		var cfg struct{ Providers map[string]json.RawMessage }
		if err := json.Unmarshal(old, &cfg); err != nil {
			return fmt.Errorf("%s: %w", dst, err)
		}
		maps.Copy(merged, cfg.Providers)
	}
	in, block := false, ""
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "```json":
			in, block = true, ""
		case l == "```" && in:
			in = false
			var cfg struct{ Providers map[string]json.RawMessage }
			if json.Unmarshal([]byte(block), &cfg) == nil && cfg.Providers != nil {
				maps.Copy(merged, cfg.Providers)
			}
		case in:
			block += l + "\n"
		}
	}
	out, err := json.Marshal(map[string]any{"providers": merged})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o600)
}
