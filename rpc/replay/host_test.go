package replay

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// hostTranscript was sent by a host that pipelines: two commands at once,
// then a dialog answered, a command naming a path in the work directory,
// and the end. The agent's answers carry the recorded ids.
const hostTranscript = `{"xcshReplay":1,"args":["--mode","rpc"]}
{"out":{"type":"ready","version":"0.1.0"}}
{"in":{"id":"m1","type":"set_follow_up_mode","mode":"all"}}
{"in":{"id":"p1","type":"prompt","message":"which database?"}}
{"out":{"id":"m1","type":"response","command":"set_follow_up_mode","success":true}}
{"out":{"type":"queue_update","steering":[],"followUp":[]}}
{"out":{"id":"p1","type":"response","command":"prompt","success":true}}
{"out":{"type":"agent_start"}}
{"out":{"type":"extension_ui_request","id":"ui_1","method":"select","title":"Which database?","options":["SQLite","Postgres"]}}
{"in":{"type":"extension_ui_response","id":"ui_1","value":"Postgres"}}
{"out":{"type":"agent_end","messages":[]}}
{"in":{"id":"r1","type":"read_file","path":"$WORK/notes.txt"}}
{"out":{"id":"r1","type":"response","command":"read_file","success":true,"data":{"path":"$WORK/notes.txt"}}}
{"close":true}
{"exit":0}
`

type step = hostStep

func send(s string) step  { return step{Send: s} }
func await(s string) step { return step{Await: s} }
func exitWith(n int) step { return step{Exit: &n} }

var (
	closeOut = step{Close: true}
	drain    = step{Drain: true}
)

// syncHost waits for each answer before its next command and names its
// commands c1, c2, …: it only gets its answers if the scripted agent
// plays them with its ids, before the commands the recording sent at once.
var syncHost = []step{
	await(`"type":"ready"`),
	send(`{"type":"set_follow_up_mode","mode":"all","id":"c1"}`),
	await(`"id":"c1"`),
	send(`{"message":"which database?","type":"prompt","id":"c2"}`),
	await(`"id":"c2"`),
	await(`"extension_ui_request"`),
	send(`{"type": "extension_ui_response", "id": "ui_1", "value": "Postgres", "timestamp": 1767225600123}`),
	await(`"agent_end"`),
	send(`{"type":"read_file","path":"{{cwd}}/notes.txt","id":3}`),
	await(`{"id":3,"type":"response","command":"read_file","success":true,"data":{"path":"{{cwd}}/notes.txt"}}`),
	closeOut, drain,
}

func runHost(t *testing.T, transcript string, steps []step, timeout time.Duration) *Report {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Host(context.Background(), readString(t, transcript), HostOptions{
		Command: []string{self},
		Dir:     t.TempDir(),
		Env:     []string{"REPLAY_TEST_HOST=" + string(script)},
		Timeout: timeout,
		Name:    "t.jsonl",
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHostPasses(t *testing.T) {
	t.Parallel()
	pipelined := []step{
		send(`{"id":"m1","type":"set_follow_up_mode","mode":"all"}`),
		send(`{"id":"p1","type":"prompt","message":"which database?"}`),
		await(`"extension_ui_request"`),
		send(`{"type":"extension_ui_response","id":"ui_1","value":"Postgres"}`),
		await(`"agent_end"`),
		send(`{"id":"r1","type":"read_file","path":"{{cwd}}/notes.txt"}`),
		await(`"id":"r1"`),
		closeOut, drain,
	}
	// A host may leave once its part is done, without reading the frames
	// that follow: the scripted agent's writes then fail, which is no
	// difference.
	leaving := append(append([]step(nil), pipelined[:6]...), exitWith(0))
	for name, steps := range map[string][]step{"synchronous, its own ids": syncHost, "pipelined": pipelined, "leaving": leaving} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runHost(t, hostTranscript, steps, 0)
			if !r.OK || r.Inputs != 4 || r.Outputs != 8 && name != "leaving" {
				t.Fatalf("report %+v, divergence %+v", r, r.Divergence)
			}
		})
	}
}

// with returns syncHost with step i replaced by s (or removed, for a
// zero step) and the rest cut after cut steps when cut > 0.
func with(i int, s step, cut int) []step {
	out := append([]step(nil), syncHost...)
	if s == (step{}) {
		out = append(out[:i], out[i+1:]...)
	} else {
		out[i] = s
	}
	if cut > 0 {
		out = out[:cut]
	}
	return out
}

