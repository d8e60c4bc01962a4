// Package acptest is the test client of the ACP scenarios: a program on
// the Go SDK's ClientSideConnection that starts an agent, drives it from
// commands on its own stdin and prints both directions of the wire on its
// stdout, one JSON line per message:
//
//	{"c2a":<message>}   what the client sent the agent
//	{"a2c":<message>}   what the agent sent the client
//	{"c2a_raw":"text"}  a line sent as is (not JSON, say)
//
// The scenarios start it with rpctest's `rpc start acp-client [flags] --
// xcsh --mode acp ...`, wait on the transcript with `rpc wait`, and keep
// it as the golden: a transcript in both directions, in the order the
// client saw it. A command is sent when the script has waited for what
// it answers, so the order is deterministic.
//
// Flags say what the client offers and how it answers the agent:
//
//	-fs             offer fs/read_text_file and fs/write_text_file (served from the disk)
//	-terminal       offer terminal/* (commands run by bash in the test)
//	-elicitation V  offer form elicitation and answer it with V ("" declines)
//	-permission P   answer permission requests: an option id (allow,
//	                allow_always, reject, choice_N), "cancelled", or
//	                "hold" (wait for a {"permission":...} command)
//
// Commands, one JSON object per line:
//
//	{"call":"session/new","params":{...}}   a request (async; its answer is on the wire)
//	{"notify":"session/cancel","params":{...}}
//	{"raw":"text"}                           write the line as is
//	{"permission":"allow"}                   answer the held permission request
//
// ${NAME} in a command is replaced by the environment variable NAME
// (JSON-escaped), so a script can name ${WORK}.
package acptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// transcript prints the wire, one line per message, under one lock.
type transcript struct {
	mu  sync.Mutex
	out io.Writer
}

func (t *transcript) line(dir string, msg []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var v any
	if json.Unmarshal(msg, &v) != nil {
		b, _ := json.Marshal(string(msg))
		fmt.Fprintf(t.out, "{%q:%s}\n", dir+"_raw", b)
		return
	}
	fmt.Fprintf(t.out, "{%q:%s}\n", dir, msg)
}

// teeWriter records each line written to the agent.
type teeWriter struct {
	w   io.Writer
	t   *transcript
	buf []byte
}

func (tw *teeWriter) Write(p []byte) (int, error) {
	tw.buf = append(tw.buf, p...)
	for {
		i := indexNL(tw.buf)
		if i < 0 {
			break
		}
		tw.t.line("c2a", tw.buf[:i])
		tw.buf = tw.buf[i+1:]
	}
	return tw.w.Write(p)
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// teeReader records each line the agent writes, before the SDK sees it.
func teeReader(r io.Reader, t *transcript) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				t.line("a2c", trimNL(line))
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// client serves the agent's requests.
type client struct {
	fs, terminal bool
	elicit       *string
	permission   string
	held         chan string // the script's answers to held permissions

	mu        sync.Mutex
	terminals map[string]*term
	nextTerm  int
}

type term struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan struct{}
	status *int
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

var _ sdk.Client = (*client)(nil)

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	choice := c.permission
	if choice == "hold" {
		// Wait for the script, even after a $/cancel_request: the answer
		// then comes where the script puts it.
		choice = <-c.held
	}
	if choice == "cancelled" {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(choice)}}}, nil
}

func (c *client) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }

func (c *client) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	if !c.fs {
		return sdk.ReadTextFileResponse{}, errors.New("fs is not offered")
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, fmt.Errorf("cannot read %s", filepath.Base(p.Path))
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *client) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	if !c.fs {
		return sdk.WriteTextFileResponse{}, errors.New("fs is not offered")
	}
	if err := os.MkdirAll(filepath.Dir(p.Path), 0o755); err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	return sdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

func (c *client) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	if !c.terminal {
		return sdk.CreateTerminalResponse{}, errors.New("terminals are not offered")
	}
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	cmd.Env = os.Environ()
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	t := &term{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = t.out, t.out
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	go func() {
		_ = cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		t.status = &code
		close(t.done)
	}()
	c.mu.Lock()
	c.nextTerm++
	id := fmt.Sprintf("term_%d", c.nextTerm)
	if c.terminals == nil {
		c.terminals = map[string]*term{}
	}
	c.terminals[id] = t
	c.mu.Unlock()
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) term(id string) (*term, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terminals[id]
	if t == nil {
		return nil, fmt.Errorf("no terminal %s", id)
	}
	return t, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
		return sdk.WaitForTerminalExitResponse{ExitCode: t.status}, nil
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
}

