package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// The TypeScript and Python clients (rpc/client/ts, rpc/client/python) have
// their own tests, in node:test and unittest. These run them against the
// binary TestMain built, so `go test ./...` (and CI) exercises both clients
// end to end; each is skipped, with the reason, when its runtime is missing.

// langTestTimeout bounds one client's whole suite (install, build, tests).
const langTestTimeout = 5 * time.Minute

func langRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// runTool runs a program, interrupting it first when ctx ends, and fails
// the test with its output when it fails.
func runTool(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out.String())
	}
	return out.String()
}

// TestTypeScriptClient builds rpc/client/ts with tsc and runs its node:test
// suite. The dependencies (typescript, @types/node, pinned in package.json
// and package-lock.json) come from $XCSH_CLIENT_TS_DEPS or where .ci/run
// installs them; otherwise the test installs them with npm ci. Nothing is
// written into the source tree: the sources are copied to a temporary
// directory and built there.
func TestTypeScriptClient(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector sees nothing of a Node process: the suite runs in the build without it")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the TypeScript client's tests need Node.js 20 and npm", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), langTestTimeout)
	defer cancel()
	src := filepath.Join(langRoot(t), "ts")
	work := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "tsconfig.json", "tsconfig.test.json", "README.md", "src", "test", "examples"} {
		from, to := filepath.Join(src, name), filepath.Join(work, name)
		var err error
		if fi, statErr := os.Stat(from); statErr == nil && fi.IsDir() {
			err = os.CopyFS(to, os.DirFS(from))
		} else {
			err = copyFile(from, to)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	deps := tsDeps(t, src)
	if deps == "" {
		// Not installed by .ci/run (or another version): install from the lock file.
		runTool(t, ctx, work, nil, "npm", "ci", "--no-audit", "--no-fund")
	} else if err := os.Symlink(deps, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	// The package's own build (declarations included), then the tests' build.
	runTool(t, ctx, work, nil, "node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
	runTool(t, ctx, work, nil, "node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.test.json")
	out := runTool(t, ctx, work, []string{"XCSH_BIN=" + xcshBin}, "node", "--test", "build/test/")
	pass := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindStringSubmatch(out)
	fail := regexp.MustCompile(`(?m)^# fail (\d+)$`).FindStringSubmatch(out)
	if pass == nil || fail == nil || fail[1] != "0" || pass[1] == "0" {
		t.Fatalf("node --test did not pass every test:\n%s", out)
	}
	t.Logf("TypeScript client: %s tests passed", pass[1])
}

// tsDeps is a node_modules directory holding the TypeScript client's pinned
// dependencies: $XCSH_CLIENT_TS_DEPS, else .ci/run's cache
// (${XDG_CACHE_HOME:-~/.cache}/xcsh-ci/client-ts/node_modules), if its
// typescript is the version package.json pins; else "".
func tsDeps(t *testing.T, src string) string {
	dir := os.Getenv("XCSH_CLIENT_TS_DEPS")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "xcsh-ci", "client-ts", "node_modules")
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	var installed struct {
		Version string `json:"version"`
	}
	if err := readJSON(filepath.Join(src, "package.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	if err := readJSON(filepath.Join(dir, "typescript", "package.json"), &installed); err != nil {
		return ""
	}
	if installed.Version != pkg.DevDependencies["typescript"] {
		t.Logf("%s has typescript %s, package.json pins %s: installing", dir, installed.Version, pkg.DevDependencies["typescript"])
		return ""
	}
	return dir
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// TestPythonClient runs rpc/client/python's unittest suite (the sync and
// asyncio clients) with python3, 3.11 or later.
func TestPythonClient(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector sees nothing of a Python process: the suite runs in the build without it")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python client's tests need Python 3.11")
	}
	ctx, cancel := context.WithTimeout(context.Background(), langTestTimeout)
	defer cancel()
	version := runTool(t, ctx, "", nil, python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])")
	var major, minor int
	if m := regexp.MustCompile(`^(\d+) (\d+)`).FindStringSubmatch(version); m != nil {
		major, _ = strconv.Atoi(m[1])
		minor, _ = strconv.Atoi(m[2])
	}
	if major < 3 || (major == 3 && minor < 11) {
		t.Skipf("python3 is %s; the Python client needs 3.11 or later", version)
	}
	dir := filepath.Join(langRoot(t), "python")
	cmd := exec.CommandContext(ctx, python, "-W", "error::ResourceWarning", "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Dir = dir
	// No __pycache__ in the source tree.
	cmd.Env = append(os.Environ(), "XCSH_BIN="+xcshBin, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	ran := regexp.MustCompile(`(?m)^Ran (\d+) tests? in `).FindSubmatch(out)
	if err != nil || ran == nil || string(ran[1]) == "0" || !regexp.MustCompile(`(?m)^OK( \(.*\))?$`).Match(out) {
		t.Fatalf("python3 -m unittest failed (%v):\n%s", err, out)
	}
	t.Logf("Python client: %s tests passed", ran[1])
}
