package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/childenv"
	"github.com/xcsh-go/xcsh/engine/extension"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// setupExtensions finds the session's extensions (--extension, the
// settings lists, .xcsh/extensions/, <agentDir>/extensions/; only the
// first with --no-extensions), starts them and waits for their handshakes
// (each bounded by its deadline, so ready is never held longer). It
// returns nil and no tools when there are none: then nothing of the
// extension machinery exists in the session. validator checks the schemas
// of the extensions' tools (the session's own, so what it compiles serves
// the calls).
//
// Under a sandbox, project decides what of the project's own extensions
// runs (trust.go).
func setupExtensions(o *options, cwd string, active []engine.Tool, validator engine.Validator, sessionID, sessionFile string,
	clock engine.Clock, project *projectPolicy, stderr io.Writer) (*extension.Host, []engine.Tool) {
	specs, problems := project.extensions(extension.Discover(extension.Where{Cwd: cwd, AgentDir: sessionfile.AgentDir(os.Getenv),
		Paths: o.extensions, NoDiscovery: o.noExtensions}))
	if len(specs) == 0 && len(problems) == 0 {
		return nil, nil
	}
	flags := map[string]string{}
	for _, f := range o.extensionFlags {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			v = "true"
		}
		flags[k] = v
	}
	host := extension.New(extension.Options{Specs: specs, Problems: problems, Version: version, Cwd: cwd,
		Env: extensionEnv(), Flags: flags, Clock: clock, Log: stderr, HasUI: (o.mode == "rpc" || o.mode == "acp" || o.mode == "serve") && !o.print,
		Sessionless: o.mode == "worker", Validator: validator})
	return host, host.Load(context.Background(), active, sessionID, sessionFile)
}

// extensionEnv is the environment extensions start with: the agent's,
// without the provider keys (childenv, as every child's is built).
func extensionEnv() []string { return childenv.Environ() }

// extensionShutdownBound bounds stopping every extension on exit (each
// gets session_shutdown, stdin EOF, TERM and KILL, a second apart).
const extensionShutdownBound = 5 * time.Second

// stopExtensions stops the extensions, bounded; nil stops nothing.
func stopExtensions(host *extension.Host, stderr io.Writer) {
	if host == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), extensionShutdownBound)
	defer cancel()
	host.Shutdown(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "xcsh: extensions did not stop in time")
	}
}
