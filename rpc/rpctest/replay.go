package rpctest

// rpc replay: a live process's conversation, recorded as the script drove
// it, written and compared as a replay transcript (rpc/replay) in
// golden/replay/. An input stands after the frame the script's last
// `rpc wait` matched before sending it, which is what makes a replay wait
// where the script waited.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xcsh-go/xcsh/rpc/replay"
)

// recording is what the script did to one process started by rpc start.
// The script's goroutine alone touches it.
type recording struct {
	program string
	args    []string
	env     []string // the KEY=VALUE words of rpc start
	dir     string   // where it started, relative to $WORK
	// files are $WORK's small files as they were at the start, by path
	// relative to $WORK: what rpc replay embeds (the agent may delete
	// or change them as it runs).
	files  map[string][]byte
	events []recEvent
	// refused names the first thing the script did that a transcript
	// cannot hold; rpc replay then refuses.
	refused string
}

// recEvent is an input line or the close of stdin, with the cursor (the
// frames rpc wait had consumed) when it happened.
type recEvent struct {
	cursor int
	line   []byte // without "\n"; nil for the close
}

// Bounds of the snapshot of $WORK taken at rpc start: a transcript embeds
// a fake provider's script or a context file, not a data set.
const (
	snapshotFileMax  = 256 << 10
	snapshotTotalMax = 4 << 20
	snapshotEntries  = 2000 // files and directories looked at
)

