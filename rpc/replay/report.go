package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Mode names the side a replay plays.
const (
	ModeAgent = "agent" // the agent under test, driven with the inputs
	ModeHost  = "host"  // a host under test, against the scripted agent
)

// Report is the result of one replay; `xcsh replay --json` writes one per
// transcript, a line each.
type Report struct {
	// Transcript is the file replayed, as named on the command line.
	Transcript string `json:"transcript"`
	Mode       string `json:"mode"`
	OK         bool   `json:"ok"`
	// Inputs counts the lines sent to the agent (agent mode) or received
	// from the host and matched (host mode).
	Inputs int `json:"inputs"`
	// Outputs counts the frames received from the agent (agent mode) or
	// played to the host (host mode).
	Outputs int `json:"outputs"`
	// Divergence is the first difference, when not OK.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is where a replay first left the transcript.
type Divergence struct {
	// Line is the transcript line (from 1) that was not met.
	Line int `json:"line"`
	// Frame is the agent's frame that differs, from 1 (agent mode).
	Frame int `json:"frame,omitempty"`
	// HostLine is the host's line that differs, from 1 (host mode).
	HostLine int `json:"hostLine,omitempty"`
	// Reason says what happened, in a sentence.
	Reason string `json:"reason"`
	// Pointer is the JSON pointer of the first differing value, when a
	// frame or a line differs as JSON.
	Pointer string `json:"pointer,omitempty"`
	// Want is the transcript's line; Got what the agent or host wrote.
	Want json.RawMessage `json:"want,omitempty"`
	Got  json.RawMessage `json:"got,omitempty"`
	// Diff is the unified diff of the transcript and this run's (agent
	// mode): "-" lines are the file's, "+" this run's.
	Diff string `json:"diff,omitempty"`
	// Stderr is the end of what the agent wrote to stderr (agent mode).
	Stderr string `json:"stderr,omitempty"`
}

// rawOrString makes a line a JSON value for Want or Got: itself when it is
// JSON, else a JSON string.
func rawOrString(line []byte) json.RawMessage {
	if line == nil {
		return nil
	}
	if json.Valid(line) {
		return json.RawMessage(line)
	}
	b, _ := marshal(string(line))
	return b
}

// WriteText writes the report for a reader: one "ok" line, or a FAIL line
// with the divergence, the lines that differ and the diff.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.OK {
		fmt.Fprintf(&b, "ok   %s (%s mode: %d inputs, %d outputs)\n", r.Transcript, r.Mode, r.Inputs, r.Outputs)
		_, err := io.WriteString(w, b.String())
		return err
	}
	d := r.Divergence
	if d == nil {
		d = &Divergence{Reason: "failed"}
	}
	fmt.Fprintf(&b, "FAIL %s (%s mode): transcript line %d: %s\n", r.Transcript, r.Mode, d.Line, d.Reason)
	if d.Pointer != "" || d.Want != nil || d.Got != nil {
		where := ""
		switch {
		case d.Frame > 0:
			where = fmt.Sprintf(" (the agent's frame %d)", d.Frame)
		case d.HostLine > 0:
			where = fmt.Sprintf(" (the host's line %d)", d.HostLine)
		}
		if d.Pointer != "" {
			fmt.Fprintf(&b, "  at %s%s\n", d.Pointer, where)
		} else if where != "" {
			fmt.Fprintf(&b, " %s\n", where)
		}
	}
	if d.Want != nil {
		fmt.Fprintf(&b, "  want: %s\n", clip(string(d.Want), maxDiffLine))
	}
	if d.Got != nil {
		fmt.Fprintf(&b, "  got:  %s\n", clip(string(d.Got), maxDiffLine))
	}
	if d.Diff != "" {
		b.WriteString(d.Diff)
	}
	if d.Stderr != "" {
		fmt.Fprintf(&b, "the agent's stderr:\n%s", d.Stderr)
		if !strings.HasSuffix(d.Stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