func (c *client) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	r := sdk.TerminalOutputResponse{Output: t.out.String()}
	select {
	case <-t.done:
		r.ExitStatus = &sdk.TerminalExitStatus{ExitCode: t.status}
	default:
	}
	return r, nil
}

func (c *client) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	_ = t.cmd.Process.Kill()
	<-t.done
	return sdk.KillTerminalResponse{}, nil
}

func (c *client) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	_ = t.cmd.Process.Kill()
	<-t.done
	c.mu.Lock()
	delete(c.terminals, p.TerminalId)
	c.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

// UnstableCreateElicitation answers form elicitation (the SDK still calls
// it unstable; ACP 1.21 made it stable).
func (c *client) UnstableCreateElicitation(_ context.Context, p sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	if c.elicit == nil || p.Form == nil || *c.elicit == "" {
		return sdk.UnstableCreateElicitationResponse{Decline: &sdk.UnstableCreateElicitationDecline{Action: "decline"}}, nil
	}
	content := map[string]any{}
	for name := range p.Form.RequestedSchema.Properties {
		content[name] = *c.elicit
	}
	return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept", Content: content}}, nil
}

// UnstableCompleteElicitation implements the SDK's experimental client.
func (c *client) UnstableCompleteElicitation(context.Context, sdk.UnstableCompleteElicitationNotification) error {
	return nil
}

// UnstableConnectMcp implements the SDK's experimental client.
func (c *client) UnstableConnectMcp(context.Context, sdk.UnstableConnectMcpRequest) (sdk.UnstableConnectMcpResponse, error) {
	return sdk.UnstableConnectMcpResponse{}, errors.New("not offered")
}

// UnstableDisconnectMcp implements the SDK's experimental client.
func (c *client) UnstableDisconnectMcp(context.Context, sdk.UnstableDisconnectMcpRequest) (sdk.UnstableDisconnectMcpResponse, error) {
	return sdk.UnstableDisconnectMcpResponse{}, errors.New("not offered")
}

// command is one line of the script.
type command struct {
	Call       string          `json:"call"`
	Notify     string          `json:"notify"`
	Params     json.RawMessage `json:"params"`
	Raw        *string         `json:"raw"`
	Permission string          `json:"permission"`
}

// Main is the acp-client program (see the package doc); it exits with the
// agent's status when its stdin closes.
func Main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("acp-client", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fsOn := fl.Bool("fs", false, "offer fs/read_text_file and fs/write_text_file")
	termOn := fl.Bool("terminal", false, "offer terminal/*")
	elicit := fl.String("elicitation", "\x00", "offer form elicitation, answering with this value")
	perm := fl.String("permission", "allow", "answer to permission requests: an option id, cancelled or hold")
	if err := fl.Parse(args); err != nil || fl.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: acp-client [-fs] [-terminal] [-elicitation V] [-permission P] -- agent [args...]")
		return 2
	}
	c := &client{fs: *fsOn, terminal: *termOn, permission: *perm, held: make(chan string, 16)}
	if *elicit != "\x00" {
		c.elicit = elicit
	}
	agent := exec.Command(fl.Arg(0), fl.Args()[1:]...)
	agent.Stderr = stderr
	in, err := agent.StdinPipe()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	out, err := agent.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := agent.Start(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	tr := &transcript{out: stdout}
	tw := &teeWriter{w: in, t: tr}
	conn := sdk.NewClientSideConnection(c, tw, teeReader(out, tr))
	conn.SetLogger(slog.New(slog.NewTextHandler(stderr, nil)))

	var calls sync.WaitGroup
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := expandEnv(strings.TrimSpace(sc.Text()))
		if line == "" {
			continue
		}
		var cmd command
		if err := json.Unmarshal([]byte(line), &cmd); err != nil {
			fmt.Fprintf(stderr, "acp-client: bad command %q: %v\n", line, err)
			continue
		}
		switch {
		case cmd.Raw != nil:
			tr.line("c2a", []byte(*cmd.Raw))
			if _, err := io.WriteString(in, *cmd.Raw+"\n"); err != nil {
				fmt.Fprintf(stderr, "acp-client: %v\n", err)
			}
		case cmd.Permission != "":
			c.held <- cmd.Permission
		case cmd.Notify != "":
			if err := notify(conn, cmd.Notify, cmd.Params); err != nil {
				fmt.Fprintf(stderr, "acp-client: %s: %v\n", cmd.Notify, err)
			}
		case cmd.Call != "":
			calls.Add(1)
			go func() {
				defer calls.Done()
				if err := call(conn, cmd.Call, cmd.Params); err != nil {
					fmt.Fprintf(stderr, "acp-client: %s: %v\n", cmd.Call, err)
				}
			}()
		default:
			fmt.Fprintf(stderr, "acp-client: nothing to do in %q\n", line)
		}
	}
	_ = in.Close()
	err = agent.Wait()
	calls.Wait()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${NAME} with the variable's value, escaped for a
