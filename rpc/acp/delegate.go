package acp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Delegation: when the client offers it, the file tools read and write
// text through the editor (fs/read_text_file, fs/write_text_file: its
// unsaved buffers, its undo) and bash runs in the editor's terminals
// (terminal/*). cmd/xcsh hands Delegate.Editor and Delegate.Terminal to the
// tools (engine/tools.Options.Editor and Exec); both are called on the
// tools' goroutines and wait for the client through the connection's
// table of our requests.

// Editor reads and writes text files through the client.
type Editor struct {
	c   *conn
	sid string // set once the session exists, before any tool runs
}

type readTextRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
}

type writeTextRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// ReadText reads the editor's text of path (absolute).
func (e *Editor) ReadText(ctx context.Context, path string) (string, error) {
	var r sdk.ReadTextFileResponse
	if err := e.c.call(ctx, sdk.ClientMethodFsReadTextFile, readTextRequest{SessionID: e.sid, Path: path}, &r); err != nil {
		return "", clientError(ctx, err)
	}
	if rec := recorderOf(ctx); rec != nil {
		rec.read(path, r.Content)
	}
	return r.Content, nil
}

// WriteText writes path's text in the editor (which creates the file).
func (e *Editor) WriteText(ctx context.Context, path, content string) error {
	if err := e.c.call(ctx, sdk.ClientMethodFsWriteTextFile, writeTextRequest{SessionID: e.sid, Path: path, Content: content}, nil); err != nil {
		return clientError(ctx, err)
	}
	if rec := recorderOf(ctx); rec != nil {
		rec.wrote(path, content)
	}
	return nil
}

// clientError is what a tool reports of a failed request: the client's
// message, or ctx's error when the call was cancelled (the tool returns
// it as a Go error, as for a local abort).
func clientError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return errors.New(we.Message)
	}
	if errors.Is(err, errClientGone) {
		return errors.New("the editor has gone")
	}
	return err
}

// Terminal runs commands in the client's terminals.
type Terminal struct {
	c  *conn
	ss *session // set once the session exists
}

// RunOptions configure one Terminal.Run.
type RunOptions struct {
	Cwd      string
	Env      map[string]string
	Timeout  time.Duration // 0: none
	MaxBytes int           // the output the client keeps
}

// RunResult is a command's outcome, as engine/tools/shellexec reports one.
type RunResult struct {
	Output                                 string
	ExitCode                               int
	Exited, Cancelled, TimedOut, Truncated bool
}

type terminalCreate struct {
	SessionID       string            `json:"sessionId"`
	Command         string            `json:"command"`
	Args            []string          `json:"args"`
	Cwd             string            `json:"cwd,omitempty"`
	Env             []sdk.EnvVariable `json:"env,omitempty"`
	OutputByteLimit int               `json:"outputByteLimit,omitempty"`
}

type terminalRef struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

// terminalGrace bounds the requests that clean up after a command (kill,
// output, release), which go on after the call was cancelled.
const terminalGrace = 5 * time.Second

// Run runs command with bash -c in a new terminal of the editor, shown in
// the tool call, waits for it (killing it on cancellation or timeout),
// reads its output and releases the terminal.
func (t *Terminal) Run(ctx context.Context, command string, o RunOptions) (RunResult, error) {
	req := terminalCreate{SessionID: t.ss.id, Command: "bash", Args: []string{"-c", command}, Cwd: o.Cwd, OutputByteLimit: o.MaxBytes}
	keys := make([]string, 0, len(o.Env))
	for k := range o.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		req.Env = append(req.Env, sdk.EnvVariable{Name: k, Value: o.Env[k]})
	}
	var created sdk.CreateTerminalResponse
	if err := t.c.call(ctx, sdk.ClientMethodTerminalCreate, req, &created); err != nil {
		if ctx.Err() != nil {
			return RunResult{Cancelled: true}, nil
		}
		return RunResult{}, clientError(ctx, err)
	}
	ref := terminalRef{SessionID: t.ss.id, TerminalID: created.TerminalId}
	if rec := recorderOf(ctx); rec != nil {
		t.ss.eng.Call(func() { t.ss.showTerminal(rec.callID, created.TerminalId) })
	}
	wctx, cancel := context.WithCancel(ctx)
	if o.Timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, o.Timeout)
	}
	defer cancel()
	var res RunResult
	var exit sdk.WaitForTerminalExitResponse
	err := t.c.call(wctx, sdk.ClientMethodTerminalWaitForExit, ref, &exit)
	after, done := context.WithTimeout(context.WithoutCancel(ctx), terminalGrace)
	defer done()
	if err != nil && wctx.Err() != nil {
		res.Cancelled = ctx.Err() != nil
		res.TimedOut = !res.Cancelled
		_ = t.c.call(after, sdk.ClientMethodTerminalKill, ref, nil)
	}
	var out sdk.TerminalOutputResponse
	outErr := t.c.call(after, sdk.ClientMethodTerminalOutput, ref, &out)
	_ = t.c.call(after, sdk.ClientMethodTerminalRelease, ref, nil)
	if outErr != nil && err != nil && !res.Cancelled && !res.TimedOut {
		return RunResult{}, clientError(ctx, err)
	}
	res.Output, res.Truncated = out.Output, out.Truncated
	code := exit.ExitCode
	if out.ExitStatus != nil && out.ExitStatus.ExitCode != nil {
		code = out.ExitStatus.ExitCode
	}
	if code != nil && !res.Cancelled && !res.TimedOut {
		res.Exited, res.ExitCode = true, *code
	}
	return res, nil
}

