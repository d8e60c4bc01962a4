package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/export"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/engine/tools"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
	"github.com/xcsh-go/xcsh/rpc"
)

// version is the semver sent in the ready frame.
const version = "0.1.0"

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	msg  string // printed to stderr as is; empty prints nothing
}

func (e *exitError) Error() string { return e.msg }

// defaultMemoryLimit is the soft heap limit when GOMEMLIMIT is not set: the
// garbage collector works harder as the heap nears it instead of letting
// garbage double the footprint (switching between two 100k-entry sessions
// peaks at 180 MB instead of 280). It is soft: a larger session still
// loads, with more collection (the runtime caps that at half the CPU).
const defaultMemoryLimit = 160 << 20

func run() int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	stdin, restore := pollableStdin(os.Stdin)
	defer restore()
	cmd := newRootCmd(stdin, os.Stdout, os.Stderr)
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, ee.msg)
		}
		return ee.code
	}
	// cobra flag and usage errors.
	fmt.Fprintln(os.Stderr, "Error:", err)
	return 2
}

// options are the CLI flags; every flag of the original's table parses.
type options struct {
	mode, provider, model, models, thinking, apiKey string
	noSession                                       bool
	sessionDir                                      string
	cont                                            bool
	resume, session                                 string
	tools                                           string
	noTools                                         bool
	systemPrompt, appendSystemPrompt                string
	rpcUpdates                                      string
	retryBaseDelay, streamIdleTimeout               time.Duration
	ui, confirmOutside                              bool
	confirmBash                                     string
	confirmTimeout                                  time.Duration
	maxLineBytes                                    int
	extensions, extensionFlags                      []string
	noExtensions                                    bool
	// Accepted for compatibility; no meaning in this build (docs/compat.md).
	noTitle, noSkills, noRules, noLSP, noMCP, noPTY, allowHome bool
	providerSessionID                                          string
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:           "xcsh --mode rpc [flags]",
		Short:         "xcsh is a headless coding agent driven over a JSONL RPC protocol",
		Version:       version,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRoot(cmd.Context(), o, args, stdin, stdout, stderr)
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	f := cmd.Flags()
	f.StringVar(&o.mode, "mode", "", "output mode: rpc")
	f.StringVar(&o.provider, "provider", "", "model provider (fake)")
	f.StringVar(&o.model, "model", "", "model id, provider/id, or for the fake provider a script path")
	f.StringVar(&o.models, "models", "", "comma-separated models for cycle_model")
	f.StringVar(&o.thinking, "thinking", "", "thinking level: minimal, low, medium, high, xhigh")
	f.StringVar(&o.apiKey, "api-key", "", "API key for the selected model's provider (not persisted)")
	f.BoolVar(&o.noSession, "no-session", false, "keep the session in memory only")
	f.StringVar(&o.sessionDir, "session-dir", "", "directory for session files")
	f.BoolVarP(&o.cont, "continue", "c", false, "continue the most recent session")
	f.StringVarP(&o.resume, "resume", "r", "", "resume a session by path or id prefix")
	f.StringVar(&o.session, "session", "", "alias of --resume")
	f.StringVar(&o.tools, "tools", "", "comma-separated built-in tools to enable")
	f.BoolVar(&o.noTools, "no-tools", false, "disable all built-in tools")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "system prompt text or file")
	f.StringVar(&o.appendSystemPrompt, "append-system-prompt", "", "text or file appended to the system prompt")
	f.StringVar(&o.rpcUpdates, "rpc-updates", rpc.UpdatesFull, "message_update frames: full (with partial snapshots) or delta")
	f.DurationVar(&o.retryBaseDelay, "retry-base-delay", engine.DefaultRetryBase, "first auto-retry wait; doubled for each further attempt")
	f.DurationVar(&o.streamIdleTimeout, "stream-idle-timeout", engine.DefaultStreamIdleTimeout, "end a model call that sends nothing for this long (retryable); 0 disables")
	f.BoolVar(&o.ui, "ui", false, "the host answers extension UI dialogs: offers the ask tool")
	f.StringVar(&o.confirmBash, "confirm-bash", "", "comma-separated command patterns (* and ?) the user must confirm before bash runs them")
	f.BoolVar(&o.confirmOutside, "confirm-writes-outside-cwd", false, "ask the user before write or edit changes a file outside the working directory")
	f.DurationVar(&o.confirmTimeout, "confirm-timeout", 0, "a confirmation not answered in this time is declined (0: wait)")
	f.IntVar(&o.maxLineBytes, "rpc-max-line-bytes", rpc.DefaultMaxLineBytes, "longest accepted input line in bytes")
	f.StringArrayVarP(&o.extensions, "extension", "e", nil, "run this extension (an executable, or a directory with extension.json); repeatable")
	f.StringArrayVar(&o.extensionFlags, "extension-flag", nil, "NAME=VALUE passed to every extension in its handshake; repeatable")
	f.BoolVar(&o.noExtensions, "no-extensions", false, "do not discover extensions (--extension paths still run)")
	for _, nf := range []struct {
		p    *bool
		name string
	}{
		{&o.noTitle, "no-title"}, {&o.noSkills, "no-skills"}, {&o.noRules, "no-rules"}, {&o.noLSP, "no-lsp"},
		{&o.noMCP, "no-mcp"}, {&o.noPTY, "no-pty"}, {&o.allowHome, "allow-home"},
	} {
		f.BoolVar(nf.p, nf.name, false, "accepted for compatibility; no effect")
	}
	f.StringVar(&o.providerSessionID, "provider-session-id", "", "accepted for compatibility; no effect")
	return cmd
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func runRoot(ctx context.Context, o *options, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch o.mode {
	case "rpc":
	case "":
		return &exitError{2, "Error: interactive mode is not available in this build; use --mode rpc"}
	default:
		return &exitError{2, fmt.Sprintf("Error: unknown mode %q (supported: rpc)", o.mode)}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "@") {
			return &exitError{1, "Error: @file arguments are not supported in RPC mode"}
		}
	}
	if o.rpcUpdates != rpc.UpdatesFull && o.rpcUpdates != rpc.UpdatesDelta {
		return &exitError{2, fmt.Sprintf("Error: invalid --rpc-updates %q (expected full or delta)", o.rpcUpdates)}
	}
	if o.maxLineBytes <= 0 {
		return &exitError{2, "Error: --rpc-max-line-bytes must be positive"}
	}

	var clock engine.Clock = engine.SystemClock{}
	var ids engine.IDSource
	deterministic := truthy(os.Getenv("XCSH_DETERMINISTIC"))
	if deterministic {
		clock = engine.DeterministicEpoch
		ids = &engine.SequentialIDs{}
	} else {
		ids = &engine.RandomIDs{Clock: clock}
	}

	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	ss, err := setupSession(o, os.Getenv, cwd, clock.NowMillis(), ids, stderr)
	if err != nil {
		return err
	}
	// A resumed session may bring its model: no model yet is then no error.
	resumed := ss.loaded != nil && o.model == "" && o.provider == ""
	ms, err := setupModels(o, os.Getenv, deterministic, resumed, stderr)
	if err != nil {
		return err
	}
	defer ms.discovery.Wait()

	thinking := engine.ThinkingXHigh // the original's default, clamped to the model
	if ms.thinking != "" {
		thinking = ms.thinking // a ":level" suffix of --model
	}
	if o.thinking != "" {
		if l, ok := engine.ParseEffort(o.thinking); ok {
			thinking = l
		} else {
			fmt.Fprintf(stderr, "Warning: invalid --thinking %q (expected minimal, low, medium, high or xhigh); ignored\n", o.thinking)
		}
	}

	// One clock serves the engine and the tools (file ages in read).
	toolOpts := tools.Options{Cwd: cwd, StreamInterval: 50 * time.Millisecond,
		Clock: clock}
	toolOpts.HostUI = o.ui
	policy := newConfirmPolicy(cwd, o.confirmBash, o.confirmOutside, o.confirmTimeout)
	if deterministic {
		// Streamed partial output depends on timing; transcripts must not.
		toolOpts.StreamInterval = 0
	}
	var active []engine.Tool
	switch {
	case o.noTools:
	case o.tools != "":
		active, err = tools.Select(toolOpts, strings.Split(o.tools, ","))
		if err != nil {
			return &exitError{1, "Error: --tools: " + err.Error()}
		}
	default:
		active = tools.Builtins(toolOpts)
	}
	// Extensions start here, in parallel, once the session's identity is
	// known; their tools join the built-ins (a taken name is refused).
	extHost, extTools := setupExtensions(o, cwd, active, ss.id, ss.file, clock, stderr)
	active = append(active, extTools...)
	promptOpts := engine.SystemPromptOptions{
		Tools: active, Cwd: cwd, OS: runtime.GOOS, Now: clock.NowMillis(),
		Custom: textOrFile(o.systemPrompt), Append: textOrFile(o.appendSystemPrompt),
		Context: engine.LoadContextFiles(cwd, sessionfile.AgentDir(os.Getenv)),
	}
	sysPrompt := engine.BuildSystemPrompt(promptOpts)
	// set_host_tools rebuilds the prompt for the new tool set.
	rebuildPrompt := func(tools []engine.Tool) string {
		po := promptOpts
		po.Tools = tools
		return engine.BuildSystemPrompt(po)
	}

	var started func()
	if extHost != nil {
		started = extHost.Begin
	}
	srv := rpc.NewServer(stdout, rpc.Options{
		Version: version, MaxLineBytes: o.maxLineBytes, Updates: o.rpcUpdates, Log: stderr,
		GrowOutput: func() {
			if f, ok := stdout.(*os.File); ok {
				growPipe(f)
			}
		},
		Started: started,
	})
	// The extension host watches the events on their way to the front and
	// answers the session's hooks; without extensions neither exists.
	var sink engine.Sink = srv
	var hooks engine.Hooks
	if extHost != nil {
		sink, hooks = extHost.Tap(srv), extHost
	}
	var gate func(context.Context, engine.ToolCall) *engine.ToolResult
	if policy != nil {
		gate = policy.gate
	}
	sess := engine.New(engine.Config{
		Provider: ms.provider, Model: ms.model, ThinkingLevel: thinking, Tools: active, Thinking: thinkingPolicy{},
		Models: registryModels{ms.reg}, Scoped: ms.scoped, Files: ss.files(cwd, clock, stderr), Exporter: export.Exporter{},
		RebuildPrompt: rebuildPrompt, AnnounceName: truthy(os.Getenv("PI_RPC_EMIT_TITLE")), Gate: gate,
		Validator: schema.New(), Shell: shellexec.Shell{Cwd: cwd},
		SystemPrompt: sysPrompt, Clock: clock, IDs: ids, Sink: sink, Host: srv, Hooks: hooks, Log: stderr,
		SessionID: ss.id, SessionFile: ss.file, Store: ss.storeOrNil(), OrderedResults: deterministic,
		RetryBaseDelay: o.retryBaseDelay, StreamIdleTimeout: idleTimeout(o.streamIdleTimeout),
	})
	srv.Attach(sess)
	if extHost != nil {
		extHost.Attach(sess)
	}
	if l := ss.resumed(); l != nil {
		// What the command line names wins; the rest comes from the record.
		keepModel, keepThinking := o.model != "" || o.provider != "", o.thinking != ""
		sess.Call(func() {
			if err := sess.Resume(l, keepModel, keepThinking); err != nil {
				fmt.Fprintf(stderr, "xcsh: %s: %v\n", ss.file, err)
			}
		})
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// Handling SIGPIPE (not ignoring it: an ignored signal stays ignored in
	// the children we exec) makes a write to a closed stdout return EPIPE
	// instead of killing the process, so the server can abort the run,
	// kill the children and exit with its own status (exitEPIPE).
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	go func() {
		select {
		case sig := <-sigs:
			cancel(signalError{sig.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()

	err = srv.Run(ctx, stdin)
	stopExtensions(extHost, stderr)
	killChildren()
	// Make the session file durable. Bounded: after the shutdown grace ran
	// out, the executor may still be held by the run that did not stop.
	closed := make(chan struct{})
	go func() { sess.Call(sess.CloseStore); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Second):
	}
	var se signalError
	if errors.As(err, &se) {
		return &exitError{128 + int(se.sig), ""}
	}
	if errors.Is(err, rpc.ErrOutputClosed) {
		// The server has already said so on stderr, in one line.
		if errors.Is(err, syscall.EPIPE) {
			return &exitError{exitEPIPE, ""}
		}
		return &exitError{1, ""}
	}
	return err
}

// idleTimeout maps the flag (0 disables) to the engine's setting (negative
// disables).
func idleTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// exitEPIPE is the exit status when the host closes stdout: what a shell
// reports for a process killed by SIGPIPE (128+13), so hosts see the
// status they would have seen before, now reached deliberately.
const exitEPIPE = 141

// childKillWait bounds how long the exit waits for killed children to be
// reaped.
const childKillWait = time.Second

// killChildren kills every process group started by the bash tool or an
// RPC bash command, on every exit path (EOF, signal, EPIPE, the shutdown
// grace running out), and waits briefly for them to be reaped, so no child
// outlives the agent.
func killChildren() {
	shellexec.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), childKillWait)
	defer cancel()
	_ = shellexec.Wait(ctx)
}

type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "received " + e.sig.String() }

// textOrFile returns the content of the file v names, else v itself.
func textOrFile(v string) string {
	if v == "" {
		return ""
	}
	if b, err := os.ReadFile(v); err == nil {
		return string(b)
	}
	return v
}
