package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The test binary is also the processes the replays run: with
// REPLAY_TEST_AGENT set it is a tiny agent, with REPLAY_TEST_HOST a host
// that follows a script. Both are deterministic and read no clock.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("REPLAY_TEST_AGENT") != "":
		os.Exit(testAgent())
	case os.Getenv("REPLAY_TEST_HOST") != "":
		os.Exit(testHost(os.Getenv("REPLAY_TEST_HOST")))
	}
	os.Exit(m.Run())
}

// testAgent writes a ready frame, answers each command by id (a "cwd"
// command with the working directory and $HOME, a "cat" command with a
// file's text, an "emit" command with N ticks before its answer), a line
// that is not JSON with a parse error, and writes "bye" at the end of its
// input before exiting with $REPLAY_TEST_EXIT.
func testAgent() int {
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	write(map[string]any{"type": "ready"})
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		if line = strings.TrimSuffix(line, "\n"); line != "" {
			var cmd struct {
				ID   json.RawMessage `json:"id"`
				Type string          `json:"type"`
				Path string          `json:"path"`
				N    int             `json:"n"`
			}
			if json.Unmarshal([]byte(line), &cmd) != nil {
				write(map[string]any{"type": "response", "command": "parse", "success": false})
			} else {
				resp := map[string]any{"id": cmd.ID, "type": "response", "command": cmd.Type, "success": true}
				switch cmd.Type {
				case "cwd":
					wd, _ := os.Getwd()
					resp["data"] = map[string]string{"cwd": wd, "home": os.Getenv("HOME"), "det": os.Getenv("XCSH_DETERMINISTIC"), "w": os.Getenv("W"), "arg": strings.Join(os.Args[1:], " ")}
				case "cat":
					b, err := os.ReadFile(cmd.Path)
					resp["data"] = string(b)
					if err != nil {
						resp["success"], resp["error"] = false, err.Error()
					}
				case "emit":
					for i := range cmd.N {
						write(map[string]any{"type": "tick", "n": i + 1})
					}
				}
				if cmd.ID == nil {
					delete(resp, "id")
				}
				write(resp)
			}
		}
		if err != nil {
			break
		}
	}
	write(map[string]any{"type": "bye"})
	code, _ := strconv.Atoi(os.Getenv("REPLAY_TEST_EXIT"))
	return code
}

// hostStep is one step of a test host's script ({{cwd}} is its working
// directory): send a line, await a
// line that contains a text (exit 3 if the input ends first), close
// stdout, read to the end of the input, or exit with a code.
type hostStep struct {
	Send  string `json:"send,omitempty"`
	Await string `json:"await,omitempty"`
	Close bool   `json:"close,omitempty"`
	Drain bool   `json:"drain,omitempty"`
	Exit  *int   `json:"exit,omitempty"`
}

func testHost(script string) int {
	var steps []hostStep
	if err := json.Unmarshal([]byte(script), &steps); err != nil {
		fmt.Fprintln(os.Stderr, "test host:", err)
		return 2
	}
	in := bufio.NewReader(os.Stdin)
	for _, s := range steps {
		switch {
		case s.Send != "":
			wd, _ := os.Getwd()
			fmt.Fprintln(os.Stdout, strings.ReplaceAll(s.Send, "{{cwd}}", wd))
		case s.Await != "":
			wd, _ := os.Getwd()
			want := strings.ReplaceAll(s.Await, "{{cwd}}", wd)
			for {
				line, err := in.ReadString('\n')
				if strings.Contains(line, want) {
					break
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "test host: the input ended before %q\n", s.Await)
					return 3
				}
			}
		case s.Close:
			os.Stdout.Close()
		case s.Drain:
			for {
				if _, err := in.ReadString('\n'); err != nil {
					break
				}
			}
		case s.Exit != nil:
			return *s.Exit
		}
	}
	return 0
}