// recorder is what one tool call did through the editor: the calls'
// context carries it (wrapTools), so the file diffs of a write or edit and
// the terminal of a bash call are the call's own.
type recorder struct {
	callID string
	mu     sync.Mutex
	reads  map[string]string // the first text read of each path
	writes map[string]string // the last text written
}

type recorderKey struct{}

func recorderOf(ctx context.Context) *recorder {
	r, _ := ctx.Value(recorderKey{}).(*recorder)
	return r
}

func (r *recorder) read(path, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads == nil {
		r.reads = map[string]string{}
	}
	if _, ok := r.reads[path]; !ok {
		r.reads[path] = text
	}
}

func (r *recorder) wrote(path, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writes == nil {
		r.writes = map[string]string{}
	}
	r.writes[path] = text
}

// fileDiff is one file a call changed: its text before (nil: it did not
// exist) and after.
type fileDiff struct {
	path string
	old  *string
	new  string
}

// maxDiffFile bounds the files a diff shows whole.
const maxDiffFile = 1 << 20

// wrapTools gives every tool call a recorder, and makes the diffs of
// write and edit calls.
func wrapTools(ss *session, ts []engine.Tool) []engine.Tool {
	out := make([]engine.Tool, len(ts))
	for i, t := range ts {
		out[i] = &recordedTool{Tool: t, ss: ss}
	}
	return out
}

type recordedTool struct {
	engine.Tool
	ss *session
}

// Run implements engine.Tool.
func (t *recordedTool) Run(ctx context.Context, call engine.ToolCall, update func(engine.ToolResult)) (engine.ToolResult, error) {
	rec := &recorder{callID: call.ID}
	ctx = context.WithValue(ctx, recorderKey{}, rec)
	name := t.Tool.Name()
	if name != "write" && name != "edit" {
		return t.Tool.Run(ctx, call, update)
	}
	paths := changedPaths(t.ss.cwd, call.Arguments)
	before := map[string]*string{}
	for _, p := range paths {
		before[p] = readSmall(p)
	}
	res, err := t.Tool.Run(ctx, call, update)
	if err != nil || res.IsError {
		return res, err
	}
	var diffs []fileDiff
	for _, p := range paths {
		old := before[p]
		rec.mu.Lock()
		if r, ok := rec.reads[p]; ok {
			old = &r
		}
		after, wrote := rec.writes[p]
		rec.mu.Unlock()
		if !wrote {
			a := readSmall(p)
			if a == nil {
				continue
			}
			after = *a
		}
		if old != nil && *old == after {
			continue
		}
		diffs = append(diffs, fileDiff{path: p, old: old, new: after})
	}
	if len(diffs) > 0 {
		t.ss.diffs.Store(call.ID, diffs)
	}
	return res, nil
}

// changedPaths are the absolute paths a write or edit call names.
func changedPaths(cwd string, args []byte) []string {
	var a struct {
		Path  string `json:"path"`
		Edits []struct {
			Path string `json:"path"`
		} `json:"edits"`
	}
	_ = json.Unmarshal(args, &a)
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if p = filepath.Clean(p); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(a.Path)
	for _, e := range a.Edits {
		add(e.Path)
	}
	return out
}

// readSmall reads a regular text file of at most maxDiffFile bytes by the
// file rule (never blocking on a FIFO or a device); nil otherwise.
func readSmall(path string) *string {
	b, err := safefile.ReadFile(path, maxDiffFile)
	if err != nil || !utf8.Valid(b) {
		return nil
	}
	s := string(b)
	return &s
}
