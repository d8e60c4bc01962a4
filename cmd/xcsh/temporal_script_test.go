package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"
)

// The temporal_* scenarios run a real Temporal dev server (the CLI of
// ../shared/temporal, docs/durable.md) and the xcsh built with -tags
// temporal; a scenario skips with the reason when either is missing.

// temporalCLI unpacks the shared CLI once per test process.
var temporalCLI struct {
	once sync.Once
	path string
	err  error
}

func temporalBinary(root string) (string, error) {
	temporalCLI.once.Do(func() {
		gz := filepath.Join(sharedTemporal(root), "temporal-cli-1.8.2-server-1.31.2-linux-amd64.gz")
		f, err := os.Open(gz)
		if err != nil {
			temporalCLI.err = fmt.Errorf("no Temporal CLI: %w", err)
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			temporalCLI.err = err
			return
		}
		dir, err := os.MkdirTemp("", "xcsh-temporal-cli-")
		if err != nil {
			temporalCLI.err = err
			return
		}
		out := filepath.Join(dir, "temporal")
		w, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			temporalCLI.err = err
			return
		}
		_, err = io.Copy(w, zr)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		temporalCLI.path, temporalCLI.err = out, err
	})
	return temporalCLI.path, temporalCLI.err
}

// freePorts finds a port whose next two are free too (the dev server's
// HTTP API and metrics).
func freePorts() (int, error) {
	for i := 0; i < 20; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := true
		for _, p := range []int{port + 1, port + 2} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no three free ports in a row")
}

// temporalServerCmd is `temporal-server`: start a dev server for this
// scenario ($TEMPORAL is its address, $TEMPORAL_CLI the command line); it
// stops with the scenario. A scenario skips first where none can start:
// [!temporal-server] (temporalServerAvailable).
func temporalServerCmd(root string) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 0 {
			ts.Fatalf("usage: temporal-server")
		}
		bin, err := temporalBinary(root)
		if err != nil {
			ts.Fatalf("no Temporal server can start here: %v", err)
		}
		port, err := freePorts()
		if err != nil {
			ts.Fatalf("no Temporal server can start here: %v", err)
		}
		dir := ts.MkAbs("temporal")
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			ts.Fatalf("%v", err)
		}
		if err := os.Symlink(bin, filepath.Join(dir, "bin", "temporal")); err != nil {
			ts.Fatalf("%v", err)
		}
		script := filepath.Join(sharedTemporal(root), "serve.sh")
		cmd := exec.Command("bash", script, dir, strconv.Itoa(port))
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			ts.Fatalf("no Temporal server could start: %v: %s", err, stderr.String())
		}
		lines := strings.Fields(out.String())
		pid, err := strconv.Atoi(lines[len(lines)-1])
		if err != nil {
			ts.Fatalf("serve.sh printed no pid: %q", out.String())
		}
		ts.Defer(func() {
			syscall.Kill(pid, syscall.SIGKILL)
			if p, err := os.FindProcess(pid); err == nil {
				p.Wait()
			}
		})
		ts.Setenv("TEMPORAL", "127.0.0.1:"+strconv.Itoa(port))
		ts.Setenv("TEMPORAL_CLI", bin)
	}
}

// temporalServerAvailable says why no dev server can start here ("" when
// one can): the shared CLI and its script are missing.
func temporalServerAvailable(root string) string {
	if _, err := os.Stat(filepath.Join(sharedTemporal(root), "serve.sh")); err != nil {
		return err.Error()
	}
	if _, err := temporalBinary(root); err != nil {
		return err.Error()
	}
	return ""
}

// sharedTemporal is the folder of the shared dev server: shared/ lies
// beside the clone (CI) or beside the folder of worktrees.
func sharedTemporal(root string) string {
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		dir := filepath.Join(root, up, "shared", "temporal")
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
	}
	return filepath.Join(root, "..", "shared", "temporal")
}

// eventStreamCmd is `event-stream [--seq] FILE...`: the event frames of
// RPC transcripts as the durable and the in-process session both send
// them, one a line on stdout, the files one after another, so a scenario
// compares two streams with cmp (or a golden). It leaves out what is
// allowed to differ: responses (their order among events is the host's
// timing), message_update deltas (best effort on a durable session) and,
// unless --seq, the seq a durable front adds; times (workflow time against
// the scenario's fixed clock) read 0.
func eventStreamCmd(ts *testscript.TestScript, neg bool, args []string) {
	keepSeq := len(args) > 0 && args[0] == "--seq"
	if keepSeq {
		args = args[1:]
	}
	if neg || len(args) == 0 {
		ts.Fatalf("usage: event-stream [--seq] FILE...")
	}
	out := ts.Stdout()
	for _, file := range args {
		for _, line := range strings.Split(ts.ReadFile(file), "\n") {
			if !eventFrame(line) {
				continue
			}
			// A served session's frames carry its id (xcsh serve): the
			// stream is the session's, whoever served it.
			line = sessionKey.ReplaceAllString(line, "${1}}")
			if !keepSeq {
				line = seqKey.ReplaceAllString(line, "}")
			}
			line = timeKey.ReplaceAllString(line, `"${1}":0`)
			fmt.Fprintln(out, line)
		}
	}
}

// eventFrame reports whether line is a whole event frame of the log (not
// a response, the ready line, a delta, a server's own frame, or a line a
// kill cut short).
func eventFrame(line string) bool {
	if !gjson.Valid(line) {
		return false
	}
	switch gjson.Get(line, "type").String() {
	case "", "response", "ready", "message_update",
		"clients_changed", "resolved", "session_closed", "lagged": // xcsh serve's own
		return false
	}
	return true
}

// frontCursorCmd is `front-cursor FILE VAR`: $VAR is the seq of the last
// whole event frame in FILE (0 when none), what a host that saw FILE
// passes to a new front as --temporal-since.
func frontCursorCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: front-cursor FILE VAR")
	}
	var last int64
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if eventFrame(line) {
			last = gjson.Get(line, "seq").Int()
		}
	}
	ts.Setenv(args[1], strconv.FormatInt(last, 10))
}

// sessionOfCmd is `session-of FILE ID VAR`: $VAR is the sessionId of
// the answer with id ID in FILE (an open_session whose session id the
// server made up), so a scenario goes on naming it.
func sessionOfCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: session-of FILE ID VAR")
	}
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if gjson.Valid(line) && gjson.Get(line, "type").String() == "response" && gjson.Get(line, "id").String() == args[1] {
			if id := gjson.Get(line, "data.sessionId").String(); id != "" {
				ts.Setenv(args[2], id)
				return
			}
			ts.Fatalf("the answer %s names no session: %s", args[1], line)
		}
	}
	ts.Fatalf("no answer %s in %s", args[1], args[0])
}

var (
	seqKey     = regexp.MustCompile(`,"seq":\d+\}$`)
	sessionKey = regexp.MustCompile(`,"sessionId":"[^"]*"(,"seq":\d+)?\}$`)
	timeKey    = regexp.MustCompile(`"(timestamp|durationMs)":\d+`)
)

// crashAfterToolMain is the scenarios' xcsh-crash-after-tool: xcsh whose
// worker dies (SIGKILL: no clean-up, no report) right after running a tool
// named in $XCSH_CRASH_AFTER_TOOL (comma-separated), so the call took
// effect and its result was never recorded: the most dangerous moment to
// lose a worker, which a kill from outside cannot hit on purpose.
func crashAfterToolMain() {
	names := strings.Split(os.Getenv("XCSH_CRASH_AFTER_TOOL"), ",")
	afterToolRun = func(name string) {
		if slices.Contains(names, name) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	main()
}
