package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DefaultTimeout bounds each wait of a replay (for the agent's next frame,
// the host's next line, an exit) when the options give none. It is a hang
// guard, far above the work: a loaded machine is slow, not stuck.
const DefaultTimeout = 30 * time.Second

// AgentOptions configures Agent.
type AgentOptions struct {
	// Path is the agent's binary: xcsh itself for `xcsh replay`.
	Path string
	// Timeout bounds each wait for a frame, a write and the exit; zero
	// means DefaultTimeout.
	Timeout time.Duration
	// Name is how the report names the transcript.
	Name string
}

func (o AgentOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// agentStderrTail is how much of the agent's stderr a report keeps.
const agentStderrTail = 8 << 10

// Agent replays t against the agent: it starts Path with the header's
// arguments in a fresh work directory holding the header's files, with
// the environment the suite gives a scenario (XCSH_DETERMINISTIC=1, a
// private HOME), sends each input once the output before it has arrived,
// closes stdin where the transcript does, and compares every frame, and
// the exit code, with the transcript after NormaliseWork. A difference is
// a Report that is not OK; an error means the replay could not run (no
// binary, no temporary directory).
func Agent(ctx context.Context, t *Transcript, opts AgentOptions) (*Report, error) {
	work, err := os.MkdirTemp("", "xcsh-replay-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	// The agent reports its working directory as the kernel resolves it.
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}
	if err := writeFiles(work, t.Header.Files); err != nil {
		return nil, err
	}

	// Pipes of our own, not StdinPipe: an *os.File write takes a
	// deadline, so an agent that stops reading cannot hang the replay.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		return nil, err
	}
	startErr := func(err error) (*Report, error) {
		outR.Close()
		return nil, err
	}
	stderr := &tailBuffer{max: agentStderrTail}
	args := make([]string, len(t.Header.Args))
	for i, a := range t.Header.Args {
		args[i] = string(expandWork([]byte(a), work, false))
	}
	env := make(map[string]string, len(t.Header.Env))
	for k, v := range t.Header.Env {
		env[k] = string(expandWork([]byte(v), work, false))
	}
	cmd := exec.CommandContext(ctx, opts.Path, args...)
	prepare(cmd)
	cmd.Dir = work
	cmd.Env = agentEnv(work, env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	err = cmd.Start()
	// The child has its copies; ours would hide its end of stdout and
	// its exit from our writes.
	inR.Close()
	outW.Close()
	if err != nil {
		return startErr(fmt.Errorf("starting the agent: %w", err))
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()

	frames := newLineReader(outR)
	defer func() {
		outR.Close() // ends the reader, if the agent's stdout is still open
		<-frames.done
	}()
	d := &agentDrive{t: t, work: work, timeout: opts.timeout(), stdin: inW, frames: frames}
	d.drive()
	d.drain()
	if !waitExit(cmd, errc, d.timeout) {
		d.diverge(&Divergence{Line: d.exitLine(), Reason: fmt.Sprintf("the agent did not exit within %v of its stdin closing; killed", d.timeout)})
	}
	d.exited(exitCode(cmd))

	r := &Report{Transcript: opts.Name, Mode: ModeAgent, Inputs: d.sent, Outputs: d.received}
	if d.first == nil {
		r.OK = true
		return r, nil
	}
	d.first.Diff = d.diff(opts.Name)
	d.first.Stderr = string(NormaliseWork([]byte(stderr.String()), work))
	r.Divergence = d.first
	return r, nil
}

// agentDrive is the state of one agent-mode replay; one goroutine runs it.
type agentDrive struct {
	t       *Transcript
	work    string
	timeout time.Duration
	stdin   *os.File
	frames  *lineReader

	got      []Entry // this run as a transcript: what was sent and received, in order
	sent     int     // inputs written
	received int     // frames read
	closed   bool    // stdin is closed
	first    *Divergence
}

func (d *agentDrive) diverge(div *Divergence) {
	if d.first == nil {
		d.first = div
	}
}

// drive walks the transcript: each output is read and compared, each
// input written once the outputs before it have arrived. It goes on past
// a frame that differs, so the diff shows the whole run, and stops when
// the agent ends its output, falls silent or stops reading.
func (d *agentDrive) drive() {
	for i := range d.t.Entries {
		e := &d.t.Entries[i]
		switch e.Kind {
		case Out:
			line, ok, timedOut := d.frames.next(d.timeout)
			if !ok {
				reason := "the agent ended its output (exited) before this frame"
				if timedOut {
					reason = fmt.Sprintf("no frame from the agent within %v", d.timeout)
				}
				d.diverge(&Divergence{Line: e.Line, Frame: d.received + 1, Reason: reason, Want: rawOrString(e.Frame)})
				return
			}
			d.receive(line, e)
		case In:
			line := expandWork(e.Frame, d.work, !e.Raw)
			if err := d.write(append(line, '\n')); err != nil {
				d.diverge(&Divergence{Line: e.Line, Reason: fmt.Sprintf("the agent did not read this input: %v", err), Want: rawOrString(e.Frame)})
				return
			}
			d.sent++
			d.got = append(d.got, *e)
		case Close:
			d.closeStdin()
		case Exit:
			// Checked once the agent has exited.
		}
	}
}

// drain closes stdin, if the transcript did not, and reads the rest of
// the agent's output: frames beyond the transcript's are a difference.
func (d *agentDrive) drain() {
	d.closeStdin()
	for {
		line, ok, timedOut := d.frames.next(d.timeout)
		if timedOut {
			d.diverge(&Divergence{Line: d.exitLine(), Reason: fmt.Sprintf("the agent neither wrote nor ended its output within %v of its stdin closing", d.timeout)})
			return
		}
		if !ok {
			return
		}
		d.receive(line, nil)
	}
}

// receive records a frame and compares it with want (nil: a frame the
// transcript does not have).
func (d *agentDrive) receive(line []byte, want *Entry) {
	d.received++
	norm := NormaliseWork(line, d.work)
	d.got = append(d.got, Entry{Kind: Out, Frame: norm, Raw: !isJSONLine(norm)})
	if want == nil {
		d.diverge(&Divergence{Line: d.exitLine(), Frame: d.received, Reason: "the agent wrote a frame the transcript does not have", Got: rawOrString(norm)})
		return
	}
	if bytes.Equal(norm, want.Frame) {
		return
	}
	diff := firstDifference(want.Frame, norm)
	d.diverge(&Divergence{
		Line: want.Line, Frame: d.received,
		Reason:  "the agent's frame differs: " + diff.What,
		Pointer: diff.Pointer,
		Want:    rawOrString(want.Frame), Got: rawOrString(norm),
	})
}

func (d *agentDrive) write(b []byte) error {
	if d.closed {
		return fmt.Errorf("stdin is closed")
	}
	if err := d.stdin.SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
		return err
	}
	_, err := d.stdin.Write(b)
	return err
}

func (d *agentDrive) closeStdin() {
	if d.closed {
		return
	}
	d.closed = true
	d.stdin.Close()
	d.got = append(d.got, Entry{Kind: Close})
}

// exited records the exit and compares its code with the transcript's.
func (d *agentDrive) exited(code int) {
	d.got = append(d.got, Entry{Kind: Exit, Code: code})
	for _, e := range d.t.Entries {
		if e.Kind == Exit && e.Code != code {
			d.diverge(&Divergence{Line: e.Line, Reason: fmt.Sprintf("the agent exited with code %d, want %d", code, e.Code)})
		}
	}
}

// exitLine is the transcript line a difference at the end belongs to:
// the exit line, or the last line.
func (d *agentDrive) exitLine() int {
	n := len(d.t.Entries)
	if n == 0 {
		return 1
	}
	return d.t.Entries[n-1].Line
}

// diff is the unified diff of the transcript file and this run written as
// a transcript with the same header.
func (d *agentDrive) diff(name string) string {
	want := transcriptLines(d.t.Header, d.t.Entries)
	got := transcriptLines(d.t.Header, d.got)
	if name == "" {
		name = "transcript"
	}
	return unifiedDiff(name, "this run", want, got)
}

// transcriptLines renders a transcript as its file's lines.
func transcriptLines(h Header, entries []Entry) []string {
	var b bytes.Buffer
	if err := (&Transcript{Header: h, Entries: entries}).Encode(&b); err != nil {
		return []string{fmt.Sprintf("(cannot render the transcript: %v)", err)}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// writeFiles creates the work directory's home, temporary directory and
// the header's files. A file that starts with "#!" is made executable.
func writeFiles(work string, files map[string]string) error {
	for _, dir := range []string{"home", ".tmp"} {
		if err := os.MkdirAll(filepath.Join(work, dir), 0o755); err != nil {
			return err
		}
	}
	for name, body := range files {
		if !localPath(name) {
			return fmt.Errorf("replay: file %q is not a relative path inside the work directory", name)
		}
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			return err
		}
	}
	return nil
}

// agentEnv is the agent's environment: what the suite gives a scenario's
// process (a private home and agent directory, the deterministic switch,
// $WORK, a temporary directory inside it), the PATH, the variables the Go
// runtime's tooling passes on, and the header's variables last. Nothing
// else of the caller's environment reaches the agent: an API key would
// change the models it lists.
func agentEnv(work string, extra map[string]string) []string {
	home := filepath.Join(work, "home")
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"PI_CODING_AGENT_DIR=" + filepath.Join(home, ".xcsh", "agent"),
		"TMPDIR=" + filepath.Join(work, ".tmp"),
		"WORK=" + work,
		"PWD=" + work,
		"XCSH_DETERMINISTIC=1",
	}
	for _, k := range []string{"GORACE", "GOCOVERDIR", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// isJSONLine reports whether a line is one JSON value (a frame).
func isJSONLine(b []byte) bool {
	return len(b) > 0 && !bytes.ContainsAny(b, "\n") && jsonValid(b)
}
