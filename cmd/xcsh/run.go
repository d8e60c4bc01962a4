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
	"github.com/xcsh-go/xcsh/engine/extension"
	"github.com/xcsh-go/xcsh/engine/mcp"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/engine/tools"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
	"github.com/xcsh-go/xcsh/rpc"
	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
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
	todoClearDelay                                  time.Duration
	ui, confirmOutside                              bool
	confirmBash                                     string
	confirmTimeout                                  time.Duration
	maxLineBytes                                    int
	print, listModels                               bool
	maxTurns                                        int
	procs                                           procFlags // procs: keys and sandbox (supervise.go)
	otel                                            otelFlags // tracing (otel.go)
	noAutoCompaction                                bool
	// The user's setup (resources.go): context files, skills, templates
	// and MCP servers.
	noContextFiles, noSkills, noTemplates, noMCP bool
	skills, templates, mcpConfigs                []string
	extensions, extensionFlags                   []string
	noExtensions                                 bool
	noRules                                      bool // no TTSR rules
	// Budgets and structured output (budgetflags.go).
	budget budgetFlags
	// Accepted for compatibility; no meaning in this build (docs/compat.md).
	noTitle, noLSP, noPTY, allowHome bool
	providerSessionID                string
	temporal                         temporalFlags // durable sessions (temporal_flags.go)
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "xcsh [flags] [prompt...]",
		Short: "xcsh is a headless coding agent",
		Long: `xcsh is a headless coding agent. A host program (an IDE, a CI bot, an orchestrator)
drives it over newline-delimited JSON on stdin and stdout (--mode rpc); a script runs
one prompt with -p and reads the answer, or every event as JSON lines (--mode json).

Models come from a local Ollama, any OpenAI-compatible server, Anthropic, or the
built-in fake provider (a deterministic demo, no network). The thinking level starts
at xhigh, clamped to what the model supports (--list-models shows the level in force);
--thinking or a ":level" suffix on --model changes it.

Documentation: docs/ in the source tree (rpc.md: the protocol; providers.md: models
and keys; architecture.md: how it is built).`,
		Example: `  # The demo model, no network: one prompt, the answer on stdout
  xcsh --provider fake -p "Hello"

  # Drive the agent from a host over JSON lines
  xcsh --mode rpc --provider fake

  # Every event of one prompt as JSON lines
  xcsh --mode json --provider fake "Hello"

  # A local Ollama model, with a lower thinking level
  xcsh --model ollama/qwen3:8b:low -p "Summarise README.md"

  # Anthropic (ANTHROPIC_API_KEY in the environment)
  xcsh --model anthropic/claude-sonnet-4-5 --mode rpc

  # An OpenAI-compatible server configured in ~/.xcsh/agent/models.json
  xcsh --model myserver/my-model -p "Hi"

  # Pipe text in: stdin comes before the prompt
  git diff | xcsh --provider fake -p "Review this change"

  # The models you can use, with their context, output and thinking level
  xcsh --list-models qwen`,
		Version:       version,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRoot(cmd.Context(), o, args, stdin, stdout, stderr)
		},
	}
	// A bad flag says what was wrong and where the usage is, in one exit.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{2, fmt.Sprintf("Error: %v\nRun 'xcsh --help' for usage.", err)}
	})
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	f := cmd.Flags()
	f.StringVar(&o.mode, "mode", "", "rpc (a host drives the agent over JSON lines), acp (an Agent Client Protocol editor: Zed, JetBrains, Neovim), json (one prompt, every event as JSON lines) or print (like -p)")
	f.BoolVarP(&o.print, "print", "p", false, "run the prompt given as arguments (and piped stdin), print the answer and exit")
	f.BoolVar(&o.listModels, "list-models", false, "list the models you can use (an argument filters them) and exit")
	f.StringVar(&o.provider, "provider", "", "model provider: fake (built-in demo), ollama, anthropic, openai, or one from models.json")
	f.StringVar(&o.model, "model", "", "model: id, provider/id, either with an optional :level (provider/id:high); for the fake provider a script path")
	f.StringVar(&o.models, "models", "", "comma-separated models for cycle_model")
	f.StringVar(&o.thinking, "thinking", "", "thinking level: off, minimal, low, medium, high, xhigh (default xhigh, clamped to the model)")
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
	f.DurationVar(&o.todoClearDelay, "todo-clear-delay", engine.DefaultTodoClearDelay, "how long a completed or abandoned todo stays listed (0: at once, negative: never)")
	f.BoolVar(&o.noRules, "no-rules", false, "do not load rules (.xcsh/rules, .cursor/rules, .clinerules, ...)")
	f.BoolVar(&o.ui, "ui", false, "the host answers extension UI dialogs: offers the ask tool")
	f.StringVar(&o.confirmBash, "confirm-bash", "", "comma-separated command patterns (* and ?) the user must confirm before bash runs them")
	f.BoolVar(&o.confirmOutside, "confirm-writes-outside-cwd", false, "ask the user before write or edit changes a file outside the working directory")
	f.DurationVar(&o.confirmTimeout, "confirm-timeout", 0, "a confirmation not answered in this time is declined (0: wait)")
	f.IntVar(&o.maxTurns, "max-turns", 0, "end a run after this many model calls when the model keeps calling tools (0: no limit)")
	addBudgetFlags(f, &o.budget) // budgetflags.go
	f.IntVar(&o.maxLineBytes, "rpc-max-line-bytes", rpc.DefaultMaxLineBytes, "longest accepted input line in bytes")
	addProcFlags(f, &o.procs) // procs: supervise.go
	addOtelFlags(f, &o.otel)  // tracing: otel.go
	f.BoolVar(&o.noAutoCompaction, "no-auto-compaction", false, "never compact on its own (an overflow then fails the run): a strictly appending history, for training on its trajectory (xcsh export --append-only)")
	f.BoolVar(&o.noContextFiles, "no-context-files", false, "do not read AGENTS.md / CLAUDE.md into the system prompt")
	f.BoolVar(&o.noSkills, "no-skills", false, "do not discover skills (--skill paths are still read)")
	f.StringArrayVar(&o.skills, "skill", nil, "a skill file or directory of skills to load (repeatable)")
	f.BoolVar(&o.noTemplates, "no-prompt-templates", false, "do not discover prompt templates (--prompt-template paths are still read)")
	f.StringArrayVar(&o.templates, "prompt-template", nil, "a prompt template file or directory to load (repeatable)")
	f.BoolVar(&o.noMCP, "no-mcp", false, "do not start MCP servers")
	f.StringArrayVar(&o.mcpConfigs, "mcp-config", nil, "an MCP configuration file ({\"mcpServers\":{…}}) to read first (repeatable)")
	f.StringArrayVarP(&o.extensions, "extension", "e", nil, "run this extension (an executable, or a directory with extension.json); repeatable")
	f.StringArrayVar(&o.extensionFlags, "extension-flag", nil, "NAME=VALUE passed to every extension in its handshake; repeatable")
	f.BoolVar(&o.noExtensions, "no-extensions", false, "do not discover extensions (--extension paths still run)")
	for _, nf := range []struct {
		p    *bool
		name string
	}{
		{&o.noTitle, "no-title"}, {&o.noLSP, "no-lsp"},
		{&o.noPTY, "no-pty"}, {&o.allowHome, "allow-home"},
	} {
		f.BoolVar(nf.p, nf.name, false, "accepted for compatibility; no effect")
	}
	f.StringVar(&o.providerSessionID, "provider-session-id", "", "accepted for compatibility; no effect")
	addTemporalFlags(f, &o.temporal) // temporal_flags.go
	cmd.AddCommand(newServeCmd(cmd, o, stdin, stdout, stderr), newConnectCmd(stdin, stdout, stderr))
	cmd.AddCommand(newReplayCmd(stdout, stderr), newSchemaCmd(stdout))
	cmd.AddCommand(newWorkerCmd(cmd, o, stdout, stderr)) // temporal_on.go, temporal_off.go
	cmd.AddCommand(newExportCmd(cmd, o, stdout, stderr)) // export.go
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
	defer stopTracing(&o.otel, stderr) // the last spans, whatever the exit
	mode := o.mode
	if o.print {
		if mode != "" && mode != "print" {
			return &exitError{2, fmt.Sprintf("Error: --print runs in print mode, not --mode %s", mode)}
		}
		mode = "print"
	}
	if o.listModels {
		return listModels(o, args, stdout, stderr)
	}
	if err := o.budget.check(mode); err != nil { // budgetflags.go
		return err
	}
	switch mode {
	case "rpc":
		for _, a := range args {
			if strings.HasPrefix(a, "@") { // exit 1, as the reference (rpc-protocol.md)
				return &exitError{1, "Error: @file arguments are not supported in RPC mode"}
			}
		}
		if o.rpcUpdates != rpc.UpdatesFull && o.rpcUpdates != rpc.UpdatesDelta {
			return &exitError{2, fmt.Sprintf("Error: invalid --rpc-updates %q (expected full or delta)", o.rpcUpdates)}
		}
		if o.maxLineBytes <= 0 {
			return &exitError{2, "Error: --rpc-max-line-bytes must be positive"}
		}
		if o.temporal.address != "" {
			return runTemporalFront(ctx, o, stdin, stdout, stderr) // docs/durable.md
		}
	case "print", "json":
	case "acp":
		if o.maxLineBytes <= 0 {
			return &exitError{2, "Error: --rpc-max-line-bytes must be positive"}
		}
		return runACP(ctx, o, stdin, stdout, stderr)
	case "":
		return &exitError{2, `Error: interactive mode is not available in this build: run one prompt with xcsh -p "prompt", or drive the agent with --mode rpc (xcsh --help)`}
	default:
		return &exitError{2, fmt.Sprintf("Error: unknown mode %q (supported: rpc, acp, json, print)", mode)}
	}
	a, err := setupAgent(o, stderr)
	if err != nil {
		return err
	}
	defer a.ms.discovery.Wait()
	if mode == "rpc" {
		return runRPC(ctx, o, a, stdin, stdout, stderr)
	}
	return runOneShot(ctx, mode, o.rpcUpdates == rpc.UpdatesDelta, &o.budget, args, a, stdin, stdout, stderr)
}

