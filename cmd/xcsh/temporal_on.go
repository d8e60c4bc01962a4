//go:build temporal

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/durable"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
	"github.com/xcsh-go/xcsh/rpc"
	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
)

// The durable sessions of docs/durable.md: this file is in the binary
// built with -tags temporal (temporal_off.go says why the default one
// leaves them out).

func newWorkerCmd(root *cobra.Command, o *options, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker [flags]",
		Short: "run durable sessions as Temporal workflows",
		Long: `xcsh worker runs sessions as Temporal workflows: each model call and each tool call
is a recorded step, so a session outlives any worker. Start as many workers as you like on
the same task queue; a host drives a session with xcsh --mode rpc --temporal ADDRESS
--session ID. The agent flags (--provider, --model, --tools, ...) configure the sessions
this worker runs.

Documentation: docs/durable.md.`,
		Example: `  # A local dev server (temporal server start-dev) and the fake demo model
  xcsh worker --temporal 127.0.0.1:7233 --provider fake`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd.Context(), o, stderr)
		},
	}
	cmd.Flags().AddFlagSet(root.Flags())
	return cmd
}

// temporalClient dials the Temporal service the flags name; the SDK's
// own log goes to stderr, warnings and worse only (stdout is the
// protocol's).
func temporalClient(t *temporalFlags, stderr io.Writer) (client.Client, error) {
	addr := t.address
	if addr == "" {
		addr = "127.0.0.1:7233"
	}
	opts := client.Options{HostPort: addr, Namespace: t.namespace, DataConverter: durable.DataConverter(),
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))}
	key := t.apiKey
	if key == "" {
		key = os.Getenv("TEMPORAL_API_KEY")
	}
	var tc *tls.Config
	if t.tlsCert != "" || t.tlsKey != "" {
		cert, err := tls.LoadX509KeyPair(t.tlsCert, t.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--temporal-tls-cert/--temporal-tls-key: %w", err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	if t.tlsCA != "" {
		pem, err := os.ReadFile(t.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--temporal-tls-ca: %w", err)
		}
		if tc == nil {
			tc = &tls.Config{}
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--temporal-tls-ca: no certificate in %s", t.tlsCA)
		}
	}
	if key != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
		if tc == nil {
			tc = &tls.Config{}
		}
	}
	opts.ConnectionOptions.TLS = tc
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", addr, t.namespace, err)
	}
	return c, nil
}

func (t *temporalFlags) start() durable.Start {
	return durable.Start{HeartbeatMs: t.heartbeat.Milliseconds()}
}

// runWorker serves the task queue until a signal.
func runWorker(ctx context.Context, o *options, stderr io.Writer) error {
	o.mode = "worker"
	clock, ids, deterministic := clockAndIDs()
	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	sh, err := setupShared(o, clock, ids, deterministic, false, cwd, stderr)
	if err != nil {
		return err
	}
	defer sh.ms.discovery.Wait()
	rec, err := newRecord("", cwd, clock, ids)
	if err != nil {
		return err
	}
	cfg, ext, err := sh.sessionConfig(o, sessionParts{cwd: cwd, rec: rec, hostUI: o.ui}, stderr)
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	defer stopExtensions(ext, stderr)
	if cfg.Model == nil {
		return &exitError{2, "Error: the worker needs a model: --provider or --model"}
	}
	// The extensions' hooks on a prompt run before its run starts, where
	// a durable session has no step for them yet: refusing to start beats
	// sending prompts an extension meant to change or stop (the other
	// hooks run in the steps: docs/durable.md, "Extensions").
	if cfg.Hooks != nil {
		for _, h := range []struct {
			hook engine.Hook
			name string
		}{{engine.HookInput, "input"}, {engine.HookBeforeAgentStart, "before_agent_start"}} {
			if cfg.Hooks.Has(h.hook) {
				return &exitError{2, "Error: an extension handles " + h.name + ", which durable sessions do not run yet (docs/durable.md, \"Extensions\"): start the worker without it (--no-extensions, or without its --extension)"}
			}
		}
	}
	c, err := temporalClient(&o.temporal, stderr)
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	defer c.Close()
	sysPrompt, rules := workerSetup(ctx, cfg) // temporal_setup.go: the context files, skills and rules
	acts := &durable.Activities{Provider: cfg.Provider, Model: *cfg.Model, SystemPrompt: sysPrompt,
		Thinking: cfg.ThinkingLevel, Tools: cfg.Tools, Validator: cfg.Validator, Compaction: cfg.Compaction, Clock: clock,
		AfterTool: afterToolRun, Gate: cfg.Gate, // the confirmations: the workflow asks (docs/durable.md, "Dialogs")
		Hooks: cfg.Hooks, // the extensions' hooks that run in the steps
		Rules: rules, Cwd: cwd, StreamIdleTimeout: cfg.StreamIdleTimeout, TodoClearDelay: cfg.TodoClearDelay}
	if cfg.ThinkingLevel != "" && !cfg.Model.Reasoning {
		acts.Thinking = engine.ThinkingOff
	}
	n := max(o.temporal.concurrency, 1)
	w := worker.New(c, o.temporal.taskQueue, worker.Options{MaxConcurrentActivityExecutionSize: n,
		MaxConcurrentWorkflowTaskExecutionSize: max(n/4, 2), WorkerStopTimeout: 5 * time.Second})
	acts.Register(w)
	if err := w.Start(); err != nil {
		return &exitError{1, "Error: start the worker: " + err.Error()}
	}
	// The readiness line a supervisor (or a test) waits for.
	fmt.Fprintf(stderr, "xcsh worker: serving task queue %s on %s\n", o.temporal.taskQueue, o.temporal.addressOrDefault())
	ctx, stop := serveSignals(ctx)
	defer stop()
	<-ctx.Done()
	w.Stop()
	killChildren()
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return &exitError{128 + int(se.sig), ""}
	}
	return nil
}

func (t *temporalFlags) addressOrDefault() string {
	if t.address == "" {
		return "127.0.0.1:7233"
	}
	return t.address
}

// runTemporalFront serves --mode rpc for the durable session --session
// names.
func runTemporalFront(ctx context.Context, o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	if o.session == "" {
		return &exitError{2, "Error: --temporal needs --session ID: the durable session to drive (any name; a new one starts)"}
	}
	c, err := temporalClient(&o.temporal, stderr)
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	defer c.Close()
	ctx, stop := serveSignals(ctx)
	defer stop()
	err = durable.RunFront(ctx, durable.FrontOptions{Client: c, TaskQueue: o.temporal.taskQueue, Session: o.session,
		Since: o.temporal.since, Listen: o.temporal.listen, Version: version, SchemaHash: rpcschema.SchemaHash, Start: o.temporal.start(),
		HostToolDefs: rpc.HostToolDefs, HostToolReply: rpc.HostToolReply, DialogReply: rpc.DialogReply, TodoList: rpc.TodoList, Validator: schema.New(),
		ExportHTML: durableExportHTML}, stdin, stdout)
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	return nil
}

// temporalBuilt says whether this binary has durable sessions (the
// scenarios' [temporal] condition).
const temporalBuilt = true
