package rpctest

// Tests of how the harness fails: a script that should fail is run under
// testscript.RunT with a T that records instead of failing, and the test
// checks that the failure says what a reader needs (frames seen, stderr,
// the golden diff, how to create a golden).

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// recordT is a testscript.T that records failures and logs. It embeds the
// outer test only so that it is a testing.TB, as the golden command needs;
// every method testscript and goldenTB call is overridden, so the outer
// test never fails through it.
type recordT struct {
	testing.TB
	mu     sync.Mutex // guards log, failed and script
	log    strings.Builder
	failed bool
	script string // the script being run, named as testing names a subtest
}

// Name is the outer test's name and the script's, as testing.T.Run would
// name the script's subtest; the golden command quotes it as a -run pattern.
func (r *recordT) Name() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.TB.Name() + "/" + r.script
}

func (r *recordT) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(&r.log, args...)
}

func (r *recordT) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit() // as testing.T does: testscript relies on FailNow not returning
}

func (r *recordT) Fatal(args ...any) {
	r.Log(args...)
	r.FailNow()
}

func (r *recordT) Skip(args ...any) {
	r.Log(append([]any{"SKIP:"}, args...)...)
	runtime.Goexit()
}

func (r *recordT) Parallel()     {}
func (r *recordT) Verbose() bool { return false }

// Run runs f on its own goroutine, so FailNow's Goexit ends only f. The
// scripts run one after another: Parallel does nothing.
func (r *recordT) Run(name string, f func(testscript.T)) {
	r.mu.Lock()
	r.script = name
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

func (r *recordT) result() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed, r.log.String()
}

