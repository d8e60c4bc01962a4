package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/rpc"
	"github.com/xcsh-go/xcsh/rpc/acp"
	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
	"github.com/xcsh-go/xcsh/rpc/serve"
)

// serveOptions are the flags of xcsh serve, beside every session flag of
// the root command.
type serveOptions struct {
	stdio      bool
	listen     []string
	token      string
	evictAfter time.Duration
	keepEvents int
}

// newServeCmd is `xcsh serve`: the agent server (docs/server.md). It takes
// the root command's flags for the sessions it builds.
func newServeCmd(root *cobra.Command, o *options, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	so := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "serve many sessions to many clients (Unix socket, WebSocket or stdio)",
		Long: `xcsh serve is one long-lived agent process that owns many sessions and serves them
to many clients at once: each speaks the RPC protocol of --mode rpc, with a sessionId on
the commands and frames of the sessions it opens or attaches to. Every event of a session
is numbered; a client that lost its connection attaches again from its cursor and
replays what it missed. A client without any sessionId gets a session of its own and
the frames of --mode rpc, unchanged. With --temporal ADDRESS (a binary built with
-tags temporal), clients also open and attach durable sessions, which run on Temporal
workers and which any server of the same service serves (open_session {"durable":true}).

Documentation: docs/server.md.`,
		Example: `  # The default Unix socket (~/.xcsh/agent/xcsh.sock), the fake demo model
  xcsh serve --provider fake

  # WebSocket on loopback, with a token (also from XCSH_SERVE_TOKEN)
  xcsh serve --listen ws://127.0.0.1:8787 --token s3cret

  # One client on stdin and stdout, as --mode rpc
  xcsh serve --stdio --provider fake`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), o, so, stdin, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&so.stdio, "stdio", false, "serve one client on stdin and stdout (as --mode rpc)")
	f.StringArrayVar(&so.listen, "listen", nil, "unix:PATH or ws://HOST:PORT for RPC clients, acp+unix:PATH or acp+ws://HOST:PORT for ACP clients (repeatable; default unix:<agent dir>/xcsh.sock)")
	f.StringVar(&so.token, "token", "", "the token every TCP client must present (default $XCSH_SERVE_TOKEN); required for ws://")
	f.DurationVar(&so.evictAfter, "evict-after", 10*time.Minute, "an idle session no client watches leaves memory after this long (0: never); attach reopens it")
	f.IntVar(&so.keepEvents, "keep-events", 20000, "frames each session keeps for replay")
	f.AddFlagSet(root.Flags())
	return cmd
}