// JSON string.
func expandEnv(s string) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		b, _ := json.Marshal(os.Getenv(ref[2 : len(ref)-1]))
		return string(b[1 : len(b)-1])
	})
}

func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

// call sends one request through the SDK's typed method; the answer is
// on the wire (the transcript), errors go to stderr.
func call(conn *sdk.ClientSideConnection, method string, params json.RawMessage) error {
	ctx := context.Background()
	var err error
	switch method {
	case sdk.AgentMethodInitialize:
		var p sdk.InitializeRequest
		if p, err = decode[sdk.InitializeRequest](params); err == nil {
			_, err = conn.Initialize(ctx, p)
		}
	case sdk.AgentMethodSessionNew:
		var p sdk.NewSessionRequest
		if p, err = decode[sdk.NewSessionRequest](params); err == nil {
			if p.McpServers == nil {
				p.McpServers = []sdk.McpServer{}
			}
			_, err = conn.NewSession(ctx, p)
		}
	case sdk.AgentMethodSessionLoad:
		var p sdk.LoadSessionRequest
		if p, err = decode[sdk.LoadSessionRequest](params); err == nil {
			if p.McpServers == nil {
				p.McpServers = []sdk.McpServer{}
			}
			_, err = conn.LoadSession(ctx, p)
		}
	case sdk.AgentMethodSessionResume:
		var p sdk.ResumeSessionRequest
		if p, err = decode[sdk.ResumeSessionRequest](params); err == nil {
			_, err = conn.ResumeSession(ctx, p)
		}
	case sdk.AgentMethodSessionList:
		var p sdk.ListSessionsRequest
		if p, err = decode[sdk.ListSessionsRequest](params); err == nil {
			_, err = conn.ListSessions(ctx, p)
		}
	case sdk.AgentMethodSessionClose:
		var p sdk.CloseSessionRequest
		if p, err = decode[sdk.CloseSessionRequest](params); err == nil {
			_, err = conn.CloseSession(ctx, p)
		}
	case sdk.AgentMethodSessionPrompt:
		var p sdk.PromptRequest
		if p, err = decode[sdk.PromptRequest](params); err == nil {
			_, err = conn.Prompt(ctx, p)
		}
	case sdk.AgentMethodSessionSetConfigOption:
		var p sdk.SetSessionConfigOptionRequest
		if p, err = decode[sdk.SetSessionConfigOptionRequest](params); err == nil {
			_, err = conn.SetSessionConfigOption(ctx, p)
		}
	case sdk.AgentMethodSessionSetMode:
		var p sdk.SetSessionModeRequest
		if p, err = decode[sdk.SetSessionModeRequest](params); err == nil {
			_, err = conn.SetSessionMode(ctx, p)
		}
	default:
		return fmt.Errorf("unknown method")
	}
	return err
}

func notify(conn *sdk.ClientSideConnection, method string, params json.RawMessage) error {
	switch method {
	case sdk.AgentMethodSessionCancel:
		p, err := decode[sdk.CancelNotification](params)
		if err != nil {
			return err
		}
		return conn.Cancel(context.Background(), p)
	}
	return fmt.Errorf("unknown notification")
}