func TestHostDivergences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		steps    []step
		line     int
		hostLine int
		reason   string // the start of the reason
		ptr      string
	}{
		{"a wrong command", with(3, send(`{"message":"which db?","type":"prompt","id":"c2"}`), 0),
			4, 2, `the host's line differs: want "which database?", got "which db?"`, "/message"},
		{"an agent's id not echoed", with(6, send(`{"type":"extension_ui_response","id":"ui_2","value":"Postgres"}`), 0),
			10, 3, `the host's line differs: want "ui_1", got "ui_2"`, "/id"},
		{"a command without its id", with(3, send(`{"message":"which database?","type":"prompt"}`), 0),
			4, 2, "the host's line differs: missing (want an id", "/id"},
		{"an extra key", with(1, send(`{"type":"set_follow_up_mode","mode":"all","id":"c1","extra":1}`), 0),
			3, 1, "the host's line differs: not in the transcript (got 1)", "/extra"},
		{"not JSON", with(1, send(`set mode all`), 0),
			3, 1, "the host's line differs: not JSON", ""},
		{"a line where the host should end", with(10, send(`{"id":"z","type":"get_state"}`), 0),
			14, 5, "the host sent a line where the transcript expects it to close the agent's stdin", ""},
		{"the host exits early", []step{await(`"type":"ready"`), exitWith(1)},
			3, 1, "the host ended its output (closed the agent's stdin, or exited) where the transcript expects this input (the host exited with code 1)", ""},
		{"a bad exit code", append(append([]step(nil), syncHost...), exitWith(2)),
			15, 0, "the host exited with code 2, want exit code 0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runHost(t, hostTranscript, tt.steps, 0)
			d := r.Divergence
			if r.OK || d == nil {
				t.Fatalf("report %+v: want a divergence", r)
			}
			if d.Line != tt.line || d.HostLine != tt.hostLine || !strings.HasPrefix(d.Reason, tt.reason) || d.Pointer != tt.ptr {
				t.Errorf("divergence line %d host line %d %q at %q\nwant line %d host line %d %q… at %q", d.Line, d.HostLine, d.Reason, d.Pointer, tt.line, tt.hostLine, tt.reason, tt.ptr)
			}
		})
	}
}

func TestHostUnexpectedID(t *testing.T) {
	t.Parallel()
	// A transcript input without an id: the agent answers without one, so
	// a host that sends an id would wait for an answer that never comes.
	tr := strings.Replace(hostTranscript, `{"in":{"type":"extension_ui_response","id":"ui_1","value":"Postgres"}}`, `{"in":{"type":"extension_ui_response","value":"Postgres"}}`, 1)
	r := runHost(t, tr, syncHost, 0)
	if r.OK || r.Divergence.Pointer != "/id" || !strings.Contains(r.Divergence.Reason, "not in the transcript") {
		t.Fatalf("report %+v %+v", r, r.Divergence)
	}
}

func TestHostSilentIsBounded(t *testing.T) {
	t.Parallel()
	// The host waits for a frame the transcript sends only after its next
	// command: the wait is meant to time out, and says where it stood.
	r := runHost(t, hostTranscript, []step{await(`"agent_start"`)}, 300*time.Millisecond)
	d := r.Divergence
	if r.OK || d.Line != 3 || !strings.HasPrefix(d.Reason, "the host sent nothing within 300ms; the transcript expects this input after the frame of line 2") {
		t.Fatalf("report %+v %+v", r, d)
	}
}

func TestHostNotStarted(t *testing.T) {
	t.Parallel()
	_, err := Host(context.Background(), readString(t, hostTranscript), HostOptions{Command: []string{"/nonexistent/host"}})
	if err == nil || !strings.Contains(err.Error(), "starting the host") {
		t.Errorf("err = %v", err)
	}
	if _, err := Host(context.Background(), readString(t, hostTranscript), HostOptions{}); err == nil {
		t.Error("Host ran without a command")
	}
}

func TestReplaceTopID(t *testing.T) {
	t.Parallel()
	got := string(replaceTopID([]byte(`{"data":{"id":"p1"},"id":"p1","x":1}`), []byte(`42`)))
	if got != `{"data":{"id":"p1"},"id":42,"x":1}` {
		t.Errorf("replaceTopID = %s", got)
	}
}
