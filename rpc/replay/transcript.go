package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Version is the transcript format's version, the header's "xcshReplay".
// It changes only when an older reader would misread a newer file.
const Version = 1

// Kind says what an Entry records.
type Kind int

const (
	// Out is a frame the agent wrote.
	Out Kind = iota + 1
	// In is a line the host wrote to the agent.
	In
	// Close is the host closing the agent's stdin.
	Close
	// Exit is the agent's exit, with its code.
	Exit
)

func (k Kind) String() string {
	switch k {
	case Out:
		return "out"
	case In:
		return "in"
	case Close:
		return "close"
	case Exit:
		return "exit"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Header is a transcript's first line: how to start the agent.
type Header struct {
	// Version is the format's version (Version).
	Version int `json:"xcshReplay"`
	// Args are the agent's arguments, after the program name.
	Args []string `json:"args"`
	// Env is added to the agent's environment.
	Env map[string]string `json:"env,omitempty"`
	// Files are written into the agent's work directory before it
	// starts: slash-separated relative path to contents.
	Files map[string]string `json:"files,omitempty"`
}

// Entry is one event of a transcript.
type Entry struct {
	Kind Kind
	// Line is the entry's line in the transcript file, from 1 (the header
	// is line 1); 0 for an entry not read from a file.
	Line int
	// Frame is the line, without its "\n", of an Out or In entry: JSON,
	// unless Raw.
	Frame []byte
	// Raw marks a line that is not JSON ("inRaw", "outRaw").
	Raw bool
	// Code is an Exit entry's exit code.
	Code int
}

// Transcript is a recorded conversation between a host and the agent.
type Transcript struct {
	Header  Header
	Entries []Entry
}

// ErrFormat is wrapped by every error Read returns for a malformed
// transcript.
var ErrFormat = errors.New("not a replay transcript")

// entryLine is the JSON shape of one line after the header. Exactly one
// field is set.
type entryLine struct {
	Out    json.RawMessage `json:"out,omitempty"`
	OutRaw *string         `json:"outRaw,omitempty"`
	In     json.RawMessage `json:"in,omitempty"`
	InRaw  *string         `json:"inRaw,omitempty"`
	Close  *bool           `json:"close,omitempty"`
	Exit   *int            `json:"exit,omitempty"`
}

// Read parses a transcript and checks its structure: the header first;
// nothing after the exit; no input after the close; files with plain
// relative paths.
func Read(r io.Reader) (*Transcript, error) {
	br := bufio.NewReader(r)
	var t Transcript
	n := 0
	closed, exited := false, false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			line = bytes.TrimSuffix(line, []byte("\n"))
			if err := t.parseLine(n, line, &closed, &exited); err != nil {
				return nil, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the file is empty (want a header line {\"xcshReplay\":%d,...})", ErrFormat, Version)
	}
	return &t, nil
}

func (t *Transcript) parseLine(n int, line []byte, closed, exited *bool) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrFormat, n, fmt.Sprintf(format, args...))
	}
	if n == 1 {
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t.Header); err != nil {
			return fail("the header: %v (want {\"xcshReplay\":%d,\"args\":[...]})", err, Version)
		}
		if t.Header.Version != Version {
			return fail("format version %d; this xcsh reads version %d", t.Header.Version, Version)
		}
		for name := range t.Header.Files {
			if !localPath(name) {
				return fail("file %q: want a relative path inside the work directory", name)
			}
		}
		return nil
	}
	if *exited {
		return fail("nothing may follow the exit line")
	}
	var l entryLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return fail("%v (want one of out, outRaw, in, inRaw, close, exit)", err)
	}
	e := Entry{Line: n}
	set := 0
	if l.Out != nil {
		e.Kind, e.Frame, set = Out, l.Out, set+1
	}
	if l.OutRaw != nil {
		e.Kind, e.Frame, e.Raw, set = Out, []byte(*l.OutRaw), true, set+1
	}
	if l.In != nil {
		e.Kind, e.Frame, set = In, l.In, set+1
	}
	if l.InRaw != nil {
		e.Kind, e.Frame, e.Raw, set = In, []byte(*l.InRaw), true, set+1
	}
	if l.Close != nil {
		if !*l.Close {
			return fail(`"close" must be true`)
		}
		e.Kind, set = Close, set+1
	}
	if l.Exit != nil {
		e.Kind, e.Code, set = Exit, *l.Exit, set+1
	}
	if set != 1 {
		return fail("want exactly one of out, outRaw, in, inRaw, close, exit")
	}
	if e.Raw && bytes.ContainsAny(e.Frame, "\n") {
		return fail("an %sRaw line may not contain a newline", e.Kind)
	}
	switch e.Kind {
	case In:
		if *closed {
			return fail("an input after the close")
		}
	case Close:
		if *closed {
			return fail("a second close")
		}
		*closed = true
	case Exit:
		*exited = true
	}
	t.Entries = append(t.Entries, e)
	return nil
}

// localPath reports whether name is a slash-separated relative path that
// stays inside the directory it is joined to.
func localPath(name string) bool {
	if name == "" || strings.Contains(name, `\`) || path.IsAbs(name) {
		return false
	}
	c := path.Clean(name)
	return c == name && c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

// Encode writes the transcript in its file format: the header, then one
// line per entry. Frames are written as they are.
func (t *Transcript) Encode(w io.Writer) error {
	bw := bufio.NewWriter(w)
	h := t.Header
	h.Version = Version
	if h.Args == nil {
		h.Args = []string{}
	}
	b, err := marshal(h)
	if err != nil {
		return err
	}
	bw.Write(b)
	bw.WriteByte('\n')
	for _, e := range t.Entries {
		b, err := e.encode()
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// encode renders one entry as its transcript line, without the "\n".
func (e Entry) encode() ([]byte, error) {
	switch e.Kind {
	case Out, In:
		if e.Raw {
			s, err := marshal(string(e.Frame))
			if err != nil {
				return nil, err
			}
			return fmt.Appendf(nil, `{"%sRaw":%s}`, e.Kind, s), nil
		}
		if !jsonValid(e.Frame) || bytes.ContainsAny(e.Frame, "\n") {
			return nil, fmt.Errorf("replay: an %s frame is not one line of JSON: %.80q", e.Kind, e.Frame)
		}
		key := `{"out":`
		if e.Kind == In {
			key = `{"in":`
		}
		return append(append([]byte(key), e.Frame...), '}'), nil
	case Close:
		return []byte(`{"close":true}`), nil
	case Exit:
		return fmt.Appendf(nil, `{"exit":%d}`, e.Code), nil
	}
	return nil, fmt.Errorf("replay: unknown entry kind %v", e.Kind)
}

// marshal encodes v without HTML escaping, as the agent writes frames.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// outputs returns the transcript's Out frames, in order.
func (t *Transcript) outputs() [][]byte {
	var out [][]byte
	for _, e := range t.Entries {
		if e.Kind == Out {
			out = append(out, e.Frame)
		}
	}
	return out
}

// Outputs returns the frames the agent wrote, one a line, each followed by
// "\n": the golden transcript of the same run.
func (t *Transcript) Outputs() []byte {
	var b bytes.Buffer
	for _, f := range t.outputs() {
		b.Write(f)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// jsonValid reports whether b is one JSON value.
func jsonValid(b []byte) bool { return json.Valid(b) }
