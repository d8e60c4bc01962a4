package rpctest

// jsonl-echo: a test-only stand-in for an RPC server, so the harness is
// tested without a real binary. It never sleeps: everything it does is
// driven by its input.

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

const jsonlEchoUsage = `usage: jsonl-echo [flags]

Writes {"type":"ready","version":"0.0.0"}, then one
{"type":"echo","line":...,"len":N} per stdin line ("partial":true for a
last line without "\n"), and {"type":"bye","lines":N} at EOF. A line
{"type":"emit","count":N} is echoed, then followed by N tick frames;
{"type":"count","id":X} by {"type":"count","id":X,"lines":N}, N the lines
read so far (an answer that changes, for rpc poll).
SIGINT and SIGTERM write {"type":"signal",...} and exit 130 and 143.
`

// EchoMain is the main function of jsonl-echo, a stand-in for an RPC server
// that the harness's own scripts drive. Install it from TestMain with
// testscript.Main(m, map[string]func(){"jsonl-echo": rpctest.EchoMain}).
// docs/testing.md describes its frames and flags.
func EchoMain() {
	os.Exit(runJSONLEcho(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type echoEnvList []string

func (l *echoEnvList) String() string     { return strings.Join(*l, ",") }
func (l *echoEnvList) Set(v string) error { *l = append(*l, v); return nil }

// echoOut serialises frames from the reading loop and the signal handler.
type echoOut struct {
	mu  sync.Mutex // guards enc's writer
	enc *json.Encoder
	w   io.Writer
}

func (o *echoOut) frame(v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.enc.Encode(v)
}

func (o *echoOut) raw(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	io.WriteString(o.w, s)
}

// Frames are structs with type first so transcripts have a stable key order.
type (
	echoReady struct {
		Type    string `json:"type"`
		Version string `json:"version"`
	}
	echoTick struct {
		Type string `json:"type"`
		N    int    `json:"n"`
	}
	echoLine struct {
		Type    string `json:"type"`
		Line    string `json:"line"`
		Len     int    `json:"len"` // bytes, since invalid UTF-8 is replaced in line
		Partial bool   `json:"partial,omitempty"`
	}
	echoEnv struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	echoCwd struct {
		Type string `json:"type"`
		Dir  string `json:"dir"`
	}
	echoSignal struct {
		Type   string `json:"type"`
		Signal string `json:"signal"`
	}
	echoCount struct {
		Type  string          `json:"type"`
		ID    json.RawMessage `json:"id"`
		Lines int             `json:"lines"`
	}
	echoBye struct {
		Type  string `json:"type"`
		Lines int    `json:"lines"`
	}
)

func runJSONLEcho(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("jsonl-echo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, jsonlEchoUsage); fs.PrintDefaults() }
	nFrames := fs.Int("frames", 0, "write `N` tick frames right after ready")
	silent := fs.Bool("silent", false, "do not echo; just read until stdin closes")
	hang := fs.Bool("hang", false, "at stdin EOF, do not exit: wait for a signal")
	errText := fs.String("stderr", "", "write `text` and a newline to stderr at start")
	rawText := fs.String("raw", "", "write `text` and a newline to stdout after ready (a non-JSON line)")
	exitCode := fs.Int("exit", 0, "exit `code` at stdin EOF")
	cwd := fs.Bool("cwd", false, `write {"type":"cwd","dir":...} after ready`)
	var envNames echoEnvList
	fs.Var(&envNames, "env", `write {"type":"env","name":NAME,"value":...} after ready (repeatable)`)
	if err := fs.Parse(args); err != nil {
		return 2
	}

	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	out := &echoOut{enc: enc, w: stdout}

	// Before ready, so a script that waited for ready can signal safely.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		out.frame(echoSignal{"signal", sig.String()})
		os.Exit(code)
	}()

	if *errText != "" {
		fmt.Fprintln(stderr, *errText)
	}
	out.frame(echoReady{"ready", "0.0.0"})
	if *cwd {
		dir, _ := os.Getwd()
		out.frame(echoCwd{"cwd", dir})
	}
	for _, name := range envNames {
		out.frame(echoEnv{"env", name, os.Getenv(name)})
	}
	if *rawText != "" {
		out.raw(*rawText + "\n")
	}
	for i := 1; i <= *nFrames; i++ {
		out.frame(echoTick{"tick", i})
	}

	r := bufio.NewReader(stdin)
	lines := 0
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			lines++
			partial := !strings.HasSuffix(line, "\n")
			line = strings.TrimSuffix(line, "\n")
			if !*silent {
				out.frame(echoLine{Type: "echo", Line: line, Len: len(line), Partial: partial})
				var emit struct {
					Type  string          `json:"type"`
					Count int             `json:"count"`
					ID    json.RawMessage `json:"id"`
				}
				if json.Unmarshal([]byte(line), &emit) == nil && emit.Type == "emit" {
					for i := 1; i <= emit.Count; i++ {
						out.frame(echoTick{"tick", i})
					}
				}
				if emit.Type == "count" && emit.ID != nil {
					out.frame(echoCount{"count", emit.ID, lines})
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(stderr, "jsonl-echo:", err)
			return 1
		}
	}
	out.frame(echoBye{"bye", lines})
	if *hang {
		select {} // the signal goroutine exits the process
	}
	return *exitCode
}