// agentSetup is what the one-session modes (rpc, print, json) start
// from: the session host and the request for the session the command line
// names, and the models.
type agentSetup struct {
	host *sessions.Manager
	req  sessions.Request
	ms   *modelSetup
}

// setupAgent resolves the flags: clock and ids, the session to continue,
// models, thinking level, processes; the session itself is built when the
// front opens it (sessionConfig).
func setupAgent(o *options, stderr io.Writer) (*agentSetup, error) {
	clock, ids, deterministic := clockAndIDs()
	cwd, err := os.Getwd()
	if err != nil {
		return nil, &exitError{2, "Error: " + err.Error()}
	}
	path, err := startupPath(o, os.Getenv, cwd, stderr)
	if err != nil {
		return nil, startupError(err)
	}
	// A resumed session may bring its model: no model yet is then no error.
	resumed := path != "" && o.model == "" && o.provider == ""
	sh, err := setupShared(o, clock, ids, deterministic, resumed, cwd, stderr)
	if err != nil {
		return nil, err
	}
	return &agentSetup{host: newHost(o, sh, stderr), req: sessions.Request{Cwd: cwd, Path: path, HostUI: o.ui}, ms: sh.ms}, nil
}

// open opens the process's one session with front f.
func (a *agentSetup) open(f sessions.Front) (*sessions.Live, error) {
	l, err := a.host.Open(a.req, f)
	if err != nil {
		return nil, startupError(err)
	}
	return l, nil
}

