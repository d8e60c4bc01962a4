package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"
)

// HostOptions configures Host.
type HostOptions struct {
	// Command is the host program and its arguments.
	Command []string
	// Dir is the host's working directory, and what $WORK stands for in
	// the frames it is sent and the lines it sends; the current directory
	// when empty.
	Dir string
	// Env is added to the current environment for the host.
	Env []string
	// Stderr receives the host's stderr; nil discards it.
	Stderr io.Writer
	// Timeout bounds each wait for a line of the host, a write to it and
	// its exit; zero means DefaultTimeout.
	Timeout time.Duration
	// Name is how the report names the transcript.
	Name string
	// SchemaHash is written for SchemaHashToken in the frames the host is
	// sent (the ready frame's schemaHash), as the agent would write it.
	SchemaHash string
}

func (o HostOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Host replays t against a host program: it runs Command with a scripted
// agent on its stdin and stdout, which writes the transcript's outputs in
// order and reads the host's lines, each compared with the transcript's
// next input (as JSON values, ids by position, timestamps ignored, $WORK
// the host's directory). An output waits for the inputs before it, but
// for the response to a command already received: a host that waits for
// each answer before its next command gets it, though the recording sent
// the next command at once. Where the transcript closes the agent's
// stdin, the host must end its output; then the scripted agent ends its
// own and the host must exit 0. The first difference is a Report that is
// not OK; an error means the host could not be started.
func Host(ctx context.Context, t *Transcript, opts HostOptions) (*Report, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("replay: no host command")
	}
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	resolved := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		resolved = r
	}

	toR, toW, err := os.Pipe() // the host's stdin: the scripted agent's stdout
	if err != nil {
		return nil, err
	}
	defer toW.Close()
	fromR, fromW, err := os.Pipe() // the host's stdout: the agent's stdin
	if err != nil {
		toR.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, opts.Command[0], opts.Command[1:]...)
	prepare(cmd)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = toR, fromW, opts.Stderr
	err = cmd.Start()
	toR.Close()
	fromW.Close()
	if err != nil {
		fromR.Close()
		return nil, fmt.Errorf("starting the host %q: %w", opts.Command[0], err)
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	lines := newLineReader(fromR)
	defer func() {
		fromR.Close()
		<-lines.done
	}()

	s := newScripted(t, dir, resolved, opts.timeout(), toW, lines)
	s.hash = opts.SchemaHash
	s.run()
	// The scripted agent's output ends: the host sees the agent exit.
	toW.Close()
	if s.first == nil {
		s.finish(cmd, errc)
	} else {
		// The host may be waiting for what will not come: give it a
		// moment to end by itself (its exit says why), then stop it.
		timer := time.NewTimer(stopGrace)
		select {
		case <-errc:
			s.first.Reason += fmt.Sprintf(" (the host %s)", describeExit(cmd))
		case <-timer.C:
			cancel()
			<-errc
		}
		timer.Stop()
	}

	r := &Report{Transcript: opts.Name, Mode: ModeHost, Inputs: s.matched, Outputs: s.written, Divergence: s.first}
	r.OK = s.first == nil
	return r, nil
}

// scripted is the scripted agent of one host-mode replay; one goroutine
// runs it.
type scripted struct {
	t        *Transcript
	hash     string // SchemaHash
	dir      string // the host's directory, as given and as resolved
	resolved string
	timeout  time.Duration
	stdout   *os.File // the host's stdin
	lines    *lineReader

	ins, outs  []int // indexes in t.Entries of the In and Out entries
	closeAt    int   // index of the Close entry; -1 when none
	respondsTo []int // per entry: the In entry an Out "response" answers, else -1

	matched  int             // ins[:matched] have been received
	played   int             // outs[:played] have been played (written, unless gone)
	written  int             // frames written to the host
	gone     bool            // the host no longer reads its stdin
	eof      bool            // the host's output has ended
	hostLine int             // lines received from the host
	lastOut  int             // transcript line of the last frame written
	hostIDs  map[int][]byte  // per In entry: the id the host gave that command
	agentIDs map[string]bool // ids of the agent's own requests played so far
	first    *Divergence
}

func newScripted(t *Transcript, dir, resolved string, timeout time.Duration, stdout *os.File, lines *lineReader) *scripted {
	s := &scripted{
		t: t, dir: dir, resolved: resolved, timeout: timeout, stdout: stdout, lines: lines,
		closeAt: -1, hostIDs: map[int][]byte{}, agentIDs: map[string]bool{},
	}
	s.respondsTo = make([]int, len(t.Entries))
	lastByID := map[string]int{} // the last In so far with this id
	for i, e := range t.Entries {
		s.respondsTo[i] = -1
		switch e.Kind {
		case In:
			s.ins = append(s.ins, i)
			if id, ok := topID(e); ok {
				lastByID[id] = i
			}
		case Out:
			s.outs = append(s.outs, i)
			if id, ok := topID(e); ok && frameType(e) == "response" {
				if c, ok := lastByID[id]; ok {
					s.respondsTo[i] = c
				}
			}
		case Close:
			s.closeAt = i
		}
	}
	return s
}

