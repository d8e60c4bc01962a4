package main

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/xcsh-go/xcsh/engine/tools"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
	"github.com/xcsh-go/xcsh/rpc/acp"
	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
)

// runACP serves the Agent Client Protocol on stdin and stdout (--mode
// acp): one engine session per ACP session, each built from the same
// flags as every mode's, in the cwd the client names.
func runACP(ctx context.Context, o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	clock, ids, deterministic := clockAndIDs()
	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	// No model yet is no error: a client's session may load one from its
	// record, and the editor shows a prompt's failure.
	sh, err := setupShared(o, clock, ids, deterministic, true, cwd, stderr)
	if err != nil {
		return err
	}
	defer sh.ms.discovery.Wait()
	if o.tools != "" && !o.noTools {
		if _, err := tools.Select(tools.Options{Cwd: cwd}, strings.Split(o.tools, ",")); err != nil {
			return &exitError{2, "Error: --tools: " + err.Error()}
		}
	}
	out := stdout
	if f, ok := stdout.(*os.File); ok && f == os.Stdout {
		g, restore, err := guardStdout(f)
		if err != nil {
			return &exitError{1, "Error: " + err.Error()}
		}
		defer restore()
		defer g.Close()
		out = g
	}
	image := sh.ms.model != nil && slices.Contains(sh.ms.model.Input, "image")
	var full func(int) bool
	if f, ok := out.(*os.File); ok {
		full = pipeFull(f)
	}
	srv := acp.NewServer(out, acp.Options{
		ProtocolVersion: rpcschema.Version, SchemaHash: rpcschema.ACPSchemaHash,
		Version: version, MaxLineBytes: o.maxLineBytes, Log: stderr, IDs: ids,
		Host: newHost(o, sh, stderr), ImageInput: image,
		OutputFull: full,
	})

	ctx, stop := serveSignals(ctx)
	defer stop()
	ctx, unwatch := endWhenOutputGone(ctx, out, acp.ErrOutputClosed, stderr)
	defer unwatch()
	err = srv.Run(ctx, stdin)
	killChildren()
	var se signalError
	switch {
	case errors.As(err, &se):
		return &exitError{128 + int(se.sig), ""}
	case errors.Is(err, acp.ErrOutputClosed):
		if errors.Is(err, syscall.EPIPE) {
			return &exitError{exitEPIPE, ""}
		}
		return &exitError{1, ""}
	}
	return err
}

// terminalExec runs bash's commands in the client's terminals.
func terminalExec(t *acp.Terminal) tools.Exec {
	return func(ctx context.Context, command string, o shellexec.Options) (shellexec.Result, error) {
		r, err := t.Run(ctx, command, acp.RunOptions{Cwd: o.Cwd, Env: o.Env, Timeout: o.Timeout, MaxBytes: o.MaxBytes})
		if err != nil {
			return shellexec.Result{}, err
		}
		res := shellexec.Result{Output: r.Output, ExitCode: r.ExitCode, Exited: r.Exited, Cancelled: r.Cancelled,
			TimedOut: r.TimedOut, Truncated: r.Truncated, TotalBytes: len(r.Output)}
		if r.Output != "" {
			res.TotalLines = strings.Count(r.Output, "\n") + 1
		}
		return res, nil
	}
}
