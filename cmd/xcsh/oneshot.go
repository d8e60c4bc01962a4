package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/rpc/oneshot"
)

// maxPipedStdin bounds what print and json modes read from a piped stdin
// (the RPC line cap's size).
const maxPipedStdin = 64 << 20

// runOneShot runs print mode (-p) or json mode: the prompts are the
// arguments, the first one preceded by piped stdin as the family merges
// it. Exit status: 0, 1 when the run failed (the error on stderr), 3 when
// it stopped on a budget, 4 when its answer never matched the output
// schema, 128+n after signal n (the run aborted first).
func runOneShot(ctx context.Context, mode string, lean bool, budget *budgetFlags, args []string, a *agentSetup, stdin io.Reader, stdout, stderr io.Writer) error {
	for _, arg := range args {
		if strings.HasPrefix(arg, "@") {
			return &exitError{2, "Error: @file arguments are not supported; pipe the file in (xcsh -p \"prompt\" < file)"}
		}
	}
	prompts := append([]string(nil), args...)
	if piped(stdin) {
		b, err := io.ReadAll(io.LimitReader(stdin, maxPipedStdin+1))
		if err != nil {
			return &exitError{2, "Error: reading stdin: " + err.Error()}
		}
		if len(b) > maxPipedStdin {
			return &exitError{2, fmt.Sprintf("Error: piped stdin is over %d MiB", maxPipedStdin>>20)}
		}
		if len(b) > 0 {
			if len(prompts) == 0 {
				prompts = []string{string(b)}
			} else {
				prompts[0] = string(b) + prompts[0]
			}
		}
	}
	if len(prompts) == 0 {
		return &exitError{2, fmt.Sprintf(`Error: no prompt: give one as an argument (xcsh %s "prompt") or pipe it in`, modeFlag(mode))}
	}
	front := oneshot.New(oneshot.Options{JSON: mode == "json", Lean: lean, Out: stdout, Log: stderr, OutputSchema: budget.schema})
	live, err := a.open(sessions.Front{Sink: front})
	if err != nil {
		return err
	}
	front.SetHeader(headerLine(live))
	live.Start()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		select {
		case sig := <-sigs:
			cancel(signalError{sig.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	live.Begin()
	// The caller's trace (TRACEPARENT, as the W3C's environment carrier
	// names it): the runs' spans join it when tracing is on.
	// (A new variable: the signal goroutine above reads ctx.)
	rctx := engine.WithTraceParent(ctx, os.Getenv("TRACEPARENT"))
	err = front.Run(rctx, live, prompts, nil)
	live.Close(false)
	killChildren()
	var se signalError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &exitError{128 + int(se.sig), ""}
	case errors.Is(err, oneshot.ErrOutput):
		fmt.Fprintln(stderr, "xcsh:", err)
	}
	if code, ok := budget.exitStatus(err); ok {
		return &exitError{code, ""} // the front has said why on stderr
	}
	return &exitError{1, ""} // the front has said why on stderr
}

// piped reports whether stdin is a pipe or a file (not a terminal, not
// absent), as the family decides whether to read it.
func piped(stdin io.Reader) bool {
	if stdin == nil {
		return false
	}
	fi, err := os.Stdin.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice == 0 && (fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular())
}

func modeFlag(mode string) string {
	if mode == "json" {
		return "--mode json"
	}
	return "-p"
}

// headerLine is the session header json mode starts with: the file's, or
// one for an in-memory session.
func headerLine(live *sessions.Live) []byte {
	p := live.Parts()
	st := p.Config.Store
	if p.Resume != nil {
		st = p.Resume.Store
	}
	var h sessionfile.Header
	if fs, ok := st.(*sessionfile.Store); ok {
		h = fs.Header()
	} else {
		h = sessionfile.Header{Version: sessionfile.Version, ID: live.ID(), Timestamp: p.Config.Clock.NowMillis(), Cwd: live.Cwd()}
	}
	return h.AppendJSON(nil)
}

var _ engine.Sink = (*oneshot.Front)(nil)