// topID is a frame's top-level id as compact JSON.
func topID(e Entry) (string, bool) {
	if e.Raw {
		return "", false
	}
	r := gjson.GetBytes(e.Frame, "id")
	if !r.Exists() {
		return "", false
	}
	return compactJSON(r.Raw), true
}

func frameType(e Entry) string {
	if e.Raw {
		return ""
	}
	return gjson.GetBytes(e.Frame, "type").String()
}

func compactJSON(raw string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(raw)) != nil {
		return raw
	}
	return b.String()
}

func (s *scripted) diverge(d *Divergence) {
	if s.first == nil {
		s.first = d
	}
}

// received reports whether the In entry i has been received.
func (s *scripted) received(i int) bool {
	return s.matched == len(s.ins) || s.ins[s.matched] > i
}

// playable reports whether the next output may be written now: every
// input before it has been received (and, past the close, the host's
// output has ended), or it leads to the response of a command received
// already, with no response to a command not yet received on the way.
func (s *scripted) playable() bool {
	o := s.outs[s.played]
	if s.closeAt >= 0 && o > s.closeAt && !s.eof {
		return false
	}
	if s.received(o) {
		return true
	}
	for _, q := range s.outs[s.played:] {
		if s.closeAt >= 0 && q > s.closeAt && !s.eof {
			return false
		}
		if c := s.respondsTo[q]; c >= 0 {
			return s.received(c)
		}
	}
	return false
}

// run plays and reads until the transcript is done or the host leaves it.
func (s *scripted) run() {
	for s.first == nil {
		for s.played < len(s.outs) && s.playable() {
			if !s.play(s.outs[s.played]) {
				return
			}
		}
		needIn := s.matched < len(s.ins)
		needEOF := s.closeAt >= 0 && !s.eof
		if !needIn && !needEOF {
			return
		}
		s.read(needIn)
	}
}

// play writes one output, with the host's ids in place of the
// transcript's and its directory in place of $WORK.
func (s *scripted) play(i int) bool {
	e := s.t.Entries[i]
	frame := expandWork(e.Frame, s.dir, !e.Raw)
	if s.hash != "" {
		frame = bytes.ReplaceAll(frame, []byte(SchemaHashToken), []byte(s.hash))
	}
	if c := s.respondsTo[i]; c >= 0 {
		if host, ok := s.hostIDs[c]; ok {
			frame = replaceTopID(frame, host)
		}
	} else if id, ok := topID(e); ok && frameType(e) != "response" {
		s.agentIDs[id] = true
	}
	s.played++
	if s.gone {
		return true
	}
	err := s.stdout.SetWriteDeadline(time.Now().Add(s.timeout))
	if err == nil {
		_, err = s.stdout.Write(append(frame, '\n'))
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.diverge(&Divergence{Line: e.Line, Reason: fmt.Sprintf("the host did not read this frame within %v", s.timeout)})
		return false
	case err != nil:
		// The host has closed its stdin or exited: whether it left too
		// soon is for its output to tell (an input still expected, an
		// exit code), not for the frames it no longer reads.
		s.gone = true
		return true
	}
	s.written++
	s.lastOut = e.Line
	return true
}

// replaceTopID puts raw in place of a frame's top-level id value.
func replaceTopID(frame, raw []byte) []byte {
	r := gjson.GetBytes(frame, "id")
	if !r.Exists() || r.Index <= 0 {
		return frame
	}
	out := append([]byte(nil), frame[:r.Index]...)
	out = append(out, raw...)
	return append(out, frame[r.Index+len(r.Raw):]...)
}

