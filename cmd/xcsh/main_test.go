package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript install this test binary as commands on the
// scripts' $PATH: "xcsh" is the real program; "jsonl-echo" is a test-only
// stand-in for an RPC server, so the harness can be tested without depending
// on the real binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"xcsh":       main,
		"jsonl-echo": jsonlEcho,
	})
}

// goldenDirEnv names the variable that tells the golden command where the
// repository's golden/ directory is; scripts run in a temporary $WORK, so a
// relative path would not do.
const goldenDirEnv = "XCSH_GOLDEN_DIR"

// TestScripts runs every scenario in testscripts/ (see docs/testing.md).
func TestScripts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, harnessParams(filepath.Join(root, "testscripts"), filepath.Join(root, "golden")))
}

// harnessParams is shared by TestScripts and the harness's own failure tests,
// which point it at a temporary golden directory.
func harnessParams(scriptDir, goldenDir string) testscript.Params {
	claims := newGoldenClaims()
	return testscript.Params{
		Dir: scriptDir,
		// Only rewrites cmp targets that live inside a txtar; goldens under
		// golden/ are refreshed through GOLDIE_UPDATE.
		UpdateScripts: envTruthy("UPDATE_SCRIPTS"),
		Setup: func(env *testscript.Env) error {
			return setupScript(env, goldenDir, claims)
		},
		Cmds: harnessCmds(),
	}
}

// setupScript gives each script a private home and the deterministic switch,
// and creates the per-script state of the harness commands.
func setupScript(env *testscript.Env, goldenDir string, claims *goldenClaims) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o777); err != nil {
		return err
	}
	env.Setenv("XCSH_DETERMINISTIC", "1")
	env.Setenv("HOME", home)
	env.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, ".xcsh", "agent"))
	env.Setenv(goldenDirEnv, goldenDir)
	if os.Getenv("GORACE") == "" {
		// Under -race the installed commands are race-enabled too, and by
		// default each clean exit sleeps a second to catch late reports.
		env.Setenv("GORACE", "atexit_sleep_ms=10")
	}

	// testscript does not expose the script's environment, only Getenv, so
	// remember the names known now and read their current values at each
	// `rpc start`.
	seen := make(map[string]bool)
	var keys []string
	for _, kv := range env.Vars {
		k, _, ok := strings.Cut(kv, "=")
		if ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	env.Values[harnessKey{}] = &harness{
		t:            env.T(),
		envKeys:      keys,
		procs:        make(map[string]*liveProc),
		claims:       claims,
		waitTimeout:  10 * time.Second,
		closeTimeout: 20 * time.Second,
	}
	return nil
}

// envTruthy reports whether the test process's variable key is set to a
// true value, with goldie's spelling of "true" so GOLDIE_UPDATE means the
// same thing to goldie and to us.
func envTruthy(key string) bool {
	switch strings.ToLower(os.Getenv(key)) {
	case "1", "true", "t":
		return true
	}
	return false
}