// clockAndIDs are the process's clock and id source: frozen and
// sequential under XCSH_DETERMINISTIC.
func clockAndIDs() (engine.Clock, engine.IDSource, bool) {
	if truthy(os.Getenv("XCSH_DETERMINISTIC")) {
		return engine.DeterministicEpoch, &engine.SequentialIDs{}, true
	}
	var clock engine.Clock = engine.SystemClock{}
	return clock, &engine.RandomIDs{Clock: clock}, false
}

// sharedSetup is what every session of the process shares: the clock and
// ids, the models, the processes' keys and sandbox, the thinking level.
// ACP builds several sessions from it (sessionConfig), in their own cwds.
type sharedSetup struct {
	clock                   engine.Clock
	ids                     engine.IDSource
	deterministic           bool
	ms                      *modelSetup
	procs                   *procSetup
	thinking                engine.ThinkingLevel
	keepModel, keepThinking bool
	tracer                  engine.Tracer // nil: tracing off (otel.go)
}

// setupShared resolves the keys, the models (optional: none yet is no
// error), the sandbox (for cwd) and the thinking level.
func setupShared(o *options, clock engine.Clock, ids engine.IDSource, deterministic, optional bool, cwd string, stderr io.Writer) (*sharedSetup, error) {
	level, err := thinkingFlag(o.thinking) // thinkingflag.go
	if err != nil {
		return nil, err
	}
	if err := resolveAPIKey(o, &o.procs.keys, os.Getenv); err != nil { // procs: keys.go
		return nil, err
	}
	tracer := setupTracing(&o.otel, os.Getenv, stderr) // before the adapters make their clients
	ms, err := setupModels(o, os.Getenv, deterministic, optional, stderr)
	if err != nil {
		return nil, err
	}
	procs, err := setupProcs(&o.procs, ms.reg, cwd, stderr) // procs: supervise.go
	if err != nil {
		ms.discovery.Wait()
		return nil, err
	}

	thinking := engine.ThinkingXHigh // the original's default, clamped to the model
	if ms.thinking != "" {
		thinking = ms.thinking // a ":level" suffix of --model
	}
	if level != "" {
		thinking = level
	}
	return &sharedSetup{clock: clock, ids: ids, deterministic: deterministic, ms: ms, procs: procs, thinking: thinking,
		keepModel: o.model != "" || o.provider != "", keepThinking: o.thinking != "", tracer: tracer}, nil
}