// runServe starts the server on its transports and serves until a signal.
func runServe(ctx context.Context, o *options, so *serveOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	defer stopTracing(&o.otel, stderr) // the last spans, whatever the exit
	o.mode = "serve"
	if err := o.budget.check(o.mode); err != nil { // budgetflags.go
		return err
	}
	if o.rpcUpdates != rpc.UpdatesFull && o.rpcUpdates != rpc.UpdatesDelta {
		return &exitError{2, fmt.Sprintf("Error: invalid --rpc-updates %q (expected full or delta)", o.rpcUpdates)}
	}
	if so.token == "" {
		so.token = os.Getenv("XCSH_SERVE_TOKEN")
	}
	clock, ids, deterministic := clockAndIDs()
	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	remote, closeRemote, err := serveRemote(o, stderr) // temporal_serve_*.go: durable sessions
	if err != nil {
		return err
	}
	defer closeRemote()
	listeners, err := serveListeners(so, stderr)
	if err != nil {
		return err
	}
	defer func() {
		for _, l := range listeners {
			l.ln.Close()
		}
	}()
	sh, err := setupShared(o, clock, ids, deterministic, true, cwd, stderr)
	if err != nil {
		return err
	}
	defer sh.ms.discovery.Wait()
	epoch := ""
	if deterministic {
		epoch = "epoch1" // a transcript is repeatable
	}
	host := newHost(o, sh, stderr)
	srv := serve.New(serve.Options{Host: host, Version: version, SchemaHash: rpcschema.SchemaHash, Cwd: cwd, Log: stderr, HostUI: o.ui,
		MaxLineBytes: o.maxLineBytes, EvictAfter: so.evictAfter, Keep: serve.Limits{Entries: so.keepEvents}, Epoch: epoch, Updates: o.rpcUpdates,
		Remote: remote})
	ctx, stop := serveSignals(ctx)
	defer stop()
	errs := make(chan error, len(listeners)+1)
	image := sh.ms.model != nil && slices.Contains(sh.ms.model.Input, "image")
	acpConn := func(ctx context.Context, r io.Reader, w io.Writer, _ func()) error {
		a := acp.NewServer(w, acp.Options{Version: version, ProtocolVersion: rpcschema.Version, SchemaHash: rpcschema.ACPSchemaHash, MaxLineBytes: o.maxLineBytes, Log: stderr, IDs: ids,
			Host: host, ImageInput: image})
		err := a.Run(ctx, r)
		if errors.Is(err, acp.ErrOutputClosed) {
			return nil // the client has gone
		}
		return err
	}
	// Said once the signals are handled: a client (or a test) that acts
	// on this line finds the server ready, and a SIGTERM ends it cleanly.
	for _, l := range listeners {
		fmt.Fprintf(stderr, "xcsh: serving on %s\n", l.name)
	}
	for _, l := range listeners {
		conn := srv.RPC(!l.http)
		if l.acp {
			conn = acpConn
		}
		go func() {
			if l.http {
				errs <- serve.ServeHTTP(ctx, l.ln, serve.WebSocket(ctx, so.token, conn, stderr))
			} else {
				errs <- serve.Accept(ctx, l.ln, conn, stderr)
			}
		}()
	}
	if so.stdio {
		go func() {
			errs <- srv.ServeConn(ctx, stdin, stdout, func() {}, serve.ConnOptions{DrainAtEOF: true, Stream: true, Lean: o.rpcUpdates == rpc.UpdatesDelta})
		}()
	}
	select {
	case err = <-errs:
	case <-ctx.Done():
	}
	srv.Shutdown(context.WithoutCancel(ctx))
	killChildren()
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return &exitError{128 + int(se.sig), ""}
	}
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	return nil
}

type serveListener struct {
	ln   net.Listener
	name string // as the user reads it
	http bool   // WebSocket; else a Unix socket
	acp  bool   // ACP clients; else RPC
}

// serveListeners opens every --listen address (the default socket when
// there is none and no --stdio). A TCP address needs a token; one without
// a host listens on loopback.
func serveListeners(so *serveOptions, stderr io.Writer) ([]serveListener, error) {
	addrs := so.listen
	if len(addrs) == 0 && !so.stdio {
		addrs = []string{"unix:" + filepath.Join(sessionfile.AgentDir(os.Getenv), "xcsh.sock")}
	}
	var out []serveListener
	fail := func(err error) ([]serveListener, error) {
		for _, l := range out {
			l.ln.Close()
		}
		return nil, &exitError{2, "Error: --listen: " + err.Error()}
	}
	for _, a := range addrs {
		l := serveListener{}
		addr := a
		if rest, ok := strings.CutPrefix(addr, "acp+"); ok {
			l.acp, addr = true, rest
		}
		switch {
		case strings.HasPrefix(addr, "unix:"):
			ln, err := serve.ListenUnix(strings.TrimPrefix(addr, "unix:"))
			if err != nil {
				return fail(err)
			}
			l.ln, l.name = ln, a
		case strings.HasPrefix(addr, "ws://"):
			if so.token == "" {
				return fail(fmt.Errorf("%s: a TCP address needs a token (--token or XCSH_SERVE_TOKEN)", a))
			}
			u, err := url.Parse(addr)
			if err != nil {
				return fail(err)
			}
			host := u.Host
			if strings.HasPrefix(host, ":") {
				host = "127.0.0.1" + host
			}
			ln, err := net.Listen("tcp", host)
			if err != nil {
				return fail(err)
			}
			l.ln, l.http = ln, true
			scheme := "ws://"
			if l.acp {
				scheme = "acp+ws://"
			}
			l.name = scheme + ln.Addr().String()
		default:
			return fail(fmt.Errorf("%q: expected unix:PATH or ws://HOST:PORT (acp+ before either serves ACP clients)", a))
		}
		out = append(out, l)
	}
	return out, nil
}