// runRecorded runs the scripts (name -> txtar text) in order against
// goldenDir and returns whether any failed and the combined log.
// closeTimeout, if not zero, replaces rpc close's bound before it kills.
func runRecorded(t *testing.T, goldenDir string, closeTimeout time.Duration, scripts ...[2]string) (bool, string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, s := range scripts {
		f := filepath.Join(dir, s[0]+".txtar")
		if err := os.WriteFile(f, []byte(s[1]), 0o666); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p := Params("", goldenDir)
	p.Files = files
	p.WorkdirRoot = t.TempDir()
	if closeTimeout != 0 {
		setup := p.Setup
		p.Setup = func(env *testscript.Env) error {
			if err := setup(env); err != nil {
				return err
			}
			env.Values[harnessKey{}].(*harness).closeTimeout = closeTimeout
			return nil
		}
	}
	r := &recordT{TB: t}
	testscript.RunT(r, p)
	return r.result()
}

func TestHarnessFailures(t *testing.T) {
	// The golden cases must compare, even under `GOLDIE_UPDATE=1 go test`.
	t.Setenv("GOLDIE_UPDATE", "")
	goldenDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(goldenDir, "mismatch.jsonl"), []byte("{\"type\":\"ready\",\"version\":\"0.0.0\"}\n{\"type\":\"bye\",\"lines\":0}\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	const ready = "rpc start jsonl-echo\nrpc wait '#(type==\"ready\")'\n"
	tests := []struct {
		name   string
		script string
		want   []string
		// closeTimeout, if set, replaces rpc close's 20s bound. Only the
		// case that tests the kill path sets it: a short bound on a process
		// that is meant to exit turns a slow machine into a red build.
		closeTimeout time.Duration
	}{
		{
			// The raw line cannot match a query, so the script waits for the
			// tick that follows it: the dump of the timed-out wait then holds
			// it however slowly the reader ran, and the 50ms bound only
			// decides how soon the wait gives up.
			name:   "wait timeout prints frames and stderr",
			script: "rpc start jsonl-echo -stderr 'boot log' -raw 'garbage' -frames 1\nrpc wait '#(type==\"ready\")'\nrpc wait '#(type==\"tick\")'\nrpc wait '#(type==\"never\")' 50ms\n",
			want:   []string{`no frame matched #(type=="never") within 50ms`, `1 {"type":"ready","version":"0.0.0"}`, `2 garbage [not JSON]`, `3 {"type":"tick","n":1}`, "stderr:\nboot log", `(running), 3 frames, cursor after frame 3`},
		},
		{
			name:   "wait fails fast when the process exits",
			script: "rpc start jsonl-echo -no-such-flag\nrpc wait '#(type==\"ready\")'\n",
			want:   []string{`exited (exit code 2) before a frame matched #(type=="ready")`, "flag provided but not defined: -no-such-flag"},
		},
		{
			name:   "negated wait is refused",
			script: ready + "! rpc wait '#(type==\"ready\")'\n",
			want:   []string{"! rpc wait is not supported"},
		},
		{
			name:   "expect with no match",
			script: ready + "rpc expect '#(type==\"nope\")'\n",
			want:   []string{`no frame matches #(type=="nope")`, `1 {"type":"ready"`},
		},
		{
			name:   "negated expect with a match",
			script: ready + "! rpc expect '#(type==\"ready\")'\n",
			want:   []string{`frame 1 matches #(type=="ready"), want none`},
		},
		{
			name:   "unexpected exit code",
			script: "rpc start jsonl-echo -exit 3\nrpc wait '#(type==\"ready\")'\nrpc close\n",
			want:   []string{`"default" exit code 3, want exit code 0`},
		},
		{
			name:         "close kills a process that does not exit",
			script:       "rpc start jsonl-echo -hang\nrpc wait '#(type==\"ready\")'\nrpc close\n",
			want:         []string{`did not exit within 300ms of stdin closing; killed`, `{"type":"bye","lines":0}`},
			closeTimeout: 300 * time.Millisecond, // the process never exits: short enough to test the kill path without a 20s wait
		},
		{
			name:   "signal expected but exited",
			script: ready + "rpc close --expect-signal TERM\n",
			want:   []string{`exit code 0, want killed by signal terminated`},
		},
		{
			name:   "bad escape",
			script: ready + "rpc sendraw 'a\\q'\n",
			want:   []string{`rpc sendraw: bad escape at "\\q"`},
		},
		{
			name:   "unknown subcommand",
			script: "rpc stop\n",
			want:   []string{`rpc: unknown subcommand "stop"`, "rpc close   [--name N]"},
		},
		{
			name:   "unquoted json",
			script: ready + "rpc send {\"a\": 1}\n",
			want:   []string{"usage: rpc send"},
		},
		{
			name:   "no such process",
			script: "rpc send --name other '{}'\n",
			want:   []string{`no process named "other"`},
		},
		{
			name:   "start twice",
			script: ready + "rpc start jsonl-echo\n",
			want:   []string{`process "default" is still running`},
		},
		{
			name:   "program not on PATH",
			script: "rpc start no-such-program\n",
			want:   []string{`"no-such-program" not found in the script's $PATH`},
		},
		{
			name:   "frames over a file with a non-JSON line",
			script: "frames f.jsonl '#(type==\"a\")'\n-- f.jsonl --\n{\"type\":\"a\"}\nnot json\n",
			want:   []string{"f.jsonl line 2 is not JSON"},
		},
		{
			name:   "frames count of a single match",
			script: "frames f.jsonl '#(type==\"a\")' 1\n-- f.jsonl --\n{\"type\":\"a\"}\n",
			want:   []string{"which is not a count"},
		},
		{
			name:   "frames valid lists each problem",
			script: "frames f.jsonl valid\n-- f.jsonl --\n{\"type\":\"a\"}\n[1]\n\n",
			want:   []string{"line 2: not a JSON object: [1]", "line 3: not JSON"},
		},
		{
			name:   "missing golden says how to create it",
			script: ready + "rpc close\ngolden rpc.stdout absent\n",
			want:   []string{"absent.jsonl does not exist; create it with", "GOLDIE_UPDATE=1 go test ./rpc/rpctest/ -run 'TestHarnessFailures/missing_golden_says_how_to_create_it/script'"},
		},
		{
			name:   "golden mismatch shows a diff",
			script: ready + "rpc send 'x'\nrpc wait '#(type==\"echo\")'\nrpc close\ngolden rpc.stdout mismatch\n",
			want:   []string{"rpc.stdout (normalised) differs from", "-{\"type\":\"bye\",\"lines\":0}", "+{\"type\":\"echo\",\"line\":\"x\",\"len\":1}", "if the change is intended"},
		},
		{
			name:   "replay before close",
			script: "rpc start xcsh\nrpc replay early\n",
			want:   []string{`rpc replay: close "default" first (rpc close)`},
		},
		{
			name:   "replay of what a transcript cannot hold",
			script: "rpc start xcsh\nrpc sendraw 'a\\r\\n'\nrpc close\nrpc replay raw\n",
			want:   []string{`"default" cannot be replayed: the script used rpc sendraw`},
		},
		{
			name:   "replay of a flow that waited on a file",
			script: "rpc start xcsh\nwaitfile f\nrpc close\nrpc replay wf\n-- f --\nx\n",
			want:   []string{`the script used waitfile (a replay waits on frames, not files)`},
		},
		{
			name:   "replay of another program",
			script: ready + "rpc close\nrpc replay other\n",
			want:   []string{`"default" runs jsonl-echo; a replay runs xcsh`},
		},
		{
			name:   "replay of a file made later",
			script: "rpc start xcsh\nrpc close\ncp f later.json\nrpc replay late later.json\n-- f --\n{}\n",
			want:   []string{`file later.json did not exist when "default" started`},
		},
		{
			name:   "replay of a literal $WORK",
			script: "rpc start xcsh\nrpc send '{\"p\":\"$WORK\"}'\nrpc close\nrpc replay lit\n",
			want:   []string{`holds a literal $WORK, which a replay would take for the work directory`},
		},
		{
			name:   "replay name",
			script: "rpc start xcsh\nrpc close\nrpc replay ../x\n",
			want:   []string{"usage: rpc replay [--name N] NAME [FILE...]"},
		},
		{
			name:   "bad golden name",
			script: "golden f ../escape\n-- f --\n",
			want:   []string{`golden: bad name "../escape"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			failed, log := runRecorded(t, goldenDir, tt.closeTimeout, [2]string{"script", tt.script})
			if !failed {
				t.Fatalf("script passed, want a failure; log:\n%s", log)
			}
			for _, w := range tt.want {
				if !strings.Contains(log, w) {
					t.Errorf("log lacks %q; log:\n%s", w, log)
				}
			}
		})
	}
}

// TestHarnessGoldenUpdate checks that GOLDIE_UPDATE writes the normalised
// transcript and that the next run compares equal.
func TestHarnessGoldenUpdate(t *testing.T) {
	goldenDir := t.TempDir()
	script := [2]string{"update", "rpc start jsonl-echo -cwd\nrpc wait '#(type==\"cwd\")'\nrpc close\ngolden rpc.stdout fresh\n"}

	t.Setenv("GOLDIE_UPDATE", "1")
	if failed, log := runRecorded(t, goldenDir, 0, script); failed {
		t.Fatalf("update run failed:\n%s", log)
	}
	got, err := os.ReadFile(filepath.Join(goldenDir, "fresh.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"type\":\"ready\",\"version\":\"0.0.0\"}\n{\"type\":\"cwd\",\"dir\":\"$WORK\"}\n{\"type\":\"bye\",\"lines\":0}\n"
	if string(got) != want {
		t.Errorf("golden = %q, want %q", got, want)
	}

	t.Setenv("GOLDIE_UPDATE", "")
	if failed, log := runRecorded(t, goldenDir, 0, script); failed {
		t.Fatalf("compare run failed:\n%s", log)
	}
}

// TestHarnessReplayUpdate checks that rpc replay writes the transcript of
// what the script did (each input after the frame its last wait matched,
// a line that is not JSON raw, a file's lines one by one, the files asked
// for as they were at the start) and that the next run compares equal.
func TestHarnessReplayUpdate(t *testing.T) {
	goldenDir := t.TempDir()
	script := [2]string{"update", `rpc start K=v xcsh -cwd
rpc send '{"id":"a","type":"first"}'
rpc wait '#(type=="cwd")'
rpc send 'not json'
rpc sendfile two.jsonl
rpc wait '#(line=="{\"n\":2}")'
rpc close
rpc replay echoed data/in.txt
-- data/in.txt --
hello
-- two.jsonl --
{"n":1}
{"n":2}
`}

	t.Setenv("GOLDIE_UPDATE", "1")
	if failed, log := runRecorded(t, goldenDir, 0, script); failed {
		t.Fatalf("update run failed:\n%s", log)
	}
	got, err := os.ReadFile(filepath.Join(goldenDir, "replay", "echoed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"xcshReplay":1,"args":["-cwd"],"env":{"K":"v"},"files":{"data/in.txt":"hello\n"}}
{"in":{"id":"a","type":"first"}}
{"out":{"type":"ready","version":"0.0.0"}}
{"out":{"type":"cwd","dir":"$WORK"}}
{"inRaw":"not json"}
{"in":{"n":1}}
{"in":{"n":2}}
{"out":{"type":"echo","line":"{\"id\":\"a\",\"type\":\"first\"}","len":25}}
{"out":{"type":"echo","line":"not json","len":8}}
{"out":{"type":"echo","line":"{\"n\":1}","len":7}}
{"out":{"type":"echo","line":"{\"n\":2}","len":7}}
{"close":true}
{"out":{"type":"bye","lines":4}}
{"exit":0}
`
	if string(got) != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", got, want)
	}

	t.Setenv("GOLDIE_UPDATE", "")
	if failed, log := runRecorded(t, goldenDir, 0, script); failed {
		t.Fatalf("compare run failed:\n%s", log)
	}
}

// TestHarnessGoldenClaims checks that two scripts cannot share a golden.
func TestHarnessGoldenClaims(t *testing.T) {
	t.Parallel()
	goldenDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(goldenDir, "shared.jsonl"), []byte("{}\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	body := "golden f.jsonl shared\n-- f.jsonl --\n{}\n"
	failed, log := runRecorded(t, goldenDir, 0, [2]string{"first", body}, [2]string{"second", body})
	if !failed || !strings.Contains(log, `golden "shared" is already used by script first`) {
		t.Fatalf("want the second script to fail on the shared golden; failed=%v log:\n%s", failed, log)
	}
}