// sessionParts are what differs between the sessions of one process.
type sessionParts struct {
	cwd    string
	rec    *record      // the record: id, file, store
	hostUI bool         // the host shows dialogs: the ask tool exists
	mcp    *mcp.Manager // nil: no MCP servers
	// editor and exec delegate the file tools and bash (ACP); nil: local.
	editor tools.Editor
	exec   tools.Exec
}

// sessionConfig builds one session's configuration in p.cwd: tools,
// confirmation policy, system prompt, resources, MCP servers, and starts
// the session's extensions (nil host: there are none).
func (sh *sharedSetup) sessionConfig(o *options, p sessionParts, stderr io.Writer) (engine.Config, *extension.Host, error) {
	cwd, clock, rec := p.cwd, sh.clock, p.rec
	// One clock serves the engine and the tools (file ages in read).
	toolOpts := tools.Options{Cwd: cwd, StreamInterval: 50 * time.Millisecond,
		Clock: clock}
	toolOpts.HostUI = p.hostUI
	toolOpts.Sandbox = sh.procs.sandbox // procs: sandbox.go
	toolOpts.Editor, toolOpts.Exec = p.editor, p.exec
	policy := newConfirmPolicy(cwd, o.confirmBash, o.confirmOutside, o.confirmTimeout)
	if sh.deterministic {
		// Streamed partial output depends on timing; transcripts must not.
		toolOpts.StreamInterval = 0
		if o.mode == "acp" {
			// Only the first output of a command streams at once (the
			// leading edge; a following burst would wait an hour): a
			// transcript can show bash streaming and stay deterministic.
			toolOpts.StreamInterval = time.Hour
		}
	}
	var active []engine.Tool
	var err error
	switch {
	case o.noTools:
	case o.tools != "":
		active, err = tools.Select(toolOpts, strings.Split(o.tools, ","))
		if err != nil {
			return engine.Config{}, nil, fmt.Errorf("--tools: %w", err)
		}
	default:
		active = tools.Builtins(toolOpts)
	}
	// Extensions start here, in parallel, once the session's identity is
	// known; their tools join the built-ins (a taken name is refused).
	validator := schema.New()
	extHost, extTools := setupExtensions(o, cwd, active, validator, rec.id, rec.file, clock, sh.procs.project, stderr)
	active = append(active, extTools...)
	var hooks engine.Hooks
	var commands []engine.CommandSource
	if extHost != nil {
		// Its commands come first in every listing, as in the family.
		hooks, commands = extHost, []engine.CommandSource{extHost}
	}
	promptOpts := engine.SystemPromptOptions{
		Tools: active, Cwd: cwd, OS: runtime.GOOS, Now: clock.NowMillis(),
		Custom: textOrFile("--system-prompt", o.systemPrompt, stderr), Append: textOrFile("--append-system-prompt", o.appendSystemPrompt, stderr),
	}
	sysPrompt := engine.BuildSystemPrompt(promptOpts)
	// The resources, once read, and every change of the tool set
	// (set_host_tools, MCP servers) rebuild the prompt.
	rebuildPrompt := func(p engine.PromptParts) string {
		po := promptOpts
		po.Tools, po.Context, po.Skills, po.Rules = p.Tools, p.Context, p.Skills, p.Rules
		return engine.BuildSystemPrompt(po)
	}

	var gate func(context.Context, engine.ToolCall) *engine.ToolResult
	if policy != nil {
		gate = policy.gate
	}
	var toolSources []engine.ToolSource
	if p.mcp != nil {
		toolSources = append(toolSources, p.mcp)
	}
	ms := sh.ms
	cfg := engine.Config{
		Provider: ms.provider, Model: ms.model, ThinkingLevel: sh.thinking, Tools: active, Thinking: thinkingPolicy{},
		Models: registryModels{ms.reg, sessionfile.AgentDir(os.Getenv)}, Scoped: ms.scoped, Files: rec.files(cwd, clock, stderr), Exporter: export.Exporter{},
		RebuildPrompt: rebuildPrompt, LoadResources: resourceLoader(o, cwd, os.Getenv, stderr), ToolSources: toolSources, AnnounceName: truthy(os.Getenv("PI_RPC_EMIT_TITLE")), Gate: gate,
		Validator: validator, Shell: shellexec.Shell{Cwd: cwd},
		SystemPrompt: sysPrompt, Clock: clock, IDs: sh.ids, Hooks: hooks, Commands: commands, Log: stderr,
		SessionID: rec.id, SessionFile: rec.file, Store: rec.initialStore(), OrderedResults: sh.deterministic,
		RetryBaseDelay: o.retryBaseDelay, StreamIdleTimeout: idleTimeout(o.streamIdleTimeout), MaxTurns: o.maxTurns,
		TodoClearDelay: clearDelay(o.todoClearDelay), Cwd: cwd,
	}
	o.budget.configure(&cfg) // budgetflags.go
	cfg.Tracer = sh.tracer
	cfg.Compaction.Disabled = o.noAutoCompaction
	return cfg, extHost, nil
}