// read takes the host's next line and checks it: the next input when one
// is expected, else the end of the host's output.
func (s *scripted) read(needIn bool) {
	wantLine := 0
	var want *Entry
	if needIn {
		want = &s.t.Entries[s.ins[s.matched]]
		wantLine = want.Line
	} else {
		wantLine = s.t.Entries[s.closeAt].Line
	}
	line, ok, timedOut := s.lines.next(s.timeout)
	switch {
	case timedOut:
		what := "to end its output (close the agent's stdin)"
		if want != nil {
			what = "this input"
		}
		reason := fmt.Sprintf("the host sent nothing within %v; the transcript expects %s", s.timeout, what)
		if s.lastOut > 0 {
			reason += fmt.Sprintf(" after the frame of line %d", s.lastOut)
		}
		s.diverge(&Divergence{Line: wantLine, Reason: reason, Want: wantRaw(want)})
	case !ok:
		if want != nil {
			s.diverge(&Divergence{Line: wantLine, HostLine: s.hostLine + 1, Reason: "the host ended its output (closed the agent's stdin, or exited) where the transcript expects this input", Want: wantRaw(want)})
			return
		}
		s.eof = true
	default:
		s.hostLine++
		norm := NormaliseWork(NormaliseWork(line, s.resolved), s.dir)
		if want == nil {
			s.diverge(&Divergence{Line: wantLine, HostLine: s.hostLine, Reason: "the host sent a line where the transcript expects it to close the agent's stdin", Got: rawOrString(norm)})
			return
		}
		d, hostID := s.match(*want, norm)
		if d != nil {
			s.diverge(&Divergence{Line: wantLine, HostLine: s.hostLine, Reason: "the host's line differs: " + d.What, Pointer: d.Pointer, Want: wantRaw(want), Got: rawOrString(norm)})
			return
		}
		if hostID != nil {
			s.hostIDs[s.ins[s.matched]] = hostID
		}
		s.matched++
	}
}

func wantRaw(e *Entry) json.RawMessage {
	if e == nil {
		return nil
	}
	return rawOrString(e.Frame)
}

// match compares the host's line with the transcript's input. The id of a
// command is the host's to choose: match returns it, and the agent's
// answers to that command carry it. An id the agent chose (a dialog's, a
// host tool call's) must come back as it was sent.
func (s *scripted) match(want Entry, got []byte) (*difference, []byte) {
	if want.Raw {
		if !bytes.Equal(want.Frame, got) {
			return &difference{What: fmt.Sprintf("want %q, got %q", clip(string(want.Frame), 200), clip(string(got), 200))}, nil
		}
		return nil, nil
	}
	gv, err := decodeJSON(got)
	if err != nil {
		return &difference{What: fmt.Sprintf("not JSON (%v)", err)}, nil
	}
	wv, err := decodeJSON(want.Frame)
	if err != nil {
		return &difference{What: fmt.Sprintf("the transcript's input is not JSON (%v)", err)}, nil
	}
	_, wantObj := wv.(map[string]any)
	_, gotObj := gv.(map[string]any)
	if !wantObj || !gotObj {
		return compareJSON(wv, gv, ignoredKeys, nil), nil
	}
	wantID, hasWant := topID(want)
	gotID := gjson.GetBytes(got, "id")
	switch {
	case hasWant && !gotID.Exists():
		return &difference{"/id", fmt.Sprintf("missing (want an id, as %s)", wantID)}, nil
	case !hasWant && gotID.Exists():
		return &difference{"/id", fmt.Sprintf("not in the transcript (got %s): this input has no id, so its answer carries none", gotID.Raw)}, nil
	case !hasWant || s.agentIDs[wantID]:
		return compareJSON(wv, gv, ignoredKeys, nil), nil
	}
	if t := gotID.Type; t != gjson.String && t != gjson.Number {
		return &difference{"/id", fmt.Sprintf("want a string or a number, got %s", gotID.Raw)}, nil
	}
	if d := compareJSON(wv, gv, ignoredKeys, map[string]bool{"id": true}); d != nil {
		return d, nil
	}
	return nil, []byte(compactJSON(gotID.Raw))
}

// finish waits for the host to exit once the scripted agent's output has
// ended; a host that has not ended its output must do so first, and send
// nothing more.
func (s *scripted) finish(cmd *exec.Cmd, errc <-chan error) {
	exitLine := s.t.Entries[len(s.t.Entries)-1].Line
	for !s.eof {
		line, ok, timedOut := s.lines.next(s.timeout)
		switch {
		case timedOut:
			s.diverge(&Divergence{Line: exitLine, Reason: fmt.Sprintf("the host did not end its output within %v of the agent's", s.timeout)})
		case !ok:
			s.eof = true
			continue
		default:
			s.hostLine++
			s.diverge(&Divergence{Line: exitLine, HostLine: s.hostLine, Reason: "the host sent a line after the transcript's last input", Got: rawOrString(NormaliseWork(line, s.dir))})
		}
		cmd.Cancel()
		<-errc
		return
	}
	if !waitExit(cmd, errc, s.timeout) {
		s.diverge(&Divergence{Line: exitLine, Reason: fmt.Sprintf("the host did not exit within %v of the agent's output ending; killed", s.timeout)})
		return
	}
	if code := exitCode(cmd); code != 0 {
		s.diverge(&Divergence{Line: exitLine, Reason: fmt.Sprintf("the host %s, want exit code 0", describeExit(cmd))})
	}
}

// describeExit says how a finished command ended.
func describeExit(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "did not run"
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return fmt.Sprintf("exited with code %d", code)
	}
	return "was killed: " + cmd.ProcessState.String()
}
