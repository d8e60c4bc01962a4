package rpctest

// The golden command: a file from the script, normalised, compared through
// goldie with <name>.jsonl in the golden directory given to Setup.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sebdah/goldie/v2"
	"github.com/xcsh-go/xcsh/rpc/replay"
)

var goldenNameRE = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*/)?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// scriptGolden implements `golden file name`.
func scriptGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("! golden is not supported")
	}
	if len(args) != 2 {
		ts.Fatalf("usage: golden file name (compares file with golden/name.jsonl)")
	}
	file, name := args[0], args[1]
	if !goldenNameRE.MatchString(name) || strings.HasSuffix(name, ".jsonl") {
		ts.Fatalf("golden: bad name %q: want letters, digits, _ . -, at most one dir/ and no .jsonl suffix", name)
	}
	data := replay.NormaliseWork([]byte(ts.ReadFile(file)), ts.Getenv("WORK"))
	harnessOf(ts).compareGolden(ts, file, name, data)
}

// compareGolden compares data (normalised, from what) with the golden
// <name>.jsonl, or writes it under GOLDIE_UPDATE: the golden command's and
// rpc replay's comparison.
func (h *harness) compareGolden(ts *testscript.TestScript, what, name string, data []byte) {
	if err := h.claims.claim(name, ts.Name()); err != nil {
		ts.Fatalf("golden: %v", err)
	}
	dir := ts.Getenv(GoldenDirEnv)
	if dir == "" {
		ts.Fatalf("golden: $%s is not set", GoldenDirEnv)
	}
	// A transcript in which the fake provider saw a request its script did
	// not expect records a bug, not a behaviour: refuse to golden it.
	if bytes.Contains(data, []byte("fake provider: expectation failed")) {
		ts.Fatalf("golden: %s records a failed fake-provider expectation; fix the engine or the script first", what)
	}

	tb := newGoldenTB(ts, h.t)
	g := goldie.New(tb, goldie.WithFixtureDir(dir), goldie.WithNameSuffix(".jsonl"))
	path := g.GoldenFileName(tb, name)
	rerun := fmt.Sprintf("GOLDIE_UPDATE=1 go test %s -run '%s' (or make golden)", testPackageArg(), tb.Name())

	// Our switch, not goldie's: its -update flag is global to the test
	// binary and read once at init, so the comparison below does not go
	// through Assert (which would obey it) but through goldie's Update,
	// GoldenFileName and Diff, leaving GOLDIE_UPDATE the only switch.
	if envTruthy("GOLDIE_UPDATE") {
		if err := g.Update(tb, name, data); err != nil {
			ts.Fatalf("golden: writing %s: %v", path, err)
		}
		ts.Logf("golden: wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		ts.Fatalf("golden: %s does not exist; create it with\n\t%s\nthen review it like code", path, rerun)
	}
	ts.Check(err)
	if !bytes.Equal(data, want) {
		ts.Fatalf("golden: %s (normalised) differs from %s:\n%s\nif the change is intended, refresh with\n\t%s\nand review the diff",
			what, path, goldie.Diff(goldie.ClassicDiff, string(data), string(want)), rerun)
	}
}

// testPackageArg is the go test argument that names the package under test,
// such as ./cmd/xcsh/, for the command that refreshes a golden: a test
// binary runs in its package's directory, so it is that directory relative
// to the module root. It is "." when there is no module root above.
var testPackageArg = sync.OnceValue(func() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for root := wd; ; {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel) + "/"
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "."
		}
		root = parent
	}
})

// goldenTB is the testing.TB handed to goldie. goldie reports through
// t.Error and t.FailNow; on the script's own *testing.T those would fail
// the subtest outside the script log (no line number) or Goexit the
// script's goroutine past testscript's bookkeeping. goldenTB records the
// messages instead and turns FailNow into ts.Fatalf. The embedded TB (the
// script's subtest) only serves what goldie reads, like Name; testing.TB
// has an unexported method, so embedding one is the only way to satisfy it.
type goldenTB struct {
	testing.TB
	ts   *testscript.TestScript
	msgs []string
	fail bool
}

func newGoldenTB(ts *testscript.TestScript, t testscript.T) *goldenTB {
	tb, ok := t.(testing.TB)
	if !ok {
		// testscript.Run passes a testing.TB; only RunT with a foreign T
		// does not.
		ts.Fatalf("golden: the script's T (%T) is not a testing.TB; run scripts with testscript.Run", t)
	}
	return &goldenTB{TB: tb, ts: ts}
}

func (g *goldenTB) Helper()                    {}
func (g *goldenTB) Log(args ...any)            { g.ts.Logf("%s", fmt.Sprint(args...)) }
func (g *goldenTB) Logf(f string, args ...any) { g.ts.Logf(f, args...) }
func (g *goldenTB) Error(args ...any)          { g.msgs = append(g.msgs, fmt.Sprint(args...)) }
func (g *goldenTB) Errorf(f string, args ...any) {
	g.msgs = append(g.msgs, fmt.Sprintf(f, args...))
}
func (g *goldenTB) Fail()        { g.fail = true }
func (g *goldenTB) Failed() bool { return g.failed() }
func (g *goldenTB) FailNow()     { g.ts.Fatalf("golden: %s", g.message()) }
func (g *goldenTB) Fatal(args ...any) {
	g.Error(args...)
	g.FailNow()
}
func (g *goldenTB) Fatalf(f string, args ...any) {
	g.Errorf(f, args...)
	g.FailNow()
}
func (g *goldenTB) Skip(args ...any) {
	g.ts.Fatalf("golden: goldie asked to skip: %s", fmt.Sprint(args...))
}
func (g *goldenTB) Skipf(f string, args ...any) {
	g.ts.Fatalf("golden: goldie asked to skip: "+f, args...)
}
func (g *goldenTB) SkipNow() { g.ts.Fatalf("golden: goldie asked to skip") }

func (g *goldenTB) failed() bool { return g.fail || len(g.msgs) > 0 }

func (g *goldenTB) message() string {
	if len(g.msgs) == 0 {
		return "failed"
	}
	return strings.Join(g.msgs, "\n")
}

// goldenClaims makes sure two scripts never write the same golden file:
// scripts run in parallel, so under GOLDIE_UPDATE the last one would win.
// One value is shared by the scripts of one testscript.Run.
type goldenClaims struct {
	mu    sync.Mutex        // guards owner
	owner map[string]string // golden name -> script name
}

func newGoldenClaims() *goldenClaims {
	return &goldenClaims{owner: make(map[string]string)}
}

func (c *goldenClaims) claim(name, script string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.owner[name]; ok && o != script {
		return fmt.Errorf("golden %q is already used by script %s; give each script its own golden names", name, o)
	}
	c.owner[name] = script
	return nil
}