// runRPC serves the RPC protocol on stdin and stdout until stdin closes,
// a signal arrives or the host goes away.
func runRPC(ctx context.Context, o *options, a *agentSetup, stdin io.Reader, stdout, stderr io.Writer) error {
	var live *sessions.Live
	var full func(int) bool
	if f, ok := stdout.(*os.File); ok {
		full = pipeFull(f)
	}
	srv := rpc.NewServer(stdout, rpc.Options{
		Version: version, SchemaHash: rpcschema.SchemaHash, MaxLineBytes: o.maxLineBytes, Updates: o.rpcUpdates, Log: stderr,
		GrowOutput: func() {
			if f, ok := stdout.(*os.File); ok {
				growPipe(f)
			}
		},
		// The extensions' load failures come right after ready.
		Started:    func() { live.Begin() },
		OutputFull: full,
	})
	live, err := a.open(sessions.Front{Sink: srv, Host: srv})
	if err != nil {
		return err
	}
	srv.Attach(live.Engine())

	ctx, stop := serveSignals(ctx)
	defer stop()
	ctx, unwatch := endWhenOutputGone(ctx, stdout, rpc.ErrOutputClosed, stderr)
	defer unwatch()

	// The server runs the executor itself (its EOF drain); the host then
	// stops the extensions and MCP servers and closes the store.
	err = srv.Run(ctx, stdin)
	live.Close(false)
	killChildren()
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

// clearDelay maps the flag (0: at once) to the engine's setting (0: the
// default).
func clearDelay(d time.Duration) time.Duration {
	if d == 0 {
		return time.Nanosecond
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

// parseThinking reads a --thinking value: off or an effort.
func parseThinking(v string) (engine.ThinkingLevel, bool) {
	if v == string(engine.ThinkingOff) {
		return engine.ThinkingOff, true
	}
	return engine.ParseEffort(v)
}

// endWhenOutputGone derives a context that ends, with closed (wrapping
// EPIPE) as its cause, when the host closes its end of out: the run is
// then aborted and the process exits as after a failed write, even when
// nothing is being written (a long command).
func endWhenOutputGone(parent context.Context, out io.Writer, closed error, stderr io.Writer) (context.Context, func()) {
	f, ok := out.(*os.File)
	if !ok {
		return parent, func() {}
	}
	gone, stopWatch := watchOutput(f)
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-gone:
			fmt.Fprintln(stderr, "xcsh: the host closed stdout; exiting")
			cancel(fmt.Errorf("%w: %w", closed, syscall.EPIPE))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { stopWatch(); cancel(nil) }
}

// serveSignals derives the context a protocol server runs under: SIGINT,
// SIGTERM and SIGHUP cancel it with a signalError. Handling SIGPIPE (not
// ignoring it: an ignored signal stays ignored in the children we exec)
// makes a write to a closed stdout return EPIPE instead of killing the
// process, so the server can abort the run, kill the children and exit
// with its own status (exitEPIPE). stop undoes it all.
func serveSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	go func() {
		select {
		case sig := <-sigs:
			cancel(signalError{sig.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(pipes)
		signal.Stop(sigs)
		cancel(nil)
	}
}