func newRecording(work, dir, program string, args, env []string) *recording {
	r := &recording{program: program, args: args, env: env, files: map[string][]byte{}}
	if rel, err := filepath.Rel(work, dir); err == nil {
		r.dir = filepath.ToSlash(rel)
	}
	total, seen := 0, 0
	filepath.WalkDir(work, func(path string, d fs.DirEntry, err error) error {
		if seen++; seen > snapshotEntries {
			return filepath.SkipAll
		}
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(work, path)
		if d.IsDir() {
			// The private home and testscript's temporary directory are
			// the harness's, not the scenario's; an installed package
			// is no part of a transcript.
			if rel == "home" || rel == ".tmp" || d.Name() == "node_modules" || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > snapshotFileMax || total+int(info.Size()) > snapshotTotalMax {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil {
			r.files[filepath.ToSlash(rel)] = b
			total += len(b)
		}
		return nil
	})
	return r
}

// note records an rpc subcommand about to act on the process. A nil
// recording (epipe start) records nothing.
func (r *recording) note(ts *testscript.TestScript, sub string, args []string, cursor int) {
	if r == nil {
		return
	}
	switch sub {
	case "send":
		if len(args) == 1 {
			r.input(cursor, args[0])
		}
	case "sendfile":
		if len(args) != 1 {
			return
		}
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		if err != nil {
			return // sendfile fails the script itself
		}
		if len(b) == 0 || b[len(b)-1] != '\n' {
			r.refuse("rpc sendfile of a file that does not end with a newline")
			return
		}
		for _, l := range strings.SplitAfter(string(b[:len(b)-1]), "\n") {
			r.input(cursor, strings.TrimSuffix(l, "\n"))
		}
	case "eof", "close":
		if n := len(r.events); n == 0 || r.events[n-1].line != nil {
			r.events = append(r.events, recEvent{cursor: cursor})
		}
	case "sendraw", "poll", "signal":
		r.refuse("rpc " + sub)
	}
}

func (r *recording) input(cursor int, line string) {
	if r.closed() {
		return // the write fails the script
	}
	r.events = append(r.events, recEvent{cursor: cursor, line: []byte(line)})
}

func (r *recording) closed() bool {
	n := len(r.events)
	return n > 0 && r.events[n-1].line == nil
}

func (r *recording) refuse(what string) {
	if r != nil && r.refused == "" {
		r.refused = what
	}
}

var replayNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

const replayUsage = "usage: rpc replay [--name N] NAME [FILE...] (after rpc close: compares the transcript with golden/replay/NAME.jsonl; FILEs are the work directory's files the agent needs)"

// replayGolden implements `rpc replay [--name N] NAME [FILE...]`.
func (h *harness) replayGolden(ts *testscript.TestScript, p *liveProc, args []string) {
	if len(args) == 0 || !replayNameRE.MatchString(args[0]) || strings.HasSuffix(args[0], ".jsonl") {
		ts.Fatalf("%s", replayUsage)
	}
	name, files := args[0], args[1:]
	t, err := p.transcript(ts, files)
	if err != nil {
		ts.Fatalf("rpc replay: %v", err)
	}
	var b bytes.Buffer
	if err := t.Encode(&b); err != nil {
		ts.Fatalf("rpc replay: %v", err)
	}
	h.compareGolden(ts, fmt.Sprintf("the replay transcript of %q", p.name), "replay/"+name, b.Bytes())
}

// transcript builds the replay transcript of a closed process.
func (p *liveProc) transcript(ts *testscript.TestScript, files []string) (*replay.Transcript, error) {
	r := p.rec
	switch {
	case !p.closed || p.cmd.ProcessState == nil:
		return nil, fmt.Errorf("close %q first (rpc close): a transcript ends with the exit", p.name)
	case r == nil:
		return nil, fmt.Errorf("%q was started by epipe start; a transcript cannot hold what the harness did to its pipes", p.name)
	case r.refused != "":
		return nil, fmt.Errorf("%q cannot be replayed: the script used %s, which a transcript cannot hold", p.name, r.refused)
	case filepath.Base(r.program) != "xcsh":
		return nil, fmt.Errorf("%q runs %s; a replay runs xcsh", p.name, r.program)
	case r.dir != ".":
		return nil, fmt.Errorf("%q started in %s; a replay starts the agent in $WORK", p.name, r.dir)
	}
	code, sig := procExitStatus(p.cmd.ProcessState)
	if sig != nil {
		return nil, fmt.Errorf("%q was killed by %v; a transcript ends with an exit code", p.name, sig)
	}
	work := ts.Getenv("WORK")
	norm := func(s string) (string, error) {
		if strings.Contains(s, replay.WorkToken) {
			return "", fmt.Errorf("%q holds a literal %s, which a replay would take for the work directory", s, replay.WorkToken)
		}
		return string(replay.NormaliseWork([]byte(s), work)), nil
	}

	t := &replay.Transcript{Header: replay.Header{Args: []string{}}}
	for _, a := range r.args {
		a, err := norm(a)
		if err != nil {
			return nil, err
		}
		t.Header.Args = append(t.Header.Args, a)
	}
	for _, kv := range r.env {
		k, v, _ := strings.Cut(kv, "=")
		v, err := norm(v)
		if err != nil {
			return nil, err
		}
		if t.Header.Env == nil {
			t.Header.Env = map[string]string{}
		}
		t.Header.Env[k] = v
	}
	for _, f := range files {
		rel, err := filepath.Rel(work, ts.MkAbs(f))
		if err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("file %s is not inside $WORK", f)
		}
		b, ok := r.files[filepath.ToSlash(rel)]
		if !ok {
			return nil, fmt.Errorf("file %s did not exist when %q started (or was over %d KiB)", f, p.name, snapshotFileMax>>10)
		}
		if t.Header.Files == nil {
			t.Header.Files = map[string]string{}
		}
		t.Header.Files[filepath.ToSlash(rel)] = string(b)
	}

	frames, _, _ := p.out.snapshot()
	ev := r.events
	emit := func(upTo int) error {
		for len(ev) > 0 && ev[0].cursor <= upTo {
			e := ev[0]
			ev = ev[1:]
			if e.line == nil {
				t.Entries = append(t.Entries, replay.Entry{Kind: replay.Close})
				continue
			}
			l, err := norm(string(e.line))
			if err != nil {
				return err
			}
			t.Entries = append(t.Entries, replay.Entry{Kind: replay.In, Frame: []byte(l), Raw: !isJSONText(l)})
		}
		return nil
	}
	for i, f := range frames {
		if err := emit(i); err != nil {
			return nil, err
		}
		if !f.json || f.partial {
			return nil, fmt.Errorf("frame %d of %q is not a JSON line: %s", i+1, p.name, clipFrame(f.line))
		}
		t.Entries = append(t.Entries, replay.Entry{Kind: replay.Out, Frame: replay.NormaliseWork(f.line, work)})
	}
	if err := emit(len(frames)); err != nil {
		return nil, err
	}
	t.Entries = append(t.Entries, replay.Entry{Kind: replay.Exit, Code: code})
	return t, nil
}

// isJSONText reports whether a line is one JSON value without a newline.
func isJSONText(s string) bool {
	return s != "" && !strings.ContainsAny(s, "\n") && json.Valid([]byte(s))
}
