package replay

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// agentTranscript is a conversation with testAgent: ready, a command
// answered by id, a file from the header read back, the work directory,
// home, an argument and a variable as $WORK, a line that is not JSON, and
// the end.
const agentTranscript = `{"xcshReplay":1,"args":["--dir=$WORK/sub"],"env":{"REPLAY_TEST_AGENT":"1","W":"$WORK/w"},"files":{"sub/notes.txt":"alpha\n"}}
{"out":{"type":"ready"}}
{"in":{"id":"a","type":"ping"}}
{"out":{"command":"ping","id":"a","success":true,"type":"response"}}
{"in":{"id":7,"type":"cat","path":"sub/notes.txt"}}
{"out":{"command":"cat","data":"alpha\n","id":7,"success":true,"type":"response"}}
{"in":{"id":"w","type":"cwd"}}
{"out":{"command":"cwd","data":{"arg":"--dir=$WORK/sub","cwd":"$WORK","det":"1","home":"$WORK/home","w":"$WORK/w"},"id":"w","success":true,"type":"response"}}
{"inRaw":"not json"}
{"out":{"command":"parse","success":false,"type":"response"}}
{"close":true}
{"out":{"type":"bye"}}
{"exit":0}
`

func readString(t *testing.T, s string) *Transcript {
	t.Helper()
	tr, err := Read(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func runAgent(t *testing.T, s string, timeout time.Duration) *Report {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Agent(context.Background(), readString(t, s), AgentOptions{Path: self, Timeout: timeout, Name: "t.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAgentReplays(t *testing.T) {
	t.Parallel()
	r := runAgent(t, agentTranscript, 0)
	if !r.OK || r.Inputs != 4 || r.Outputs != 6 {
		t.Fatalf("report %+v, divergence %+v", r, r.Divergence)
	}
}

func TestAgentInputWaitsForItsFrame(t *testing.T) {
	t.Parallel()
	// "emit" answers after 200 ticks; the next command is sent only once
	// the last tick arrived, so its answer comes after them all.
	var b strings.Builder
	b.WriteString(`{"xcshReplay":1,"args":[],"env":{"REPLAY_TEST_AGENT":"1"}}` + "\n")
	b.WriteString(`{"out":{"type":"ready"}}` + "\n")
	b.WriteString(`{"in":{"id":"e","type":"emit","n":200}}` + "\n")
	for i := 1; i <= 200; i++ {
		b.WriteString(`{"out":{"n":` + itoa(i) + `,"type":"tick"}}` + "\n")
	}
	b.WriteString(`{"in":{"id":"x","type":"ping"}}` + "\n")
	b.WriteString(`{"out":{"command":"emit","id":"e","success":true,"type":"response"}}` + "\n")
	b.WriteString(`{"out":{"command":"ping","id":"x","success":true,"type":"response"}}` + "\n")
	b.WriteString(`{"close":true}` + "\n" + `{"out":{"type":"bye"}}` + "\n" + `{"exit":0}` + "\n")
	if r := runAgent(t, b.String(), 0); !r.OK {
		t.Fatalf("divergence %+v", r.Divergence)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

func TestAgentDivergences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, from, to string
		line, frame    int
		reason, ptr    string
		diff           []string // lines the diff must hold
	}{
		{
			name: "a frame differs", from: `"data":"alpha\n"`, to: `"data":"beta\n"`,
			line: 6, frame: 3, reason: `the agent's frame differs: want "beta\n", got "alpha\n"`, ptr: "/data",
			diff: []string{"@@ -3,7 +3,7 @@", `-{"out":{"command":"cat","data":"beta\n"`, `+{"out":{"command":"cat","data":"alpha\n"`},
		},
		{
			name: "a frame the transcript lacks", from: `{"out":{"type":"bye"}}` + "\n", to: "",
			line: 12, frame: 6, reason: "the agent wrote a frame the transcript does not have",
			diff: []string{`+{"out":{"type":"bye"}}`},
		},
		{
			name: "a frame the agent does not write", from: `{"out":{"type":"bye"}}` + "\n", to: `{"out":{"type":"bye"}}` + "\n" + `{"out":{"type":"later"}}` + "\n",
			line: 13, frame: 7, reason: "the agent ended its output (exited) before this frame",
			diff: []string{`-{"out":{"type":"later"}}`},
		},
		{
			name: "another exit code", from: `{"exit":0}`, to: `{"exit":4}`,
			line: 13, reason: "the agent exited with code 0, want 4",
			diff: []string{`-{"exit":4}`, `+{"exit":0}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := strings.Replace(agentTranscript, tt.from, tt.to, 1)
			if s == agentTranscript {
				t.Fatal("the case changes nothing")
			}
			r := runAgent(t, s, 0)
			d := r.Divergence
			if r.OK || d == nil {
				t.Fatalf("report %+v: want a divergence", r)
			}
			if d.Line != tt.line || d.Frame != tt.frame || d.Reason != tt.reason || d.Pointer != tt.ptr {
				t.Errorf("divergence line %d frame %d %q at %q\nwant line %d frame %d %q at %q", d.Line, d.Frame, d.Reason, d.Pointer, tt.line, tt.frame, tt.reason, tt.ptr)
			}
			if !strings.HasPrefix(d.Diff, "--- t.jsonl\n+++ this run\n") {
				t.Errorf("diff header: %q", d.Diff)
			}
			for _, l := range tt.diff {
				if !strings.Contains(d.Diff, l) {
					t.Errorf("diff lacks %q:\n%s", l, d.Diff)
				}
			}
		})
	}
}

func TestAgentSilentIsBounded(t *testing.T) {
	t.Parallel()
	// A frame that never comes: the wait is meant to time out. The bound
	// is each wait's, so on a machine slow enough to start the agent in
	// more than 300ms the ready frame is the one waited for in vain.
	s := strings.Replace(agentTranscript, `{"in":{"id":"a","type":"ping"}}`+"\n", "", 1)
	r := runAgent(t, s, 300*time.Millisecond)
	if d := r.Divergence; r.OK || d.Line != 3 && d.Line != 2 || d.Reason != "no frame from the agent within 300ms" {
		t.Fatalf("report %+v %+v", r, r.Divergence)
	}
}

func TestAgentNotStarted(t *testing.T) {
	t.Parallel()
	_, err := Agent(context.Background(), readString(t, agentTranscript), AgentOptions{Path: "/nonexistent/xcsh"})
	if err == nil || !strings.Contains(err.Error(), "starting the agent") {
		t.Errorf("err = %v", err)
	}
}

func TestAgentEnv(t *testing.T) {
	t.Parallel()
	env := agentEnv("/w", map[string]string{"B": "2", "A": "1", "HOME": "/override"})
	joined := strings.Join(env, "\n")
	for _, want := range []string{"HOME=/w/home", "XCSH_DETERMINISTIC=1", "WORK=/w", "TMPDIR=/w/.tmp", "PI_CODING_AGENT_DIR=/w/home/.xcsh/agent"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	// The header's variables come last, sorted, so they win.
	if n := len(env); env[n-3] != "A=1" || env[n-2] != "B=2" || env[n-1] != "HOME=/override" {
		t.Errorf("env tail = %q", env[n-3:])
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "REPLAY_") {
			t.Errorf("the caller's %s leaked into the agent's environment", kv)
		}
	}
}
